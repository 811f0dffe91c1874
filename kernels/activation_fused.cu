// The activation path fused (SPEC steps 1-3): x -> vth, spikes, and the stats
// [qmin, qmax, o, T], with the transform decision and T made on the device. Two passes
// over x at most, nothing read back by the host, so the launches capture as one CUDA graph:
//   act_stats:  rows grid-strided over the launch's blocks (the plugin's count: at most
//               STATS_BLOCKS, or STATS_RING_BLOCKS where rows come through the ring and
//               STATS_BLOCKS would leave a block one row, the ring idle). An aligned row
//               whose STATS_STAGES copies fit STATS_RING_BYTES comes into a ring of that many
//               rows in shared memory by cp.async.bulk, the next rows' copies in flight while
//               this row is reduced (a row past the thread caches reads the rest from its
//               stage); wider aligned rows (or STATS_STAGES 0) issue the next row's loads into
//               registers before this row's block reduction (PREFETCH), so the reduction's
//               barriers do not leave the block with nothing in flight; unaligned rows
//               (F % 4 != 0) are loaded one row at a time. vth and q by threshold.cuh's row
//               quantisation, as dynamic_spikes (the same bits), q with ReciprocalQ (the same
//               q); q of every value goes to the workspace q8 as int8 (clamped: only used when
//               the whole tensor's q fits). The block's q range goes to two global words
//               (one atomic each); the last block to finish (a ticket counter) makes SPEC's
//               decision 2b and T (2d, common/decision.cuh), writes stats, and resets the
//               words for the next launch.
//   act_encode: v = q - o and the planes of the layout: LAYOUT 0 int8 planes [T, B, F]
//               (common/act_planes.cuh), LAYOUT 1 bit-packed planes (common/act_packed.cuh).
//               When q fits int8 and T <= 8 (every normal input: T = 6), q comes from q8,
//               1 byte a value instead of x's 4, over the flat [B*F] index
//               (common/act_q8.cuh). Otherwise (wide q, T > 8, or an unaligned packed row) a
//               block per row recomputes q from x and vth[b] (the same q). Where q does not
//               fit int8, that path also writes q as int32 to q_wide: the operand of the
//               layer's exact path (int_gemm_general_unfit), which stats chooses on the
//               device. Where q fits, q_wide is not written.
//   act_small:  B <= SMALL_B where act_one does not take the rows: both passes in one block
//               and one launch, no atomics; the same per-row code, so the same bits (q8 too).
//   act_one:    batch 1 on an aligned row (F % 4 == 0) of up to 128 BLOCK values: a cluster
//               of BLOCK / 32 blocks, one float4 a thread (ONE_CL); where the build allows
//               no cluster, one block of up to 1024 threads, rows up to 4 CACHE_VEC BLOCK
//               values. q kept in registers from pass 1 to pass 2 (x read once, each value
//               quantised once), the row sum in act_small's order (the same bits).
//   act_rows:   the cluster act_one on B such rows at once where B R <= 32 warps a block
//               (R = ceil(F / 4 / BLOCK)); the one-block build has none.
//   act_grid:   the two passes in one launch where every row fits a thread's cache (F % 4
//               == 0, F <= 4 CACHE_VEC BLOCK) and the rows fit GRID_ROWS a block on a grid
//               of at most GRID_MINB blocks an SM, all resident at once: each block keeps
//               its rows' q in registers (as int8 words) between pass 1 and pass 2, the q
//               range meets at a grid-wide barrier (each block polls the arrivals' count and
//               decides from the range itself), so x is read once and q8 never read back.
//               The row code is act_stats' (the same bits).
// q8 is an output: q as int8 (clamped where it does not fit, which stats tells), the operand
// the integer GEMM (int_gemm) takes, so a layer needs no decode pass.
// The module's __device__ words (act_stats' g_qmin, g_qmax and g_ticket; act_grid's g_round
// and its barrier's words) make it one launch at a time per module (per variant).
#include <cuda/ptx>
#include "threshold.cuh"
#include "reduce_int.cuh"
#include "decision.cuh"
// Pass 2's layout: out_t, encode_from_q8 (the flat path from q8) and encode_row (a block
// per row, from x).
#ifndef LAYOUT
#define LAYOUT 0
#endif
#if LAYOUT == 0
#include "act_planes.cuh"
#else
#include "act_packed.cuh"
#endif

#ifndef SMALL_B
#define SMALL_B 1  // act_small's rows: act_one, act_rows, act_grid or the two passes are faster past 1
#endif
#ifndef PREFETCH
#define PREFETCH 1  // pass 1 without the ring loads a block's next row before this row's reduction
#endif
#ifndef STATS_MINB
#define STATS_MINB 4  // pass 1's blocks an SM: registers capped at 64 (80 uncapped, 3 blocks)
#endif
#ifndef STATS_STAGES
#define STATS_STAGES 3  // pass 1's rows in shared memory a block (0: the register prefetch)
#endif
// The ring's most bytes (STATS_STAGES rows): sm_90's 227 KB a block less 4 KB for act_stats'
// static arrays; three stages hold rows of up to 19028 values (the layer's 18944).
#ifndef STATS_RING_BYTES
#define STATS_RING_BYTES 228352
#endif

__device__ int g_qmin = INT_MAX;
__device__ int g_qmax = INT_MIN;
__device__ unsigned int g_ticket = 0;

