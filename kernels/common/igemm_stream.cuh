// The small-M path on a TMA ring (int_gemm_stream1, int_gemm_stream; SPEC "GEMM (seed step
// 6)"), for M <= 8 MT rows of int8 q, G = 128 and K % 16 == 0:
//     out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in group g} q[m, f] * w_q[n, f]) + bias[n]
//
// At small M the layer is a read of the weights: the kernel's job is to keep DRAM busy from
// the first cycle to the last. So the weights come in by TMA into a deep shared-memory ring
// (STAGES units in flight on every SM, no registers held for them), and the work is split so
// that every SM reads the same number of bytes:
//  * A unit is 64 weight rows x GROUPS x 128 k of one row tile: GROUPS groups, each an 8 KB
//    box of w_q with q's MP = 8 MT rows x 128 k (rows past M and k past K: TMA zero-fill)
//    and the tile's 64 scales of the group. The T = ceil(N / 64) ceil(K / (128 GROUPS))
//    units are numbered tile by tile, and CTA p of P (one an SM, persistent) takes the
//    contiguous run [p T / P, (p + 1) T / P) ("stream-K"): at most one unit's difference
//    between SMs, whatever N.
//  * Warp 0 is the producer: lane 0 issues the 2 GROUPS TMA loads of a unit (w_q and q a
//    group), the 32 lanes copy its 64 GROUPS scales (cp.async, zero past N or K) and arrive
//    on the stage's full barrier when they land. Warps 1-4 are the consumers, 16 rows of the tile each: per group a thread reads
//    32 bytes of each of its two weight rows and of each of its MT q rows (the MMA's k order
//    permuted to match, as the register-fed small kernel does: a group sum is order-free)
//    and issues 4 MT mma.sync m16n8k32 into exact int32 group sums; then it frees the stage
//    and promotes each group in order: facc = fma(float(sum), scale[n, g], facc).
//  * Where a CTA's run covers a tile whole, it applies vth and bias and stores out. A tile
//    shared by several runs (at most the first and the last tile of each) is finished by
//    its head, the run holding its first unit, which reaches it at the end of its run: the
//    others (tails, whose runs start in it) did their share first thing, left their partial
//    sums in ws (slot p) and counted themselves in counters[tile]. The head waits for the
//    count (in practice it is complete), adds the partials in the order of p (the same
//    bits whatever the timing), stores out and zeroes the count for the next launch. Where
//    its one tail's run goes on past the tile, the tail finished its share long before the
//    head starts the tile: the head reads the count and the partial then (IGT_HEAD_EARLY),
//    and its last unit is followed by the store alone.
// The swizzle (TMA's 128-byte, box rows of 128 bytes) puts the 16-byte chunk c of row r at
// (c ^ (r % 8)): a quarter-warp's 8 loads (two rows, chunks 2 t + u) fall in 8 different
// chunks, so no bank conflicts.
#pragma once

#include "igemm_sm90.cuh"
#include "igemm_small.cuh"  // mma16832

