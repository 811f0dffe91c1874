// SPEC step 1 on one row, shared by dynamic_spikes and activation_fused so that both compute
// the same vth bits (same reduction order) and hence the same q:
//   vth = (sum_f |x[f]| / F) / k, clamped to [vth_min, vth_max]
//   q[f] = round(x[f] / vth)  (true float32 division), 0 where vth == 0
//
// One block per row. The row is read from DRAM once: each thread keeps up to CACHE_VEC float4
// (or CACHE_VEC*4 floats on the unaligned path) in registers between the reduction and the
// quantisation; only rows wider than BLOCK*CACHE_VEC*4 re-read their tail (from L2, or, where
// the caller holds the row in shared memory, from there: quantise_row_vec's loader).
// Loads go through load_once (common/loads.cuh: -DEVICT_FIRST picks the cache hint).
//   quantise_row:     a whole row (dynamic_spikes);
//   quantise_row_vec: an aligned row whose cache the thread already holds (load_row_cache,
//                     cache_abs_sum: activation_fused fills it from its shared-memory ring, or,
//                     without the ring, loads it before the previous row's barriers);
//   quantise_row_any: a row of any F (scalar loads).
// Q, the per-value quantiser, is DivideQ (the division) or ReciprocalQ (a multiply, with the
// division only near a half): the same q either way.
#pragma once
#include "reduce.cuh"
#include "rounding.cuh"
#include "loads.cuh"

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef CACHE_VEC
#define CACHE_VEC 4  // float4 per thread kept in registers: F <= 4096 at BLOCK 256
#endif
// 1: the aligned row's values are quantised a float4 at a time (Q::q4): ReciprocalQ tests the
// four values' guards together and branches once a float4; 0: one value at a time, a branch
// each (kernels/NOTES.md). The same q either way. activation_fused also packs its q8 words
// by it (q8_word: cvt.pack.sat with 1, clamps with 0).
#ifndef QUANT4
#define QUANT4 1
#endif

__device__ __forceinline__ int quantise(float x, float vth) {
    // __fdiv_rn: IEEE division whatever the compiler flags say (SPEC: no fast math).
    return vth == 0.0f ? 0 : __float2int_rn(spec_round(__fdiv_rn(x, vth)));
}

// quantise_inv's test that y = fl(x * inv) rounds as x / vth does (its fast case).
__device__ __forceinline__ bool inv_rounds_right(float y, float r) {
    return 0.5f - fabsf(y - r) > 0x1p-21f * fabsf(y);
}

// quantise(x, vth) with one multiply by inv = __frcp_rn(vth) instead of a division.
// y = fl(x * inv) is within 1.5 * 2^-23 |x / vth| of fl(x / vth) (two roundings of 2^-24
// against one), so the two round to the same integer unless a half-integer lies within
// 2^-22 |y| of y; there (a tie included), for |y| >= 2^21 (where that margin reaches 0.5),
// and for a non-finite y (inv overflows for a tiny vth), the division is done exactly. The
// same q bit for bit: tests/spikes/test_quantise_rule.py checks the rule on 2.4M adversarial
// values in NumPy float32, and fails when the guard is dropped.
__device__ __forceinline__ int quantise_inv(float x, float vth, float inv) {
    if (vth == 0.0f) return 0;
    const float y = __fmul_rn(x, inv);
    const float r = spec_round(y);
    if (!inv_rounds_right(y, r)) return quantise(x, vth);
    return __float2int_rn(r);
}

// How a row's values become q once its vth t is known: both give quantise(x, t), a value at
// a time (operator()) or a float4 at a time (q4).
struct DivideQ {  // the IEEE division per value
    float t;
    __device__ __forceinline__ explicit DivideQ(float t_) : t(t_) {}
    __device__ __forceinline__ int operator()(float x) const { return quantise(x, t); }
    __device__ __forceinline__ int4 q4(float4 v) const {
        return make_int4((*this)(v.x), (*this)(v.y), (*this)(v.z), (*this)(v.w));
    }
};
struct ReciprocalQ {  // one multiply per value, the division only where quantise_inv needs it
    float t, inv;
    __device__ __forceinline__ explicit ReciprocalQ(float t_) : t(t_), inv(__frcp_rn(t_)) {}
    __device__ __forceinline__ int operator()(float x) const { return quantise_inv(x, t, inv); }
    // quantise_inv of four values with one branch: where every value passes the guard, its
    // rounded product; otherwise each value by quantise_inv (which gives that same q for the
    // values that pass). With vth == 0, inv is infinite, every y infinite or NaN and every
    // guard fails, so each value goes to quantise_inv, which returns its 0.
    __device__ __forceinline__ int4 q4(float4 v) const {
#if QUANT4
        const float y0 = __fmul_rn(v.x, inv), y1 = __fmul_rn(v.y, inv),
                    y2 = __fmul_rn(v.z, inv), y3 = __fmul_rn(v.w, inv);
        const float r0 = spec_round(y0), r1 = spec_round(y1), r2 = spec_round(y2),
                    r3 = spec_round(y3);
        if (inv_rounds_right(y0, r0) & inv_rounds_right(y1, r1) & inv_rounds_right(y2, r2) &
            inv_rounds_right(y3, r3))
            return make_int4(__float2int_rn(r0), __float2int_rn(r1), __float2int_rn(r2),
                             __float2int_rn(r3));
#endif
        return make_int4((*this)(v.x), (*this)(v.y), (*this)(v.z), (*this)(v.w));
    }
};