__device__ __forceinline__ signed char clamp8(int q) { return (signed char)max(-128, min(127, q)); }

// Four q as int8, each clamped to [-128, 127] (clamp8), in one word, x in the low byte. With
// QUANT4, two cvt.pack.sat (CUTLASS's int32 -> int8 x 4 conversion) instead of eight clamps
// and three byte permutes.
__device__ __forceinline__ unsigned q8_word(int4 q) {
#if QUANT4
    unsigned hi, w;
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, 0;" : "=r"(hi) : "r"(q.w), "r"(q.z));
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(w) : "r"(q.y), "r"(q.x), "r"(hi));
    return w;
#else
    return (unsigned)(unsigned char)clamp8(q.x) | (unsigned)(unsigned char)clamp8(q.y) << 8 |
           (unsigned)(unsigned char)clamp8(q.z) << 16 | (unsigned)(unsigned char)clamp8(q.w) << 24;
#endif
}

__device__ __forceinline__ void fold4(int4 q, int& lo, int& hi) {
    lo = min(lo, min(min(q.x, q.y), min(q.z, q.w)));
    hi = max(hi, max(max(q.x, q.y), max(q.z, q.w)));
}

// Pass 1 on one aligned row (F % 4 == 0) whose cache c the thread holds (load_row_cache):
// vth by threshold.cuh's row quantisation, q of every value (ReciprocalQ) folded into lo/hi
// and, when STORE, written to q8r as int8 (clamped). The part of the row past the cache is
// read from xr4 by `load` (global memory once, or the ring's copy in shared memory).
template <bool STORE, class Load = LoadOnce>
__device__ __forceinline__ float stats_row_vec(const float4 (&c)[CACHE_VEC],
                                               const float4* __restrict__ xr4, int F, float k,
                                               float* scratch, signed char* __restrict__ q8r,
                                               int& lo, int& hi, Load load = Load()) {
    return quantise_row_vec<ReciprocalQ>(c, cache_abs_sum(c), xr4, F, k, 0.0f, INFINITY, scratch,
                                         [&](int i, int4 q) {
        fold4(q, lo, hi);
        if (STORE) reinterpret_cast<unsigned*>(q8r)[i] = q8_word(q);
    }, load);
}

// Pass 1 on a row of any F (scalar loads), the same way.
template <bool STORE>
__device__ __forceinline__ float stats_row_any(const float* __restrict__ xr, int F, float k,
                                               float* scratch, signed char* __restrict__ q8r,
                                               int& lo, int& hi) {
    return quantise_row_any<ReciprocalQ>(xr, F, k, 0.0f, INFINITY, scratch, [&](int f, int q) {
        lo = min(lo, q);
        hi = max(hi, q);
        if (STORE) q8r[f] = clamp8(q);
    });
}

// Pass 1 on row b of any width, its cache loaded here (act_small, and act_stats without
// PREFETCH or on unaligned rows).
template <bool STORE>
__device__ __forceinline__ float stats_row(const float* __restrict__ x, int F, float k, int b,
                                           float* scratch, signed char* __restrict__ q8,
                                           int& lo, int& hi) {
    const size_t row = (size_t)b * (size_t)F;
    if ((F & 3) == 0) {
        const float4* xr4 = reinterpret_cast<const float4*>(x + row);
        float4 c[CACHE_VEC];
        load_row_cache(xr4, F >> 2, c);
        return stats_row_vec<STORE>(c, xr4, F, k, scratch, q8 + row, lo, hi);
    }
    return stats_row_any<STORE>(x + row, F, k, scratch, q8 + row, lo, hi);
}

// SPEC 2b (o) and 2d (T, from the integer bit length of amax) into out[0..3].
__device__ __forceinline__ void decide(int qmin, int qmax, int* out) {
    const int o = transform_offset(qmin, qmax, MODE);
    const long long amax = max(llabs((long long)qmin - o), llabs((long long)qmax - o));
    out[0] = qmin;
    out[1] = qmax;
    out[2] = o;
    out[3] = plane_count(amax, MODE);
}

// Pass 1's ring: where STATS_STAGES aligned rows (F % 4 == 0) fit STATS_RING_BYTES, a row's
// bytes come into shared memory by cp.async.bulk, STATS_STAGES rows a block, so that while
// the block quantises one row the next STATS_STAGES - 1 are in flight (the register prefetch
// holds one, and the registers of a second), and a row wider than the thread caches is read
// from DRAM once (its part past the caches from the stage, not again from global memory).
// The host gives the launch STATS_STAGES F floats of dynamic shared memory where this holds
// (activation_fused.py's stats_shared).
__device__ __forceinline__ bool stats_ring_fits(int F) {
    return STATS_STAGES > 0 && (F & 3) == 0 &&
           (long long)STATS_STAGES * F * (long long)sizeof(float) <= STATS_RING_BYTES;
}