// 1 loads a tile's vth and bias into registers when its first unit starts, so the epilogue
// does not begin with a DRAM round trip after the last unit; 0 reads them at the store
// (kernels/NOTES.md: 650 cycles off the last epilogue, by the trace).
#ifndef IGT_EPI_EARLY
#define IGT_EPI_EARLY 1
#endif
// 1: the head of a shared tile whose one tail finishes its share early (its run goes on past
// the tile) reads the tail's count, and then its partial, when it starts the tile, not after
// its last unit: the two L2 round trips overlap its units (kernels/NOTES.md). Where the count
// is not complete yet, the head waits for it after its last unit, as with 0.
#ifndef IGT_HEAD_EARLY
#define IGT_HEAD_EARLY 1
#endif
// The early read is tried where the head reaches the tile this many units after its tail's
// share would be done (the tail's partial stores and count, ~1 us, are about 2 units).
#ifndef IGT_HEAD_MARGIN
#define IGT_HEAD_MARGIN 2
#endif
// 1: every consumer lane arrives on the stage's empty barrier for its own reads (a release
// each, as CUTLASS's consumers do where a CTA frees only its own stages); 0: lane 0 after
// __syncwarp. The same order by the PTX memory model; compute-sanitizer's racecheck
// reported the 0 build's scales (their cp.async against lanes 1-31's reads) where the ring
// wraps (kernels/NOTES.md).
#ifndef IGT_ARRIVE_LANES
#define IGT_ARRIVE_LANES 1
#endif
static_assert(IGT_ARRIVE_LANES == 0 || IGT_ARRIVE_LANES == 1, "IGT_ARRIVE_LANES: 0 or 1");
// A diagnostic build (1): each CTA stamps %globaltimer (ns) and clock64 (cycles) at its
// milestones into int_gemm_stream_trace[CTA][slot] (IGT_SLOTS globaltimer words, then
// IGT_SLOTS clock words): 0 entry, 1 the first TMA issued, 2 the first unit landed, 3 the
// last unit landed, 4 its last tile's epilogue begun (a head: its tails' partials counted),
// 5 the last store issued; and the SM the CTA runs on (%smid) as globaltimer word 6. The same
// results; only the stamps' stores are added.
#ifndef IGT_TRACE
#define IGT_TRACE 0
#endif
#define IGT_SLOTS 8
#if IGT_TRACE
__device__ unsigned long long int_gemm_stream_trace[256 * 2 * IGT_SLOTS];
#define IGT_STAMP(slot)                                                                      \
    do {                                                                                     \
        unsigned long long t_;                                                               \
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));                               \
        int_gemm_stream_trace[blockIdx.x * 2 * IGT_SLOTS + (slot)] = t_;                     \
        int_gemm_stream_trace[blockIdx.x * 2 * IGT_SLOTS + IGT_SLOTS + (slot)] = clock64();  \
    } while (0)
#else
#define IGT_STAMP(slot) \
    do {                \
    } while (0)
#endif

