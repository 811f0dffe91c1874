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
//  * Warp 0 is the producer: lane 0 issues the two TMA loads of a unit, the 32 lanes copy
//    its 64 scales (cp.async, zero past N) and arrive on the stage's full barrier when they
//    land. Warps 1-4 are the consumers, 16 rows of the tile each: per group a thread reads
//    32 bytes of each of its two weight rows and of each of its MT q rows (the MMA's k order
//    permuted to match, as the register-fed small kernel does: a group sum is order-free)
//    and issues 4 MT mma.sync m16n8k32 into exact int32 group sums; then it frees the stage
//    and promotes each group in order: facc = fma(float(sum), scale[n, g], facc).
//  * The split adapts during the launch: the first units are split into P contiguous runs,
//    the rest (IGT_DYN per cent) into pieces of IGT_PIECE units that the CTAs claim from a
//    counter as their rings free, so a CTA whose loads land late takes fewer of them. The
//    pieces are fixed by the shape and P (piece p < P is CTA p's run, pieces P, P + 1, ...
//    the claimed ones); only which CTA runs which is decided at run time.
//  * Where a piece covers a tile whole, the CTA applies vth and bias and stores out. A tile
//    shared by several pieces is finished by the last of them to arrive: each writes its
//    partial sums to its own slot of ws (two a piece: its first tile and its last), and
//    counts itself in counters[tile] with a release atomic; the one that counts last (it
//    reads the atomic's answer one segment later, so no thread waits for it) adds every
//    slot in the order of the pieces (the same bits whatever the timing), stores out and
//    zeroes the count for the next launch. No CTA ever waits for another.
// The swizzle (TMA's 128-byte, box rows of 128 bytes) puts the 16-byte chunk c of row r at
// (c ^ (r % 8)): a quarter-warp's 8 loads (two rows, chunks 2 t + u) fall in 8 different
// chunks, so no bank conflicts.
#pragma once

#include "igemm_sm90.cuh"
#include "igemm_small.cuh"  // mma16832

// 1 loads a whole tile's vth and bias into registers when its first unit starts, so its
// epilogue does not begin with a round trip after the last unit; 0 reads them at the store
// (kernels/NOTES.md: 650 cycles off the last epilogue, by the trace). A shared tile's last
// arriver loads them beside the partials.
#ifndef IGT_EPI_EARLY
#define IGT_EPI_EARLY 1
#endif
// Percent of the units claimed at run time (the rest split into P contiguous runs), and
// units a claimed piece (kernels/NOTES.md). The workspace the host plans holds the pieces of
// any build within these bounds (plugins/int_gemm.py restates them).
#ifndef IGT_DYN
#define IGT_DYN 25
#endif
#ifndef IGT_PIECE
#define IGT_PIECE 2
#endif
static_assert(IGT_DYN >= 0 && IGT_DYN <= 50, "IGT_DYN: 0 to 50 per cent");
static_assert(IGT_PIECE >= 1, "IGT_PIECE: at least one unit");
// A diagnostic build (1): each CTA stamps %globaltimer (ns) and clock64 (cycles) at its
// milestones into int_gemm_stream_trace[CTA][slot] (IGT_SLOTS globaltimer words, then
// IGT_SLOTS clock words): 0 entry, 1 the first TMA issued, 2 the first unit landed, 3 the
// last unit landed, 4 the end of its last segment begun, 5 its last store issued (3-5 are
// stamped at every unit or segment: the last stamp stays); and the SM the CTA runs on
// (%smid) as globaltimer word 6. The same results; only the stamps' stores are added.
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
constexpr int ST_K = 128;                      // k a unit: one group, one swizzled box row
constexpr int ST_W_BYTES = ST_ROWS * ST_K;     // 8 KB
constexpr int ST_CONSUMERS = 4;                // consumer warps
constexpr int ST_THREADS = 32 * (1 + ST_CONSUMERS);
// The most CTAs a launch takes (the host plans the workspace for them).
constexpr int ST_MAX_CTAS = 256;

// Shared memory of the stream kernel: STAGES units of GROUPS weight boxes and GROUPS q boxes
// (each 1024-aligned for the swizzle) and GROUPS x 64 scales; the full and empty barriers;
// each stage's unit (-1: no more); two words that hand a count's answer to the consumers.
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
    static constexpr int OFF_UNIT = OFF_EMPTY + STAGES * 8;
    static constexpr int OFF_LAST = OFF_UNIT + STAGES * 4;
    static constexpr int ALLOC = OFF_LAST + 2 * 4;
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