// The rows b = blockIdx.x, + gridDim.x, ... of act_stats through the ring: row i of the block
// in stage i % STATS_STAGES, its mbarrier's phase (i / STATS_STAGES) & 1. Each thread takes
// its cache slots from the stage (the float4s load_row_cache would load: the same sums, the
// same bits). At row i thread 0 refills the stage of row i - 1 with row i + STATS_STAGES - 1.
// Where the row fits the caches, every thread read that stage before row i - 1's first
// barrier (row_threshold's), which thread 0 has passed, so the bulk copy cannot overwrite a
// slot still to be read; a wider row's part past the caches is read from the stage after
// that barrier, while quantising, so there a barrier at the start of row i comes first.
__device__ __forceinline__ void stats_ring_rows(const float* __restrict__ x,
                                                float* __restrict__ vth,
                                                signed char* __restrict__ q8, int B, int F,
                                                float k, float* scratch, int& lo, int& hi) {
#if STATS_STAGES > 0
    namespace ptx = cuda::ptx;
    extern __shared__ float4 stats_ring[];  // STATS_STAGES rows of F / 4 float4
    __shared__ uint64_t full[STATS_STAGES];
    const int n4 = F >> 2;
    const uint32_t bytes = (uint32_t)F * (uint32_t)sizeof(float);
    auto issue = [&](int i) {  // row i of the block into its stage, if the block has it
        const int b = blockIdx.x + i * gridDim.x;
        if (b >= B) return;
        uint64_t* bar = &full[i % STATS_STAGES];
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                       bar, bytes);
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global,
                           stats_ring + (i % STATS_STAGES) * n4, x + (size_t)b * F, bytes, bar);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < STATS_STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
        for (int i = 0; i < STATS_STAGES - 1; ++i) issue(i);
    }
    __syncthreads();  // the mbarriers initialised before any thread waits on one
    const bool past_caches = n4 > CACHE_VEC * BLOCK;  // the stage read after the row's barriers
    int i = 0;
    for (int b = blockIdx.x; b < B; b += gridDim.x, ++i) {
        if (past_caches && i > 0) __syncthreads();  // row i - 1's stage read whole
        if (threadIdx.x == 0) {
            // The stage refilled was read by the generic proxy (ld.shared) before the last
            // row's barrier; the bulk copy writes through the async proxy: the fence orders
            // the two proxies' accesses (what CUTLASS's TMA epilogue does before releasing
            // a buffer it read).
            if (i > 0) ptx::fence_proxy_async(ptx::space_shared);
            issue(i + STATS_STAGES - 1);
        }
        const int s = i % STATS_STAGES;
        while (!ptx::mbarrier_try_wait_parity(&full[s], (uint32_t)((i / STATS_STAGES) & 1))) {}
        const float4* row = stats_ring + s * n4;
        float4 cur[CACHE_VEC];
#pragma unroll
        for (int j = 0; j < CACHE_VEC; ++j) {
            const int idx = threadIdx.x + j * BLOCK;
            cur[j] = idx < n4 ? row[idx] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        const size_t off = (size_t)b * (size_t)F;
        const float t = stats_row_vec<true>(cur, row, F, k, scratch, q8 + off, lo, hi,
                                            LoadPlain());
        if (threadIdx.x == 0) vth[b] = t;
    }
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK, STATS_MINB)
act_stats(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          signed char* __restrict__ q8, int B, int F, float k) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32];
    __shared__ bool s_last;
#if __CUDA_ARCH__ >= 900
    // A kernel launched as this one's programmatic dependent (the layer's GEMM) may be
    // scheduled from here on: its blocks take the SMs this kernel's blocks leave and wait on
    // the device for it to end before they read q8 and vth. Without one, nothing happens.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    int lo = INT_MAX, hi = INT_MIN;
    // Rows grid-strided over the launch's blocks, at most STATS_BLOCKS (a block per row would
    // make every row's block queue three same-address atomics).
    if (stats_ring_fits(F)) {
        stats_ring_rows(x, vth, q8, B, F, k, scratch, lo, hi);
    } else if (PREFETCH && (F & 3) == 0) {
        const int n4 = F >> 2;
        float4 cur[CACHE_VEC];
        if (blockIdx.x < B)
            load_row_cache(reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * F), n4, cur);
        for (int b = blockIdx.x; b < B; b += gridDim.x) {
            // The next row's loads go out before this row's barriers.
            float4 nxt[CACHE_VEC];
            const int bn = b + gridDim.x;
            if (bn < B) load_row_cache(reinterpret_cast<const float4*>(x + (size_t)bn * F), n4, nxt);
            const size_t row = (size_t)b * (size_t)F;
            const float t = stats_row_vec<true>(cur, reinterpret_cast<const float4*>(x + row),
                                                F, k, scratch, q8 + row, lo, hi);
            if (threadIdx.x == 0) vth[b] = t;
#pragma unroll
            for (int j = 0; j < CACHE_VEC; ++j) cur[j] = nxt[j];
        }
    } else {
        for (int b = blockIdx.x; b < B; b += gridDim.x) {
            const float t = stats_row<true>(x, F, k, b, scratch, q8, lo, hi);
            if (threadIdx.x == 0) vth[b] = t;
        }
    }
    block_min_max<BLOCK / 32>(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        atomicMin(&g_qmin, lo);
        atomicMax(&g_qmax, hi);
        __threadfence();  // the block's atomics land before its ticket
        s_last = atomicAdd(&g_ticket, 1u) == gridDim.x - 1u;
    }
    __syncthreads();
    if (s_last && threadIdx.x == 0) {
        __threadfence();
        decide(atomicAdd(&g_qmin, 0), atomicAdd(&g_qmax, 0), stats);
        g_qmin = INT_MAX;  // ready for the next launch
        g_qmax = INT_MIN;
        g_ticket = 0u;
    }
}