namespace igemm {

constexpr int ST_ROWS = 64;                    // weight rows a unit: 4 consumer warps x 16
constexpr int ST_K = 128;                      // k a group: one swizzled box row
constexpr int ST_W_BYTES = ST_ROWS * ST_K;     // 8 KB
constexpr int ST_CONSUMERS = 4;                // consumer warps
constexpr int ST_THREADS = 32 * (1 + ST_CONSUMERS);
// The workspace's capacity in CTAs: the launch takes no more (ws: ST_MAX_CTAS ST_ROWS MP
// floats).
constexpr int ST_MAX_CTAS = 256;

// Shared memory of the stream kernel: STAGES units of GROUPS weight boxes and GROUPS q boxes
// (each 1024-aligned for the swizzle) and GROUPS x 64 scales; the full and empty barriers.
template <int MT, int STAGES, int GROUPS>
struct StreamSmem {
    static constexpr int Q_BYTES = 8 * MT * ST_K;         // a group's q box
    static constexpr int W_STAGE = GROUPS * ST_W_BYTES;   // a unit's weight boxes
    static constexpr int Q_STAGE = GROUPS * Q_BYTES;
    static constexpr int SC_STAGE = GROUPS * ST_ROWS * 4;
    static constexpr int OFF_W = 0;
    static constexpr int OFF_Q = OFF_W + STAGES * W_STAGE;
    static constexpr int OFF_SC = OFF_Q + STAGES * Q_STAGE;
    static constexpr int OFF_FULL = OFF_SC + STAGES * SC_STAGE;
    static constexpr int OFF_EMPTY = OFF_FULL + STAGES * 8;
    // No slack to align with: the dynamic buffer is the kernel's only shared variable, and
    // its __align__(1024) is checked at kernel start (trap_unless_1024_aligned).
    static constexpr int ALLOC = OFF_EMPTY + STAGES * 8;
};

// 4-byte global -> shared copy (cp.async, L1-cached: a row's next groups' scales share the
// sector); ok false: 4 zero bytes, nothing read.
__device__ __forceinline__ void cp_async_4z(uint32_t smem_dst, const void* gmem_src, bool ok) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_dst),
                 "l"(gmem_src), "r"(ok ? 4 : 0)
                 : "memory");
}
__device__ __forceinline__ uint4 ld_shared_u4(uint32_t addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
    return v;
}
__device__ __forceinline__ float ld_shared_f32(uint32_t addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
    return v;
}
// Add 1 to a word other CTAs read, with release semantics at GPU scope: what this CTA's
// threads wrote before a barrier this thread passed is visible before the increment is.
__device__ __forceinline__ void red_release_add1(unsigned* p) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;\n" ::"l"(p) : "memory");
}
// A word another CTA writes, read with acquire semantics at GPU scope.
__device__ __forceinline__ unsigned ld_acquire_u32(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
// The 128 consumer threads' own named barrier (0 is __syncthreads').
__device__ __forceinline__ void consumers_sync() {
    asm volatile("bar.sync 1, %0;\n" ::"n"(32 * ST_CONSUMERS) : "memory");
}

// The first unit of CTA p of P over T units (the product in 64 bits).
__device__ __forceinline__ int stream_first(int p, int P, int T) {
    return static_cast<int>(static_cast<long long>(p) * T / P);
}
// The CTA whose run holds unit u: the largest p with stream_first(p) <= u.
__device__ __forceinline__ int stream_owner(int u, int P, int T) {
    return static_cast<int>((static_cast<long long>(u + 1) * P + T - 1) / T - 1);
}

// The kernel body. Grid (P, 1, 1) with P <= min(T, ST_MAX_CTAS) (T: the units, below 2^31)
// and P no more than the SMs (a head waits for its tails: all must be resident); block
// ST_THREADS; dynamic shared memory StreamSmem<MT, STAGES, GROUPS>::ALLOC. tmap_w: w_q as
// uint8 {K, N}, box {128, 64};
// tmap_q: q {K, M}, box {128, 8 MT}; both SWIZZLE_128B. ws: P ST_ROWS 8 MT floats;
// counters: ceil(N / 64) words, zero before the first launch (each launch leaves them zero).
template <int MT, int STAGES, int GROUPS>
__device__ __forceinline__ void stream_kernel(const CUtensorMap* tmap_w, const CUtensorMap* tmap_q,
                                              const float* __restrict__ scale,
                                              const float* __restrict__ vth,
                                              const float* __restrict__ bias,
                                              float* __restrict__ ws,
                                              unsigned* __restrict__ counters,
                                              float* __restrict__ out, int M, int N, int K) {
    using L = StreamSmem<MT, STAGES, GROUPS>;
    constexpr int MP = 8 * MT;
    constexpr int FRAG = 4 * MT;  // a consumer thread's accumulators
    constexpr uint64_t W_HINT = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_FIRST);
    constexpr uint64_t Q_HINT = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_LAST);
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    if (threadIdx.x == 0) {
        IGT_STAMP(0);
#if IGT_TRACE
        unsigned smid_;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid_));
        int_gemm_stream_trace[blockIdx.x * 2 * IGT_SLOTS + 6] = smid_;