// The pieces of a launch: units [0, S) in P contiguous runs (piece p < P), units [S, T) in
// pieces of C (piece P + j: units S + j C onwards), R pieces in all. Fixed by the shape and
// P; plugins/int_gemm.py twins it (stream_split).
struct StreamSplit {
    int T, P, S, C, R;
    __device__ __forceinline__ StreamSplit(int T_, int P_) : T(T_), P(P_), C(IGT_PIECE) {
        const int dyn = static_cast<int>(static_cast<long long>(T) * IGT_DYN / 100);
        S = max(P, T - dyn);  // every run at least one unit (the launch keeps P <= T)
        R = P + (T - S + C - 1) / C;
    }
    // The first unit of piece i (i <= R; R: T).
    __device__ __forceinline__ int first(int i) const {
        return i <= P ? stream_first(i, P, S) : min(T, S + (i - P) * C);
    }
    // The piece that holds unit u.
    __device__ __forceinline__ int owner(int u) const {
        return u < S ? stream_owner(u, P, S) : P + (u - S) / C;
    }
    // Piece i's workspace slot for tile t (whose first unit is a): 2 i where the piece starts
    // in the tile, 2 i + 1 where the tile is its last.
    __device__ __forceinline__ int slot(int i, int a) const { return 2 * i + (first(i) < a); }
};