// q as int32 into q_wide, rows b0, b0 + step, ... (quantise: the same q as pass 1's) where the
// tensor's q (qmin, qmax) does not fit int8. A rare path: it reads x again rather than widen
// encode_row, and is not inlined, so the common paths keep their registers. The int8 planes
// layout only (the layer's): the packed layout's pass 2 would lose occupancy to it (32 -> 40
// registers), so there q_wide is never written; nor where the launch passes none (null).
__device__ __noinline__ void store_q_wide(const float* __restrict__ x,
                                          const float* __restrict__ vth, int qmin, int qmax,
                                          int B, int F, int b0, int step,
                                          int* __restrict__ q_wide) {
#if LAYOUT == 0
    if (q_wide == nullptr || (qmin >= -128 && qmax <= 127)) return;
    for (int b = b0; b < B; b += step) {
        const float t = vth[b];
        const size_t row = (size_t)b * (size_t)F;
        for (int f = threadIdx.x; f < F; f += BLOCK) q_wide[row + f] = quantise(__ldg(x + row + f), t);
    }
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK)
act_encode(const float* __restrict__ x, const float* __restrict__ vth,
           const int* __restrict__ stats, const signed char* __restrict__ q8, int B, int F,
           out_t* __restrict__ out, int* __restrict__ q_wide) {
    const int qmin = __ldg(stats), qmax = __ldg(stats + 1), o = __ldg(stats + 2),
              T = __ldg(stats + 3);
    if (encode_from_q8(q8, qmin, qmax, o, T, B, F, out)) return;
    // q wider than int8 (or T > 8, or padded packed rows): a block per row, from x.
    for (int b = blockIdx.x; b < B; b += gridDim.x) encode_row(x, __ldg(vth + b), o, T, B, F, b, out);
    store_q_wide(x, vth, qmin, qmax, B, F, blockIdx.x, gridDim.x, q_wide);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
act_small(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          signed char* __restrict__ q8, int B, int F, float k, out_t* __restrict__ out,
          int* __restrict__ q_wide) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32], s_stats[4];
    __shared__ float s_vth[SMALL_B];
    int lo = INT_MAX, hi = INT_MIN;
    for (int b = 0; b < B; ++b) {
        const float t = stats_row<true>(x, F, k, b, scratch, q8, lo, hi);
        if (threadIdx.x == 0) { vth[b] = t; s_vth[b] = t; }
    }
    block_min_max<BLOCK / 32>(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        decide(lo, hi, s_stats);
        for (int i = 0; i < 4; ++i) stats[i] = s_stats[i];
    }
    __syncthreads();
    const int o = s_stats[2], T = s_stats[3];
    for (int b = 0; b < B; ++b) encode_row(x, s_vth[b], o, T, B, F, b, out);
    store_q_wide(x, s_vth, s_stats[0], s_stats[1], B, F, 0, 1, q_wide);
}

// act_one: batch 1 on an aligned row (F % 4 == 0). The one-block kernel, for builds without
// the cluster (ONE_CL, which follows), takes rows that fit the BLOCK build's thread caches
// (F <= 4 ONE_SLOTS) and runs on ONE_THREADS threads (up to 1024; the plugin counts both
// from the variant's BLOCK and CACHE_VEC) that each hold ONE_V float4 of it: four times
// act_small's threads at the defaults, so a quarter of the serial work a thread.
// Each q stays in registers from pass 1 to pass 2: x read once, each value quantised once
// (act_small's encode_row reads x again and divides a second time). The row sum is
// act_small's, bit for bit: the |x| sum of each float4 goes to shared memory, and thread t <
// BLOCK adds the float4s t, t + BLOCK, ... that its cache holds in the BLOCK build, in that
// order; the other threads give +0, which block_sum's tree adds where the BLOCK build has
// its empty lanes. So the same vth, and the same q (ReciprocalQ, as pass 1 always uses).
// Builds whose caches hold more than ONE_MAX_SLOTS float4 (past 32 KB of |x| sums in shared
// memory) have no act_one: the plugin does not launch it there, and the kernel traps.
#define ONE_SLOTS (CACHE_VEC * BLOCK)
#define ONE_THREADS (ONE_SLOTS < 1024 ? ONE_SLOTS : 1024)
#define ONE_V ((ONE_SLOTS + ONE_THREADS - 1) / ONE_THREADS)
#ifndef ONE_MAX_SLOTS
#define ONE_MAX_SLOTS 8192
#endif

#if LAYOUT == 0
// Float4 idx's planes (v = q - o of four values) into the int8 layout [T, B, F], row b.
__device__ __forceinline__ void one_planes(out_t* __restrict__ out, int B, int F, int b, int n4,
                                           int idx, int4 v, int T) {
    if (idx < n4) put_planes(out + (size_t)b * F, (size_t)B * F, idx, v, T);
}
#else
// Float4 idx's bits in the packed words [P, B, W] of row b: eight consecutive threads hold a
// word's 32 values, so a plane's word is their four-bit pieces OR'ed across the eight lanes
// (every lane calls it: the shuffles). Float4s past the row give 0 bits (the padding).
__device__ __forceinline__ void one_planes(out_t* __restrict__ out, int B, int F, int b, int n4,
                                           int idx, int4 v, int T) {
    const int W = (F + 31) >> 5, P = MODE == 1 ? T + 1 : T;
    for (int p = 0; p < P; ++p) {
        unsigned w = 0u;
        if (idx < n4)
            w = ((unsigned)packed_bit(v.x, p, T) | (unsigned)packed_bit(v.y, p, T) << 1 |
                 (unsigned)packed_bit(v.z, p, T) << 2 | (unsigned)packed_bit(v.w, p, T) << 3)
                << (4 * (idx & 7));
        w |= __shfl_xor_sync(0xffffffffu, w, 1);
        w |= __shfl_xor_sync(0xffffffffu, w, 2);
        w |= __shfl_xor_sync(0xffffffffu, w, 4);
        if ((idx & 7) == 0 && idx < n4) out[((size_t)p * B + b) * W + (idx >> 3)] = w;
    }
}
#endif