#endif
        // The descriptors' fetch overlaps the barriers' set-up: the first TMA waits on it.
        cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(tmap_w));
        cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(tmap_q));
    }
    trap_unless_1024_aligned(smem_raw);  // the boxes' 128-byte swizzle needs it
    uint8_t* smem = smem_raw;
    const uint32_t sbase = smem_u32(smem);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::OFF_FULL);
    uint64_t* empty = reinterpret_cast<uint64_t*>(smem + L::OFF_EMPTY);

    const int ng = (K + ST_K - 1) / ST_K;   // groups (scale columns)
    const int nu = (ng + GROUPS - 1) / GROUPS;  // units a tile (the last one's groups past
                                                // ng: TMA zeros, zero scales)
    const int T = ((N + ST_ROWS - 1) / ST_ROWS) * nu;
    const int P = gridDim.x, p = blockIdx.x;
    const int u0 = stream_first(p, P, T), u1 = stream_first(p + 1, P, T);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // A CTA without a unit would be counted as a tail that never comes: its head would wait
    // for ever. Stop instead (the launch must keep P <= T).
    if (P > T) asm volatile("trap;");

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            TxBarrier::init(&full[s], 1 + 32);  // the TMA's expect-tx and 32 scale lanes
            Barrier::init(&empty[s], (IGT_ARRIVE_LANES ? 32 : 1) * ST_CONSUMERS);
        }
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();

    if (warp == 0) {
        // ---------------- producer ----------------
        int s = 0;
        uint32_t ph = 0;
        for (int u = u0; u < u1; ++u) {
            const int t = u / nu, g0 = GROUPS * (u - t * nu);
            mbar_wait(smem_u32(&empty[s]), ph ^ 1);
            if (lane == 0) {
                if (u == u0) IGT_STAMP(1);
                TxBarrier::arrive_and_expect_tx(&full[s], L::W_STAGE + L::Q_STAGE);
#pragma unroll
                for (int i = 0; i < GROUPS; ++i) {
                    cute::SM90_TMA_LOAD_2D::copy(tmap_w, &full[s], W_HINT,
                                                 smem + L::OFF_W + s * L::W_STAGE + i * ST_W_BYTES,
                                                 (g0 + i) * ST_K, t * ST_ROWS);
                    cute::SM90_TMA_LOAD_2D::copy(tmap_q, &full[s], Q_HINT,
                                                 smem + L::OFF_Q + s * L::Q_STAGE + i * L::Q_BYTES,
                                                 (g0 + i) * ST_K, 0);
                }
            }
            const uint32_t dst = sbase + L::OFF_SC + s * L::SC_STAGE;
#pragma unroll
            for (int i = 0; i < GROUPS; ++i)
#pragma unroll
                for (int j = 0; j < ST_ROWS / 32; ++j) {
                    const int r = lane + 32 * j, n = t * ST_ROWS + r, g = g0 + i;
                    const bool ok = n < N && g < ng;
                    cp_async_4z(dst + 4 * (i * ST_ROWS + r),
                                scale + (ok ? static_cast<size_t>(n) * ng + g : 0), ok);
                }
            cp_async_arrive_noinc(&full[s]);
            if (++s == STAGES) {
                s = 0;
                ph ^= 1;
            }
        }
        return;
    }

    // ---------------- consumers ----------------
    const int cw = warp - 1;                 // rows 16 cw .. 16 cw + 15 of the tile
    const int gq = lane / 4, tq = lane % 4;  // the MMA fragment's row group and thread
    // Row 16 cw + gq (and + 8) of a weight box, row gq + 8 j of a q box: each row's r % 8 is
    // gq, so its chunk c sits at (c ^ gq) * 16.
    const uint32_t w_row = sbase + L::OFF_W + (16 * cw + gq) * ST_K;
    const uint32_t q_row = sbase + L::OFF_Q + gq * ST_K;
    const uint32_t sc_row = sbase + L::OFF_SC + 4 * (16 * cw + gq);
    uint32_t chunk[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) chunk[c] = static_cast<uint32_t>(((2 * tq + c) ^ gq) * 16);
    const uint32_t full_a = smem_u32(full), empty_a = smem_u32(empty);

    int s = 0;
    uint32_t ph = 0;
    int u = u0;
    while (u < u1) {
        const int t = u / nu;
        const int tile_end = min(u1, (t + 1) * nu);
        const bool whole = u == t * nu && tile_end == (t + 1) * nu;
        float facc[MT][4];
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) facc[j][e] = 0.0f;
        // d[e] is weight row 16 cw + gq + 8 (e / 2), q row 8 j + 2 tq + e % 2.
        const int n_lo = t * ST_ROWS + 16 * cw + gq;
        const int frag = (cw * 32 + lane) * FRAG;
        // A shared tile's first and last contributors (p_lo the head, which finishes it).
        const int p_lo = whole ? p : stream_owner(t * nu, P, T);
        const int p_hi = whole ? p : stream_owner((t + 1) * nu - 1, P, T);
        // The head's early read: one tail, whose run goes on past this tile, so it did its
        // share first thing, and the head reaches the tile at least IGT_HEAD_MARGIN units
        // after the tail's share would be done at the same pace (else the count is not
        // complete yet, and reading it would only stall). Each thread acquires the count
        // itself (the same word: one request a warp), so its partial's loads are ordered
        // after it; their registers are used only after the last unit. The timing decides
        // only when the partial is read, never what is added.
        bool early = false;
        float pre[MT][4];
        if (IGT_HEAD_EARLY && !whole && p == p_lo && p_hi == p_lo + 1 &&
            stream_first(p_hi + 1, P, T) > (t + 1) * nu &&
            u - u0 >= (t + 1) * nu - stream_first(p_hi, P, T) + IGT_HEAD_MARGIN &&
            ld_acquire_u32(&counters[t]) >= 1u) {
            early = true;
            const float* part = ws + p_hi * (ST_ROWS * MP) + frag;
#pragma unroll
            for (int j = 0; j < MT; ++j) {
                const float4 v = __ldcg(reinterpret_cast<const float4*>(part + 4 * j));
                pre[j][0] = v.x;
                pre[j][1] = v.y;
                pre[j][2] = v.z;
                pre[j][3] = v.w;
            }
        }