// vth from a row's |x| sum s: (s / F) / k, clamped to [vth_min, vth_max]. Every kernel that
// forms vth goes through it, so the formula is written once.
__device__ __forceinline__ float threshold_from_sum(float s, int F, float k, float vth_min,
                                                    float vth_max) {
    return fminf(fmaxf(__fdiv_rn(__fdiv_rn(s, (float)F), k), vth_min), vth_max);
}

__device__ __forceinline__ float row_threshold(float partial, int F, float k,
                                               float vth_min, float vth_max,
                                               float* scratch) {
    return threshold_from_sum(block_sum(partial, scratch), F, k, vth_min, vth_max);
}

// |x| summed over a float4, in the order every path of the row sum uses.
__device__ __forceinline__ float abs_sum4(float4 v) {
    return fabsf(v.x) + fabsf(v.y) + fabsf(v.z) + fabsf(v.w);
}

// Float4 i of an aligned row xr4 (n4 float4 in all), zero past its end.
__device__ __forceinline__ float4 load_or_zero(const float4* __restrict__ xr4, int n4, int i) {
    return i < n4 ? load_once(xr4 + i) : make_float4(0.f, 0.f, 0.f, 0.f);
}

// This thread's cache of an aligned row xr4 (n4 float4), loaded apart from its sum.
__device__ __forceinline__ void load_row_cache(const float4* __restrict__ xr4, int n4,
                                               float4 (&cache)[CACHE_VEC]) {
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) cache[j] = load_or_zero(xr4, n4, threadIdx.x + j * BLOCK);
}

// The |x| sum of a cache, in quantise_row's order.
__device__ __forceinline__ float cache_abs_sum(const float4 (&cache)[CACHE_VEC]) {
    float partial = 0.0f;
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) partial += abs_sum4(cache[j]);
    return partial;
}

// How quantise_row_vec reads the part of a row past the thread caches: from global memory
// once (LoadOnce, the default), or as the caller's row already in shared memory is read
// (LoadPlain: a plain load, which the compiler makes ld.shared where it sees the address).
struct LoadOnce {
    __device__ __forceinline__ float4 operator()(const float4* p) const { return load_once(p); }
};
struct LoadPlain {
    __device__ __forceinline__ float4 operator()(const float4* p) const { return *p; }
};

// The aligned row xr4 (F % 4 == 0, cudaMalloc'd base, or a copy of it that `load` reads)
// once the thread holds its cache and the cache's |x| sum `partial`: the rest of the row's
// sum, vth (returned to every thread), and emit4(i, int4) with the q of values 4i..4i+3.
// Every thread of the block must call it.
template <class Q, class Emit4, class Load = LoadOnce>
__device__ __forceinline__ float quantise_row_vec(const float4 (&cache)[CACHE_VEC], float partial,
                                                  const float4* __restrict__ xr4, int F, float k,
                                                  float vth_min, float vth_max, float* scratch,
                                                  Emit4 emit4, Load load = Load()) {
    const int tid = threadIdx.x;
    const int n4 = F >> 2;
    for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) partial += abs_sum4(load(xr4 + i));
    const float t = row_threshold(partial, F, k, vth_min, vth_max, scratch);
    const Q quant(t);
    auto emit = [&](int i, float4 v) { emit4(i, quant.q4(v)); };
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) {
        const int i = tid + j * BLOCK;
        if (i < n4) emit(i, cache[j]);
    }
    for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) emit(i, load(xr4 + i));
    return t;
}

// A row of any F: scalar loads, the same structure (CACHE_VEC * 4 floats a thread kept):
// vth, and emit1(f, int) with the q of value f. Every thread of the block must call it.
template <class Q, class Emit1>
__device__ __forceinline__ float quantise_row_any(const float* __restrict__ xr, int F, float k,
                                                  float vth_min, float vth_max, float* scratch,
                                                  Emit1 emit1) {
    const int tid = threadIdx.x;
    float partial = 0.0f;
    constexpr int CACHE = CACHE_VEC * 4;
    float cache[CACHE];
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * BLOCK;
        cache[j] = i < F ? load_once(xr + i) : 0.0f;
        partial += fabsf(cache[j]);
    }
    for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) partial += fabsf(load_once(xr + i));
    const float t = row_threshold(partial, F, k, vth_min, vth_max, scratch);
    const Q quant(t);
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * BLOCK;
        if (i < F) emit1(i, quant(cache[j]));
    }
    for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) emit1(i, quant(load_once(xr + i)));
    return t;
}

// Quantise row `xr` (F values): returns vth to every thread and hands each q to the caller,
// emit4(i, int4) for values 4i..4i+3 on the aligned path (F % 4 == 0, cudaMalloc'd base),
// emit1(f, int) for value f otherwise. Every thread of the block must call it.
template <class Q = DivideQ, class Emit4, class Emit1>
__device__ __forceinline__ float quantise_row(const float* __restrict__ xr, int F, float k,
                                              float vth_min, float vth_max, float* scratch,
                                              Emit4 emit4, Emit1 emit1) {
    const int tid = threadIdx.x;
    if ((F & 3) == 0) {
        const float4* xr4 = reinterpret_cast<const float4*>(xr);
        const int n4 = F >> 2;
        float4 cache[CACHE_VEC];
        float partial = 0.0f;  // summed as the loads arrive: cache_abs_sum's order
#pragma unroll
        for (int j = 0; j < CACHE_VEC; ++j) {
            cache[j] = load_or_zero(xr4, n4, tid + j * BLOCK);
            partial += abs_sum4(cache[j]);
        }
        return quantise_row_vec<Q>(cache, partial, xr4, F, k, vth_min, vth_max, scratch, emit4);
    }
    return quantise_row_any<Q>(xr, F, k, vth_min, vth_max, scratch, emit1);
}