#ifndef GRID_ROWS
#define GRID_ROWS 4  // act_grid: the most rows a block keeps in registers (0: no act_grid)
#endif
#ifndef GRID_MINB
#define GRID_MINB 4  // act_grid's blocks an SM (__launch_bounds__): the plugin's grid cap
#endif
__device__ unsigned int g_round = 0;  // act_grid's launches, counted: which parity's words
// act_grid's waiters give up after this many polls (seconds, at 32 ns or more a poll): a grid
// that is not all resident (another kernel or process holding SMs) then ends in an error,
// not a hang.
#define GRID_SPINS (1u << 26)
// act_grid's barrier's words, a pair per round parity: the range (lo, hi) and the arrivals'
// count, each on a 128-byte line of its own, so the pollers' reads of the count stay off the
// range's line and off g_round's.
struct __align__(128) GridLine { int v[32]; };
__device__ GridLine g_lohi[2] = {{{INT_MAX, INT_MIN}}, {{INT_MAX, INT_MIN}}};
__device__ GridLine g_arrived[2] = {{{0}}, {{0}}};

// Pass 1 on an aligned row that fits the thread's cache c (F <= 4 CACHE_VEC BLOCK): vth, q of
// every value folded into lo/hi and written to q8r as int8, and kept in w (slot j: float4
// threadIdx.x + j BLOCK, 0 past the row). quantise_row_vec's steps on a row with no tail, so
// the same sum, vth and q as act_stats.
__device__ __forceinline__ float stats_row_kept(const float4 (&c)[CACHE_VEC], int F, float k,
                                                float* scratch, signed char* __restrict__ q8r,
                                                int& lo, int& hi, unsigned (&w)[CACHE_VEC]) {
    const int n4 = F >> 2;
    const float t = row_threshold(cache_abs_sum(c), F, k, 0.0f, INFINITY, scratch);
    const ReciprocalQ quant(t);
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) {
        const int i = threadIdx.x + j * BLOCK;
        const int4 q = quant.q4(c[j]);
        w[j] = q8_word(q);
        if (i < n4) {
            fold4(q, lo, hi);
            reinterpret_cast<unsigned*>(q8r)[i] = w[j];
        }
    }
    return t;
}

// The q range of every block met at one grid-wide barrier, and SPEC's decision into dec for
// every thread (block 0 also writes stats). Thread 0 of each block adds the block's range to
// its round parity's two words and counts its arrival (three reductions, no return, the
// count's with release order), then polls the count (acquire) until the grid has arrived
// and reads the range itself, so every block decides from the same qmin and qmax (decide is
// a function of them: the same bits). Block 0 writes stats, bumps the round, and resets the
// other parity's words for the next launch. After the last arrival: its reduction's way to
// L2, a poll's round trip and the range's. Every block of the grid must be resident at once
// (the plugin's grid: at most GRID_MINB blocks an SM).
__device__ __forceinline__ void grid_decide(int lo, int hi, int* __restrict__ stats, int* s_lo,
                                            int* s_hi, int* dec) {
    // Read before the block's arrival, so before block 0 can bump it; its latency under the
    // block's reduction.
    const unsigned round = threadIdx.x == 0 ? *(volatile unsigned*)&g_round : 0u;
    block_min_max<BLOCK / 32>(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        const unsigned par = round & 1u;
        int* range = g_lohi[par].v;
        if (blockIdx.x == 0) {
            // The other parity's words, ready for the next launch: the launch before, which
            // used them, has ended, and no block of this one touches them.
            g_lohi[par ^ 1u].v[0] = INT_MAX;
            g_lohi[par ^ 1u].v[1] = INT_MIN;
            g_arrived[par ^ 1u].v[0] = 0;
        }
        // Reductions with no return; the count's with release order, so a block that sees the
        // whole grid counted (acquire, through the count's release sequence) sees every range.
        asm volatile("red.relaxed.gpu.global.min.s32 [%0], %1;" :: "l"(range), "r"(lo) : "memory");
        asm volatile("red.relaxed.gpu.global.max.s32 [%0], %1;" :: "l"(range + 1), "r"(hi) : "memory");
        asm volatile("red.release.gpu.global.add.s32 [%0], 1;" :: "l"(g_arrived[par].v) : "memory");
        for (unsigned spins = 0;; ++spins) {
            int n;
            asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(n) : "l"(g_arrived[par].v) : "memory");
            if (n == (int)gridDim.x) break;
            if (spins == GRID_SPINS) __trap();
            __nanosleep(32);
        }
        int qmin, qmax;
        asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(qmin) : "l"(range) : "memory");
        asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(qmax) : "l"(range + 1) : "memory");
        decide(qmin, qmax, dec);
        if (blockIdx.x == 0) {
            // Every block read the round before it arrived, so none reads it after this.
            g_round = round + 1u;
            for (int i = 0; i < 4; ++i) stats[i] = dec[i];
        }
    }
    __syncthreads();
}