#if IGT_EPI_EARLY
        // Where this run finishes the tile (whole, or its head), its vth and bias now.
        float vz[MT][2], bz[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) bz[h] = n_lo + 8 * h < N ? __ldg(bias + n_lo + 8 * h) : 0.0f;
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int m = 8 * j + 2 * tq + h;
                vz[j][h] = m < M ? __ldg(vth + m) : 0.0f;
            }
#endif

        for (; u < tile_end; ++u) {
            mbar_wait(full_a + 8 * s, ph);
            if (IGT_TRACE && cw == 0 && lane == 0) {
                if (u == u0) IGT_STAMP(2);
                if (u == u1 - 1) IGT_STAMP(3);
            }
            int iacc[GROUPS][MT][4];
            float sc[GROUPS][2];
#pragma unroll
            for (int i = 0; i < GROUPS; ++i) {
                uint4 a[2][2], b[MT][2];  // [row h or q tile j][chunk c]
#pragma unroll
                for (int c = 0; c < 2; ++c) {
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        a[h][c] = ld_shared_u4(w_row + s * L::W_STAGE + i * ST_W_BYTES +
                                               h * 8 * ST_K + chunk[c]);
#pragma unroll
                    for (int j = 0; j < MT; ++j)
                        b[j][c] = ld_shared_u4(q_row + s * L::Q_STAGE + i * L::Q_BYTES +
                                               j * 8 * ST_K + chunk[c]);
                }
                sc[i][0] = ld_shared_f32(sc_row + s * L::SC_STAGE + i * ST_ROWS * 4);
                sc[i][1] = ld_shared_f32(sc_row + s * L::SC_STAGE + i * ST_ROWS * 4 + 32);
#pragma unroll
                for (int j = 0; j < MT; ++j) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) iacc[i][j][e] = 0;
#pragma unroll
                    for (int c = 0; c < 2; ++c) {
                        mma16832<false, false>(iacc[i][j], a[0][c].x, a[1][c].x, a[0][c].y,
                                               a[1][c].y, b[j][c].x, b[j][c].y);
                        mma16832<false, false>(iacc[i][j], a[0][c].z, a[1][c].z, a[0][c].w,
                                               a[1][c].w, b[j][c].z, b[j][c].w);
                    }
                }
            }
            // Every lane's reads of the stage are done (the MMAs took their registers): free it
            // (IGT_ARRIVE_LANES: each lane for its own reads, or lane 0 after __syncwarp).
            if constexpr (IGT_ARRIVE_LANES) {
                mbar_arrive(empty_a + 8 * s);
            } else {
                __syncwarp();
                if (lane == 0) mbar_arrive(empty_a + 8 * s);
            }