// Add 1 to a word other CTAs read, with release semantics at GPU scope (what this CTA's
// threads wrote before a barrier this thread passed is visible before the increment is),
// and return the old value. Relaxed on the read side: a thread waits for the answer only
// where it uses it.
__device__ __forceinline__ unsigned atom_release_add1(unsigned* p) {
    unsigned old;
    asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;\n" : "=r"(old) : "l"(p) : "memory");
    return old;
}
__device__ __forceinline__ unsigned atom_acq_rel_add1(unsigned* p) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\n" : "=r"(old) : "l"(p) : "memory");
    return old;
}
__device__ __forceinline__ void fence_acq_rel_gpu() {
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}
__device__ __forceinline__ int ld_shared_s32(uint32_t addr) {
    int v;
    asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
__device__ __forceinline__ void st_shared_s32(uint32_t addr, int v) {
    asm volatile("st.shared.s32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

// The kernel body. Grid (P, 1, 1) with P <= min(T, ST_MAX_CTAS) (T: the units, below 2^31),
// one CTA an SM for the bandwidth (no CTA waits for another, so residency is not needed for
// progress); block ST_THREADS; dynamic shared memory StreamSmem<MT, STAGES, GROUPS>::ALLOC.
// tmap_w: w_q as uint8 {K, N}, box {128, 64}; tmap_q: q {K, M}, box {128, 8 MT}; both
// SWIZZLE_128B. ws: 2 R slots of ST_ROWS 8 MT floats (R: StreamSplit's pieces); counters:
// ceil(N / 64) + 2 words (the tiles', the claim's, the CTAs done), zero before the first
// launch (each launch leaves them zero).
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
    constexpr int SLOT = ST_ROWS * MP;  // floats a workspace slot
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
    const uint32_t unit_a = sbase + L::OFF_UNIT, last_a = sbase + L::OFF_LAST;

    const int ng = (K + ST_K - 1) / ST_K;   // groups (scale columns)
    const int nu = (ng + GROUPS - 1) / GROUPS;  // units a tile (the last one's groups past
                                                // ng: TMA zeros, zero scales)
    const int nt = (N + ST_ROWS - 1) / ST_ROWS;  // tiles
    const int P = gridDim.x, p = blockIdx.x;
    const StreamSplit sp(nt * nu, P);
    unsigned* claim = counters + nt;  // pieces claimed past the runs
    unsigned* done = counters + nt + 1;  // CTAs whose producer has claimed its last
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (P > sp.T) asm volatile("trap;");  // a run without a unit: the launch keeps P <= T

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            TxBarrier::init(&full[s], 1 + 32);  // the TMA's expect-tx and 32 scale lanes
            Barrier::init(&empty[s], ST_CONSUMERS);
        }
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();

    if (warp == 0) {
        // ---------------- producer ----------------
        int s = 0;
        uint32_t ph = 0;
        int i = p;  // its run first, then the pieces it claims
        while (true) {
            const int ub = sp.first(i), ue = sp.first(i + 1);
            // The next piece is claimed with this piece's last unit but one (or its only
            // unit), after that unit's loads are issued: its round trip overlaps a unit.
            const int u_claim = max(ub, ue - 2);
            unsigned next = 0, leader = 0;
            for (int u = ub; u < ue; ++u) {
                const int t = u / nu, g0 = GROUPS * (u - t * nu);
                mbar_wait(smem_u32(&empty[s]), ph ^ 1);
                if (lane == 0) {
                    if (u == sp.first(p)) IGT_STAMP(1);
                    st_shared_s32(unit_a + 4 * s, u);  // published by the arrive's release
                    TxBarrier::arrive_and_expect_tx(&full[s], L::W_STAGE + L::Q_STAGE);
#pragma unroll
                    for (int g = 0; g < GROUPS; ++g) {
                        cute::SM90_TMA_LOAD_2D::copy(tmap_w, &full[s], W_HINT,
                                                     smem + L::OFF_W + s * L::W_STAGE + g * ST_W_BYTES,
                                                     (g0 + g) * ST_K, t * ST_ROWS);
                        cute::SM90_TMA_LOAD_2D::copy(tmap_q, &full[s], Q_HINT,
                                                     smem + L::OFF_Q + s * L::Q_STAGE + g * L::Q_BYTES,
                                                     (g0 + g) * ST_K, 0);
                    }
                }
                const uint32_t dst = sbase + L::OFF_SC + s * L::SC_STAGE;
#pragma unroll
                for (int g = 0; g < GROUPS; ++g)
#pragma unroll
                    for (int j = 0; j < ST_ROWS / 32; ++j) {
                        const int r = lane + 32 * j, n = t * ST_ROWS + r, gg = g0 + g;
                        const bool ok = n < N && gg < ng;
                        cp_async_4z(dst + 4 * (g * ST_ROWS + r),
                                    scale + (ok ? static_cast<size_t>(n) * ng + gg : 0), ok);
                    }
                cp_async_arrive_noinc(&full[s]);
                // One elected lane claims (elect.sync: a lane-0 branch would make ptxas share
                // the atomic's answer over the warp at once, waiting for it here).
                if (u == u_claim && sp.R > sp.P) {
                    uint32_t elected;
                    asm volatile(
                        "{\n.reg .pred px;\nelect.sync %0|px, 0xffffffff;\nselp.u32 %1, 1, 0, px;\n}\n"
                        : "=r"(leader), "=r"(elected));
                    if (elected) next = atomicAdd(claim, 1u);
                }
                if (++s == STAGES) {
                    s = 0;
                    ph ^= 1;
                }
            }
            if (sp.R == sp.P) break;
            // The claim past the pieces ends the runs (compared unsigned: a count left over
            // from an aborted launch cannot turn into a piece).
            next = __shfl_sync(0xffffffffu, next, leader);
            if (next >= static_cast<unsigned>(sp.R - sp.P)) break;
            i = sp.P + static_cast<int>(next);
        }
        // No more pieces: a stage that says so, with the full barrier's 1 + 32 arrivals.
        mbar_wait(smem_u32(&empty[s]), ph ^ 1);
        if (lane == 0) {
            st_shared_s32(unit_a + 4 * s, -1);
            mbar_arrive(smem_u32(&full[s]));
        }
        cp_async_arrive_noinc(&full[s]);
        // The last producer to finish claiming zeroes the claim for the next launch: every
        // other has made its last claim (its answer was read) before it counted itself.
        if (lane == 0 && sp.R > sp.P && atom_acq_rel_add1(done) == static_cast<unsigned>(P - 1)) {
            *claim = 0u;
            *done = 0u;
        }
        return;
    }

    // ---------------- consumers ----------------
    const int cw = warp - 1;                 // rows 16 cw .. 16 cw + 15 of the tile
    const int gq = lane / 4, tq = lane % 4;  // the MMA fragment's row group and thread
    const bool lead = cw == 0 && lane == 0;  // the thread that counts the CTA's partials
    // Row 16 cw + gq (and + 8) of a weight box, row gq + 8 j of a q box: each row's r % 8 is
    // gq, so its chunk c sits at (c ^ gq) * 16.
    const uint32_t w_row = sbase + L::OFF_W + (16 * cw + gq) * ST_K;
    const uint32_t q_row = sbase + L::OFF_Q + gq * ST_K;
    const uint32_t sc_row = sbase + L::OFF_SC + 4 * (16 * cw + gq);
    uint32_t chunk[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) chunk[c] = static_cast<uint32_t>(((2 * tq + c) ^ gq) * 16);
    const uint32_t full_a = smem_u32(full), empty_a = smem_u32(empty);
    const int frag = (cw * 32 + lane) * FRAG;  // this thread's floats in a workspace slot

    // vth and bias for this thread's fragment of tile t, and its out[m, n]: d[e] is weight row
    // 16 cw + gq + 8 (e / 2), q row 8 j + 2 tq + e % 2.
    auto epi_load = [&](int t, float (&vz)[MT][2], float (&bz)[2]) {
        const int n_lo = t * ST_ROWS + 16 * cw + gq;
#pragma unroll
        for (int h = 0; h < 2; ++h) bz[h] = n_lo + 8 * h < N ? __ldg(bias + n_lo + 8 * h) : 0.0f;
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int m = 8 * j + 2 * tq + h;
                vz[j][h] = m < M ? __ldg(vth + m) : 0.0f;
            }
    };
    auto store_out = [&](int t, const float (&acc)[MT][4], const float (&vz)[MT][2],
                         const float (&bz)[2]) {
        const int n_lo = t * ST_ROWS + 16 * cw + gq;
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int m = 8 * j + 2 * tq + (e & 1), n = n_lo + 8 * (e >> 1);
                if (m < M && n < N)
                    out[static_cast<size_t>(m) * N + n] = __fmaf_rn(vz[j][e & 1], acc[j][e], bz[e >> 1]);
            }
    };
    // The last arriver's sum of a shared tile t: every piece's slot, lo to hi, in that order
    // (loads in batches of 16 / MT so that their round trips overlap).
    constexpr int BATCH = 16 / MT;
    auto combine = [&](int t, int lo, int hi) {
        float acc[MT][4], vz[MT][2], bz[2];
        epi_load(t, vz, bz);
        for (int r0 = lo; r0 <= hi; r0 += BATCH) {
            float4 v[BATCH][MT];
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (r0 + b <= hi) {
                    const float* part = ws + static_cast<size_t>(sp.slot(r0 + b, t * nu)) * SLOT + frag;
#pragma unroll
                    for (int j = 0; j < MT; ++j) v[b][j] = __ldcg(reinterpret_cast<const float4*>(part + 4 * j));
                }
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (r0 + b <= hi)
#pragma unroll
                    for (int j = 0; j < MT; ++j) {
                        if (r0 + b == lo) {
                            acc[j][0] = v[b][j].x, acc[j][1] = v[b][j].y;
                            acc[j][2] = v[b][j].z, acc[j][3] = v[b][j].w;
                        } else {
                            acc[j][0] += v[b][j].x, acc[j][1] += v[b][j].y;
                            acc[j][2] += v[b][j].z, acc[j][3] += v[b][j].w;
                        }
                    }
        }
        store_out(t, acc, vz, bz);
    };

    int s = 0;
    uint32_t ph = 0;
    // The shared segment this CTA counted last (its atomic's answer read at the next segment's
    // end): its tile and its pieces lo..hi; pend_t < 0: none. nb: segment ends so far (the
    // answer's word alternates, so a slow reader of one never meets the next being written).
    int pend_t = -1, pend_lo = 0, pend_hi = 0, nb = 0;
    unsigned pend_old = 0;  // the lead thread's answer
    // At a segment's end, after its partial (if any) is written: hand the pending count's
    // answer over (the last arriver acquires the others' partials, then zeroes the count),
    // then the consumers' barrier. True where this CTA arrived last at the pending tile:
    // the caller sums it (combine) once it has counted its own new partial.
    auto settle = [&]() -> bool {
        const uint32_t word = last_a + 4 * (nb & 1);
        if (lead && pend_t >= 0) {
            const bool last = pend_old == static_cast<unsigned>(pend_hi - pend_lo);
            if (last) {
                fence_acq_rel_gpu();
                counters[pend_t] = 0u;
            }
            st_shared_s32(word, last);
        }
        consumers_sync();
        ++nb;
        const bool finish = pend_t >= 0 && ld_shared_s32(word) != 0;
        pend_t = -1;
        return finish;
    };

    while (true) {
        mbar_wait(full_a + 8 * s, ph);
        int u = ld_shared_s32(unit_a + 4 * s);
        if (u < 0) break;
        const int i = sp.owner(u), ue = sp.first(i + 1);
        while (u < ue) {
            const int t = u / nu, a = t * nu;
            const int seg_end = min(ue, a + nu);
            const bool whole = u == a && seg_end == a + nu;
            float facc[MT][4];
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) facc[j][e] = 0.0f;
            float vz[MT][2], bz[2];  // a whole tile's epilogue operands
            if (IGT_EPI_EARLY && whole) epi_load(t, vz, bz);
            for (; u < seg_end; ++u) {
                mbar_wait(full_a + 8 * s, ph);
                if (IGT_TRACE && lead) {
                    if (u == sp.first(p)) IGT_STAMP(2);
                    IGT_STAMP(3);
                }
                int iacc[GROUPS][MT][4];
                float sc[GROUPS][2];
#pragma unroll
                for (int g = 0; g < GROUPS; ++g) {
                    uint4 wa[2][2], qb[MT][2];  // [row h or q tile j][chunk c]
#pragma unroll
                    for (int c = 0; c < 2; ++c) {
#pragma unroll
                        for (int h = 0; h < 2; ++h)
                            wa[h][c] = ld_shared_u4(w_row + s * L::W_STAGE + g * ST_W_BYTES +
                                                    h * 8 * ST_K + chunk[c]);
#pragma unroll
                        for (int j = 0; j < MT; ++j)
                            qb[j][c] = ld_shared_u4(q_row + s * L::Q_STAGE + g * L::Q_BYTES +
                                                    j * 8 * ST_K + chunk[c]);
                    }
                    sc[g][0] = ld_shared_f32(sc_row + s * L::SC_STAGE + g * ST_ROWS * 4);
                    sc[g][1] = ld_shared_f32(sc_row + s * L::SC_STAGE + g * ST_ROWS * 4 + 32);
#pragma unroll
                    for (int j = 0; j < MT; ++j) {
#pragma unroll
                        for (int e = 0; e < 4; ++e) iacc[g][j][e] = 0;
#pragma unroll
                        for (int c = 0; c < 2; ++c) {
                            mma16832<false, false>(iacc[g][j], wa[0][c].x, wa[1][c].x, wa[0][c].y,
                                                   wa[1][c].y, qb[j][c].x, qb[j][c].y);
                            mma16832<false, false>(iacc[g][j], wa[0][c].z, wa[1][c].z, wa[0][c].w,
                                                   wa[1][c].w, qb[j][c].z, qb[j][c].w);
                        }
                    }
                }
                // Every lane's reads of the stage are done (the MMAs took their registers): free it.
                __syncwarp();
                if (lane == 0) mbar_arrive(empty_a + 8 * s);
#pragma unroll
                for (int g = 0; g < GROUPS; ++g)  // the groups in order, as one run would add them
#pragma unroll
                    for (int j = 0; j < MT; ++j)
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            facc[j][e] = __fmaf_rn(__int2float_rn(iacc[g][j][e]), sc[g][e >> 1], facc[j][e]);
                if (++s == STAGES) {
                    s = 0;
                    ph ^= 1;
                }
            }
            if (IGT_TRACE && lead) IGT_STAMP(4);
            if (!whole) {
                // A shared tile: this piece's partial in its slot; counted after the barrier.
                float* mine = ws + static_cast<size_t>(sp.slot(i, a)) * SLOT + frag;
#pragma unroll
                for (int j = 0; j < MT; ++j)
                    *reinterpret_cast<float4*>(mine + 4 * j) = make_float4(facc[j][0], facc[j][1], facc[j][2], facc[j][3]);
            } else if (!IGT_EPI_EARLY) {
                epi_load(t, vz, bz);
            }
            const int ft = pend_t, flo = pend_lo, fhi = pend_hi;
            const bool finish = settle();  // every consumer's partial written
            if (!whole) {
                if (lead) pend_old = atom_release_add1(&counters[t]);
                pend_t = t;
                pend_lo = sp.owner(a);
                pend_hi = sp.owner(a + nu - 1);
            }
            if (finish) combine(ft, flo, fhi);
            if (whole) store_out(t, facc, vz, bz);
            if (IGT_TRACE && lead) IGT_STAMP(5);
        }
    }
    const int ft = pend_t, flo = pend_lo, fhi = pend_hi;  // the last shared segment's count
    if (settle()) combine(ft, flo, fhi);
}

}  // namespace igemm