// act_grid (see the header): rows b = blockIdx.x + j gridDim.x, j < GRID_ROWS, each row's
// loads issued before the previous row's barriers (act_stats' prefetch).
extern "C" __global__ void __launch_bounds__(BLOCK, GRID_MINB)
act_grid(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
         signed char* __restrict__ q8, int B, int F, float k, out_t* __restrict__ out,
         int* __restrict__ q_wide) {
#if GRID_ROWS < 1
    __trap();  // not launched: the plugin reads GRID_ROWS back
#else
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32], s_dec[4];
    __shared__ float s_vth[GRID_ROWS];
    const int n4 = F >> 2;
    unsigned w[GRID_ROWS][CACHE_VEC];
    int lo = INT_MAX, hi = INT_MIN;
    float4 cur[CACHE_VEC];
    if (blockIdx.x < B) load_row_cache(reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * F), n4, cur);
#pragma unroll
    for (int j = 0; j < GRID_ROWS; ++j) {
        const int b = blockIdx.x + j * gridDim.x;
        float4 nxt[CACHE_VEC];
        if (j + 1 < GRID_ROWS && b + (int)gridDim.x < B)
            load_row_cache(reinterpret_cast<const float4*>(x + (size_t)(b + gridDim.x) * F), n4, nxt);
        if (b < B) {  // the same for the whole block
            const float t = stats_row_kept(cur, F, k, scratch, q8 + (size_t)b * F, lo, hi, w[j]);
            if (threadIdx.x == 0) { vth[b] = t; s_vth[j] = t; }
        }
        if (j + 1 < GRID_ROWS) {
#pragma unroll
            for (int i = 0; i < CACHE_VEC; ++i) cur[i] = nxt[i];
        }
    }
    grid_decide(lo, hi, stats, s_lo, s_hi, s_dec);
    const int o = s_dec[2], T = s_dec[3];
    if (fits_int8(s_dec[0], s_dec[1])) {  // every normal input: the planes from the kept q
#pragma unroll
        for (int j = 0; j < GRID_ROWS; ++j) {
            const int b = blockIdx.x + j * gridDim.x;
            if (b >= B) break;
#pragma unroll
            for (int i = 0; i < CACHE_VEC; ++i)
                one_planes(out, B, F, b, n4, threadIdx.x + i * BLOCK, minus_o(w[j][i], o), T);
        }
        return;
    }
    // q wider than int8: the kept words are clamped, so the planes from x (act_encode's way),
    // and q to q_wide.
    for (int j = 0; j < GRID_ROWS; ++j) {
        const int b = blockIdx.x + j * gridDim.x;
        if (b < B) encode_row(x, s_vth[j], o, T, B, F, b, out);
    }
    store_q_wide(x, vth, s_dec[0], s_dec[1], B, F, blockIdx.x, gridDim.x, q_wide);
#endif
}

#ifndef ONE_CLUSTER
#define ONE_CLUSTER 2  // act_one on a cluster of BLOCK / 32 blocks where the build allows
#endif
#if ONE_CLUSTER != 0 && ONE_CLUSTER != 2
#error "ONE_CLUSTER is 0 (one block) or 2 (a cluster sharing through st.async)"
#endif
// The cluster build of act_one: one block for each warp of the BLOCK build's block_sum
// (BLOCK / 32 of them, at most 8, the portable cluster size), each of R = ceil(F / 4 / BLOCK)
// warps a row (R B <= 32 with act_rows' B rows: rows up to 128 BLOCK values), one float4 a
// thread. Elsewhere the one-block act_one below.
#define ONE_CL (ONE_CLUSTER && BLOCK % 32 == 0 && BLOCK <= 256)
#ifndef ONE_ROWS
#define ONE_ROWS 32  // the most rows act_rows takes: its sum_in holds them
#endif

#if ONE_CL
#include <cooperative_groups.h>
#include <cuda/ptx>
#define ONE_CTAS (BLOCK / 32)