#pragma unroll
            for (int i = 0; i < GROUPS; ++i)  // the groups in order, as one run would add them
#pragma unroll
                for (int j = 0; j < MT; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        facc[j][e] = __fmaf_rn(__int2float_rn(iacc[i][j][e]), sc[i][e >> 1], facc[j][e]);
            if (++s == STAGES) {
                s = 0;
                ph ^= 1;
            }
        }

        // The tile's sums (of this run's groups).
        auto store_out = [&](const float (&acc)[MT][4]) {
            if (IGT_TRACE && cw == 0 && lane == 0 && u == u1) IGT_STAMP(4);
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int m = 8 * j + 2 * tq + (e & 1), n = n_lo + 8 * (e >> 1);
#if IGT_EPI_EARLY
                    if (m < M && n < N)
                        out[static_cast<size_t>(m) * N + n] =
                            __fmaf_rn(vz[j][e & 1], acc[j][e], bz[e >> 1]);
#else
                    if (m < M && n < N)
                        out[static_cast<size_t>(m) * N + n] = __fmaf_rn(vth[m], acc[j][e], bias[n]);
#endif
                }
            if (IGT_TRACE && cw == 0 && lane == 0 && u == u1) IGT_STAMP(5);
        };
        if (whole) {
            store_out(facc);
            continue;
        }
        // A shared tile. Its head (the run holding its first unit) reaches it last, at the end
        // of its run; every other contributor (a tail: the tile is where its run starts) has
        // long finished its share. So a tail leaves its partial in its slot and counts itself
        // done; the head waits for the count, then adds its own sums and the tails' in the
        // order of p: the same bits whatever the timing.
        if (p != p_lo) {
            float* mine = ws + p * (ST_ROWS * MP) + frag;
#pragma unroll
            for (int j = 0; j < MT; ++j)
                *reinterpret_cast<float4*>(mine + 4 * j) = make_float4(facc[j][0], facc[j][1], facc[j][2], facc[j][3]);
            consumers_sync();  // every consumer's partial written, then counted at once
            if (cw == 0 && lane == 0) red_release_add1(&counters[t]);
            if (IGT_TRACE && cw == 0 && lane == 0 && u == u1) {
                IGT_STAMP(4);
                IGT_STAMP(5);
            }
            continue;
        }
        if (early) {
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) facc[j][e] += pre[j][e];
        } else {
            // A tail counts itself as soon as its first tile is done, before it could wait
            // as the head of its last one, and a head waits only for higher CTAs: with every
            // CTA resident (one an SM, P no more than the SMs) each wait ends. Each thread
            // acquires the count itself (the early read may have failed in some threads only).
            while (ld_acquire_u32(&counters[t]) < static_cast<unsigned>(p_hi - p_lo)) __nanosleep(64);
            for (int r = p_lo + 1; r <= p_hi; ++r) {
                const float* part = ws + r * (ST_ROWS * MP) + frag;
#pragma unroll
                for (int j = 0; j < MT; ++j) {
                    const float4 v = __ldcg(reinterpret_cast<const float4*>(part + 4 * j));
                    facc[j][0] += v.x;
                    facc[j][1] += v.y;
                    facc[j][2] += v.z;
                    facc[j][3] += v.w;
                }
            }
        }
        // Every consumer has read the count: zero it for the next launch.
        consumers_sync();
        if (cw == 0 && lane == 0) counters[t] = 0u;
        store_out(facc);
    }
}

}  // namespace igemm
