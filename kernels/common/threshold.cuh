// SPEC step 1 on one row, shared by dynamic_spikes and activation_fused so that both compute
// the same vth bits (same reduction order) and hence the same q:
//   vth = (sum_f |x[f]| / F) / k, clamped to [vth_min, vth_max]
//   q[f] = round(x[f] / vth)  (true float32 division), 0 where vth == 0
//
// One block per row. The row is read from DRAM once: each thread keeps up to CACHE_VEC float4
// (or CACHE_VEC*4 floats on the unaligned path) in registers between the reduction and the
// quantisation; only rows wider than BLOCK*CACHE_VEC*4 re-read their tail (from L2).
#pragma once
#include "reduce.cuh"
#include "rounding.cuh"

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef CACHE_VEC
#define CACHE_VEC 4  // float4 per thread kept in registers: F <= 4096 at BLOCK 256
#endif

__device__ __forceinline__ int quantise(float x, float vth) {
    // __fdiv_rn: IEEE division whatever the compiler flags say (SPEC: no fast math).
    return vth == 0.0f ? 0 : __float2int_rn(spec_round(__fdiv_rn(x, vth)));
}

__device__ __forceinline__ float row_threshold(float partial, int F, float k,
                                               float vth_min, float vth_max,
                                               float* scratch) {
    const float s = block_sum(partial, scratch);
    const float v = __fdiv_rn(__fdiv_rn(s, (float)F), k);
    return fminf(fmaxf(v, vth_min), vth_max);
}

// Quantise row `xr` (F values): returns vth to every thread and hands each q to the caller,
// emit4(i, int4) for values 4i..4i+3 on the aligned path (F % 4 == 0, cudaMalloc'd base),
// emit1(f, int) for value f otherwise. Every thread of the block must call it.
template <class Emit4, class Emit1>
__device__ __forceinline__ float quantise_row(const float* __restrict__ xr, int F, float k,
                                              float vth_min, float vth_max, float* scratch,
                                              Emit4 emit4, Emit1 emit1) {
    const int tid = threadIdx.x;
    float partial = 0.0f;
    if ((F & 3) == 0) {
        const float4* xr4 = reinterpret_cast<const float4*>(xr);
        const int n4 = F >> 2;
        float4 cache[CACHE_VEC];
#pragma unroll
        for (int j = 0; j < CACHE_VEC; ++j) {
            const int i = tid + j * BLOCK;
            cache[j] = i < n4 ? __ldg(xr4 + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            partial += fabsf(cache[j].x) + fabsf(cache[j].y) + fabsf(cache[j].z) + fabsf(cache[j].w);
        }
        for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) {
            const float4 v = __ldg(xr4 + i);
            partial += fabsf(v.x) + fabsf(v.y) + fabsf(v.z) + fabsf(v.w);
        }
        const float t = row_threshold(partial, F, k, vth_min, vth_max, scratch);
#pragma unroll
        for (int j = 0; j < CACHE_VEC; ++j) {
            const int i = tid + j * BLOCK;
            if (i < n4)
                emit4(i, make_int4(quantise(cache[j].x, t), quantise(cache[j].y, t),
                                   quantise(cache[j].z, t), quantise(cache[j].w, t)));
        }
        for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) {
            const float4 v = __ldg(xr4 + i);
            emit4(i, make_int4(quantise(v.x, t), quantise(v.y, t), quantise(v.z, t),
                               quantise(v.w, t)));
        }
        return t;
    }
    // Any F: scalar loads, same structure.
    constexpr int CACHE = CACHE_VEC * 4;
    float cache[CACHE];
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * BLOCK;
        cache[j] = i < F ? __ldg(xr + i) : 0.0f;
        partial += fabsf(cache[j]);
    }
    for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) partial += fabsf(__ldg(xr + i));
    const float t = row_threshold(partial, F, k, vth_min, vth_max, scratch);
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * BLOCK;
        if (i < F) emit1(i, quantise(cache[j], t));
    }
    for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) emit1(i, quantise(__ldg(xr + i), t));
    return t;
}