// act_one on a cluster (see ONE_CL): the block of the BLOCK build spread over ONE_CTAS SMs, so
// that each scheduler issues for a few warps where the one-block kernel gives it eight
// (kernels/NOTES.md), and (act_rows) B rows at once where R B <= 32 (R = ceil(F / 4 / BLOCK),
// the turns a row takes). Block c is warp c of the BLOCK build's row sum, for every row: its thread
// (warp b R + r, lane l) holds float4 32c + l + BLOCK r of row b, the float4 that thread
// 32c + l of that build adds in its r-th turn (its cache slot r, or past the cache its loop's
// step r - CACHE_VEC: both ascending r, float4s past the row +0). So the row's first warp
// (b R) adds each lane's sums in that order and sums the warp (block_sum's first stage, the
// same lanes), and every warp of every block adds the row's ONE_CTAS warp sums in lanes
// 0..ONE_CTAS-1 with +0 in the rest, as block_sum's second stage has them: the same bits as
// act_small and act_stats. The q range is shared the same way, every warp's (lo, hi) (min
// and max need no order). Each block pushes its values into every block's shared memory
// (st.async) and waits on its own mbarrier for the bytes it is owed: one cluster barrier in
// all (every block's mbarriers initialised before the first send). A block may leave as soon
// as its own work is done: every st.async into its shared memory lands before its waits on
// `owed` return, and it waits for all of them, so nothing is still arriving when it exits.
// ROWS: B rows (act_rows), B the block's y (a launch whose block disagrees traps rather than
// wait forever for bytes no block sends); else batch 1 (act_one), where every row index folds
// to 0 at compile time, so that its code carries no row offsets.
template <bool ROWS>
__device__ __forceinline__ void act_cluster(const float* __restrict__ x, float* __restrict__ vth,
                                            int* __restrict__ stats, signed char* __restrict__ q8,
                                            int B, int F, float k, out_t* __restrict__ out,
                                            int* __restrict__ q_wide) {
    namespace cg = cooperative_groups;
    namespace ptx = cuda::ptx;
    const cg::cluster_group cluster = cg::this_cluster();
    constexpr int MAX_ROWS = ROWS ? ONE_ROWS : 1;
    __shared__ float sums[1024];
    __shared__ float sum_in[MAX_ROWS * ONE_CTAS];  // row b's warp sum from block c: b ONE_CTAS + c
    __shared__ int2 range_in[ONE_CTAS * 32];   // (lo, hi) of block c's warp w in c R B + w
    __shared__ uint64_t owed[2];               // the bytes of sum_in, of range_in
    // The block is (32 R, B): row b = threadIdx.y, its turn r = warp threadIdx.x / 32, and
    // the block's warp b R + r (a warp never spans two rows: blockDim.x is a multiple of 32).
    if (ROWS && B != (int)blockDim.y) __trap();
    const int b = ROWS ? (int)threadIdx.y : 0;
    const int tid = ROWS ? (int)(threadIdx.x + blockDim.x * threadIdx.y) : (int)threadIdx.x;
    const int n4 = F >> 2, lane = threadIdx.x & 31, r = threadIdx.x >> 5;
    const int R = blockDim.x >> 5, W = R * B, warp = ROWS ? tid >> 5 : r;
    const int rank = (int)cluster.block_rank();
    const int idx = 32 * rank + lane + BLOCK * r;  // the float4 in row b
    const float4 c = load_or_zero(reinterpret_cast<const float4*>(x + (size_t)b * F), n4, idx);
    if (tid == 0) {
        ptx::mbarrier_init(&owed[0], 1);
        ptx::mbarrier_init(&owed[1], 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    ptx::barrier_cluster_arrive(ptx::sem_relaxed);  // waited for before the first send
    sums[tid] = abs_sum4(c);
    __syncthreads();
    if (tid == 0) {  // each mbarrier's one arrival, expecting the bytes it is owed
        ptx::mbarrier_arrive_expect_tx(ptx::sem_relaxed, ptx::scope_cluster, ptx::space_shared,
                                       &owed[0], (uint32_t)(B * ONE_CTAS * sizeof(float)));
        ptx::mbarrier_arrive_expect_tx(ptx::sem_relaxed, ptx::scope_cluster, ptx::space_shared,
                                       &owed[1], (uint32_t)(ONE_CTAS * W * sizeof(int2)));
    }
    ptx::barrier_cluster_wait();  // every block's mbarriers are ready
    if (r == 0) {  // row b's thread 32 rank + lane of the BLOCK build: its cache's sum, its warp's
        float partial = 0.0f;
        for (int j = 0; j < R; ++j) partial += sums[lane + 32 * (b * R + j)];  // warp b R + j
        partial = warp_sum(partial);  // the same bits in every lane (a butterfly)
        if (lane < ONE_CTAS)
            ptx::st_async(cluster.map_shared_rank(&sum_in[b * ONE_CTAS + rank], lane), partial,
                          cluster.map_shared_rank(&owed[0], lane));
    }
    while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &owed[0], 0u)) {}
    const float total = warp_sum(lane < ONE_CTAS ? sum_in[b * ONE_CTAS + lane] : 0.0f);
    const float t = threshold_from_sum(total, F, k, 0.0f, INFINITY);
    const ReciprocalQ quant(t);
    const int4 q = quant.q4(c);
    int lo = INT_MAX, hi = INT_MIN;
    if (idx < n4) fold4(q, lo, hi);
    lo = __reduce_min_sync(0xffffffffu, lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
    if (lane < ONE_CTAS)
        ptx::st_async(cluster.map_shared_rank(&range_in[rank * W + warp], lane),
                      make_int2(lo, hi), cluster.map_shared_rank(&owed[1], lane));
    if (idx < n4) reinterpret_cast<unsigned*>(q8 + (size_t)b * F)[idx] = q8_word(q);
    while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &owed[1], 0u)) {}
    lo = INT_MAX;
    hi = INT_MIN;
    for (int i = lane; i < ONE_CTAS * W; i += 32) {
        lo = min(lo, range_in[i].x);
        hi = max(hi, range_in[i].y);
    }
    int dec[4];  // qmin, qmax, o, T
    decide(__reduce_min_sync(0xffffffffu, lo), __reduce_max_sync(0xffffffffu, hi), dec);
    if (rank == 0 && threadIdx.x == 0) {
        vth[b] = t;
        if (b == 0)
            for (int i = 0; i < 4; ++i) stats[i] = dec[i];
    }
    const int o = dec[2], T = dec[3];
    one_planes(out, B, F, b, n4, idx, make_int4(q.x - o, q.y - o, q.z - o, q.w - o), T);
    if (LAYOUT == 0 && q_wide != nullptr && !fits_int8(dec[0], dec[1]) && idx < n4)
        reinterpret_cast<int4*>(q_wide + (size_t)b * F)[idx] = q;  // the layer's operand
}

