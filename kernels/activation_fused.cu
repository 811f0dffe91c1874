// The activation path fused (SPEC steps 1-3): x -> vth, spikes, and the stats
// [qmin, qmax, o, T], with the transform decision and T made on the device. Two passes
// over x at most, nothing read back by the host, so the launches capture as one CUDA graph:
//   act_stats:  rows grid-strided over at most STATS_BLOCKS blocks, the next row's loads
//               issued before this row's block reduction (so the reduction's barriers do not
//               leave the block with nothing in flight). vth and q by threshold.cuh's row
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
//   act_small:  B <= SMALL_B (batch 1 and a few rows): both passes in one block and one
//               launch, no atomics; the same per-row code, so the same bits (q8 too). At
//               batch 1, where the row fits the threads' caches (int8 layout), q stays in
//               registers from pass 1 to pass 2 (small_cached): x read once, quantised once.
// q8 is an output: q as int8 (clamped where it does not fit, which stats tells), the operand
// the integer GEMM (int_gemm) takes, so a layer needs no decode pass.
// The module's three __device__ words make it one launch at a time per module (per variant).
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
#define SMALL_B 4
#endif
#ifndef PREFETCH
#define PREFETCH 1  // pass 1 loads a block's next row before this row's reduction
#endif
#ifndef STATS_MINB
#define STATS_MINB 4  // pass 1's blocks an SM: registers capped at 64 (80 uncapped, 3 blocks)
#endif

__device__ int g_qmin = INT_MAX;
__device__ int g_qmax = INT_MIN;
__device__ unsigned int g_ticket = 0;

__device__ __forceinline__ signed char clamp8(int q) { return (signed char)max(-128, min(127, q)); }

__device__ __forceinline__ void fold4(int4 q, int& lo, int& hi) {
    lo = min(lo, min(min(q.x, q.y), min(q.z, q.w)));
    hi = max(hi, max(max(q.x, q.y), max(q.z, q.w)));
}

// Pass 1 on one aligned row (F % 4 == 0) whose cache c the thread holds (load_row_cache):
// vth by threshold.cuh's row quantisation, q of every value (ReciprocalQ) folded into lo/hi
// and, when STORE, written to q8r as int8 (clamped).
template <bool STORE>
__device__ __forceinline__ float stats_row_vec(const float4 (&c)[CACHE_VEC],
                                               const float4* __restrict__ xr4, int F, float k,
                                               float* scratch, signed char* __restrict__ q8r,
                                               int& lo, int& hi) {
    return quantise_row_vec<ReciprocalQ>(c, cache_abs_sum(c), xr4, F, k, 0.0f, INFINITY, scratch,
                                         [&](int i, int4 q) {
        fold4(q, lo, hi);
        if (STORE)
            reinterpret_cast<char4*>(q8r)[i] = make_char4(clamp8(q.x), clamp8(q.y),
                                                          clamp8(q.z), clamp8(q.w));
    });
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

extern "C" __global__ void __launch_bounds__(BLOCK, STATS_MINB)
act_stats(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          signed char* __restrict__ q8, int B, int F, float k) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32];
    __shared__ bool s_last;
    int lo = INT_MAX, hi = INT_MIN;
    // Rows grid-strided over at most STATS_BLOCKS blocks (a block per row would make every
    // row's block queue three same-address atomics).
    if (PREFETCH && (F & 3) == 0) {
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

// act_small's end of pass 1: the block's q range, SPEC's decision into stats and s_stats (o
// at 2, T at 3), seen by every thread on return.
__device__ __forceinline__ void small_decide(int lo, int hi, int* __restrict__ stats, int* s_lo,
                                             int* s_hi, int* s_stats) {
    block_min_max<BLOCK / 32>(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        decide(lo, hi, s_stats);
        for (int i = 0; i < 4; ++i) stats[i] = s_stats[i];
    }
    __syncthreads();
}

#if LAYOUT == 0
// act_small on one row that fits the threads' caches (B = 1, F % 4 == 0, F <= 4 CACHE_VEC
// BLOCK), in the int8 plane layout: pass 1 keeps each q in registers (qc), and pass 2 writes
// the planes from them, so x is read once and each value quantised once (encode_row reads
// x again and divides a second time). The same vth (the same sum, in the same order) and
// the same q (ReciprocalQ, as pass 1 always uses), so the same bits. One row only: rows
// unrolled with their q kept would multiply the code (4 rows: 197 KB, which the
// instruction caches do not hold; kernels/NOTES.md).
__device__ __forceinline__ void small_cached(const float* __restrict__ x, float* __restrict__ vth,
                                             int* __restrict__ stats, signed char* __restrict__ q8,
                                             int F, float k, signed char* __restrict__ out,
                                             int* __restrict__ q_wide, float* scratch, int* s_lo,
                                             int* s_hi, int* s_stats) {
    const int n4 = F >> 2, tid = threadIdx.x;
    int lo = INT_MAX, hi = INT_MIN;
    int4 qc[CACHE_VEC];
    float4 c[CACHE_VEC];
    load_row_cache(reinterpret_cast<const float4*>(x), n4, c);
    const float t = row_threshold(cache_abs_sum(c), F, k, 0.0f, INFINITY, scratch);
    const ReciprocalQ quant(t);
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) {
        const int i = tid + j * BLOCK;
        qc[j] = make_int4(quant(c[j].x), quant(c[j].y), quant(c[j].z), quant(c[j].w));
        if (i < n4) {
            fold4(qc[j], lo, hi);
            reinterpret_cast<char4*>(q8)[i] =
                make_char4(clamp8(qc[j].x), clamp8(qc[j].y), clamp8(qc[j].z), clamp8(qc[j].w));
        }
    }
    if (tid == 0) vth[0] = t;
    small_decide(lo, hi, stats, s_lo, s_hi, s_stats);
    const int o = s_stats[2], T = s_stats[3];
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) {
        const int i = tid + j * BLOCK;
        if (i < n4)
            put_planes(out, (size_t)F, i, make_int4(qc[j].x - o, qc[j].y - o, qc[j].z - o,
                                                    qc[j].w - o), T);
    }
    store_q_wide(x, vth, s_stats[0], s_stats[1], 1, F, 0, 1, q_wide);  // vth[0]: the barrier in small_decide
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
act_small(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          signed char* __restrict__ q8, int B, int F, float k, out_t* __restrict__ out,
          int* __restrict__ q_wide) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32], s_stats[4];
    __shared__ float s_vth[SMALL_B];
#if LAYOUT == 0
    if (B == 1 && (F & 3) == 0 && (F >> 2) <= CACHE_VEC * BLOCK) {
        small_cached(x, vth, stats, q8, F, k, out, q_wide, scratch, s_lo, s_hi, s_stats);
        return;
    }
#endif
    int lo = INT_MAX, hi = INT_MIN;
    for (int b = 0; b < B; ++b) {
        const float t = stats_row<true>(x, F, k, b, scratch, q8, lo, hi);
        if (threadIdx.x == 0) { vth[b] = t; s_vth[b] = t; }
    }
    small_decide(lo, hi, stats, s_lo, s_hi, s_stats);
    const int o = s_stats[2], T = s_stats[3];
    for (int b = 0; b < B; ++b) encode_row(x, s_vth[b], o, T, B, F, b, out);
    store_q_wide(x, s_vth, s_stats[0], s_stats[1], B, F, 0, 1, q_wide);
}