extern "C" __global__ void __cluster_dims__(ONE_CTAS, 1, 1) __launch_bounds__(1024)
act_one(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
        signed char* __restrict__ q8, int F, float k, out_t* __restrict__ out,
        int* __restrict__ q_wide) {
    act_cluster<false>(x, vth, stats, q8, 1, F, k, out, q_wide);
}

// act_one on B rows at once: the block is (32 R, B), R B <= 32 warps, B <= ONE_ROWS.
extern "C" __global__ void __cluster_dims__(ONE_CTAS, 1, 1) __launch_bounds__(1024)
act_rows(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
         signed char* __restrict__ q8, int B, int F, float k, out_t* __restrict__ out,
         int* __restrict__ q_wide) {
    act_cluster<true>(x, vth, stats, q8, B, F, k, out, q_wide);
}
#else
// The one-block build has no act_rows: the plugin does not launch it there, and it traps.
extern "C" __global__ void act_rows(const float* __restrict__ x, float* __restrict__ vth,
                                    int* __restrict__ stats, signed char* __restrict__ q8, int B,
                                    int F, float k, out_t* __restrict__ out,
                                    int* __restrict__ q_wide) {
    __trap();
}

extern "C" __global__ void __launch_bounds__(ONE_THREADS)
act_one(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
        signed char* __restrict__ q8, int F, float k, out_t* __restrict__ out,
        int* __restrict__ q_wide) {
#if ONE_SLOTS > ONE_MAX_SLOTS
    __trap();  // not launched: see ONE_MAX_SLOTS
#else
    __shared__ float sums[ONE_V * ONE_THREADS];  // ONE_SLOTS and, past them, zeros
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32];
    const int n4 = F >> 2, tid = threadIdx.x;
    const float4* xr4 = reinterpret_cast<const float4*>(x);
    float4 c[ONE_V];
#pragma unroll
    for (int i = 0; i < ONE_V; ++i) {
        c[i] = load_or_zero(xr4, n4, tid + i * ONE_THREADS);
        sums[tid + i * ONE_THREADS] = abs_sum4(c[i]);
    }
    __syncthreads();
    float partial = 0.0f;  // the BLOCK build's cache_abs_sum of thread tid
    if (tid < BLOCK) {
#pragma unroll
        for (int j = 0; j < CACHE_VEC; ++j) partial += sums[tid + j * BLOCK];
    }
    // row_threshold (threshold.cuh: block_sum, then threshold_from_sum) with block_sum's
    // two stages, the second done by every warp (the same lanes in the same order, so the
    // same bits in every thread): one barrier, not three.
    const int lane = tid & 31, warp = tid >> 5;
    constexpr int NW = ONE_THREADS / 32;
    partial = warp_sum(partial);
    if (lane == 0) scratch[warp] = partial;
    __syncthreads();
    const float total = warp_sum(lane < NW ? scratch[lane] : 0.0f);
    const float t = threshold_from_sum(total, F, k, 0.0f, INFINITY);
    const ReciprocalQ quant(t);
    int4 q[ONE_V];
    int lo = INT_MAX, hi = INT_MIN;
#pragma unroll
    for (int i = 0; i < ONE_V; ++i) {
        const int idx = tid + i * ONE_THREADS;
        q[i] = quant.q4(c[i]);
        if (idx < n4) {
            fold4(q[i], lo, hi);
            reinterpret_cast<unsigned*>(q8)[idx] = q8_word(q[i]);
        }
    }
    // The q range and SPEC's decision, made by every thread from the warps' ranges (one
    // barrier; act_small's thread 0 and its broadcast take two).
    lo = __reduce_min_sync(0xffffffffu, lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
    if (lane == 0) { s_lo[warp] = lo; s_hi[warp] = hi; }
    __syncthreads();
    int dec[4];  // qmin, qmax, o, T
    decide(__reduce_min_sync(0xffffffffu, lane < NW ? s_lo[lane] : INT_MAX),
           __reduce_max_sync(0xffffffffu, lane < NW ? s_hi[lane] : INT_MIN), dec);
    if (tid == 0) {
        vth[0] = t;
        for (int i = 0; i < 4; ++i) stats[i] = dec[i];
    }
    const int o = dec[2], T = dec[3];
    const bool wide = LAYOUT == 0 && q_wide != nullptr && !fits_int8(dec[0], dec[1]);
#pragma unroll
    for (int i = 0; i < ONE_V; ++i) {
        const int idx = tid + i * ONE_THREADS;
        one_planes(out, 1, F, 0, n4, idx, make_int4(q[i].x - o, q[i].y - o, q[i].z - o, q[i].w - o), T);
        if (wide && idx < n4) reinterpret_cast<int4*>(q_wide)[idx] = q[i];  // the layer's operand
    }
#endif
}
#endif  // ONE_CL
