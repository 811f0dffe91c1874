// SPEC step 5, dynamic_spikes_reverse: x_rec[b, f] = q'[b, f] * vth[b] (float32).
// A block takes a chunk of one row: BLOCK x units 16-byte units where F % 4 == 0 (single
// values otherwise), and its vth, read once. Every load of a thread is issued before any of
// its stores, so a block is one memory round trip, not `units` of them in series (what a
// grid-strided loop over the row costs at small batches, where a launch is all latency).
// `units` is the launch's (1..UNITS): the plugin takes UNITS where the grid fits in one wave
// (a row of 3584 is one block), fewer past it (more, shorter blocks: the slots of an SM turn
// over sooner). The loads' registers are sized by UNITS at compile time.
// FLAT=1 (a tuning build): the blocks split the whole tensor, not each row, so no block holds
// a row's short tail; each unit finds its row by a division. EVICT_FIRST=1 (a tuning build,
// common/loads.cuh): loads and stores carry the evict-first hint (ld/st.global.cs).
// __fmul_rn keeps the product a single rounding, whatever contraction the compiler would like.
#include "loads.cuh"  // load_once

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef UNITS
#define UNITS 4  // the most units a thread loads before it stores: its registers
#endif
#ifndef FLAT
#define FLAT 0
#endif
// Blocks an SM holds: its threads (Hopper's 2048) over the block, at most 32 (its most
// blocks). The bounds keep that many resident (at most 32 registers at BLOCK 256); the
// plugin's one-wave test counts on it.
#define SM_THREADS 2048
#define SM_BLOCKS (SM_THREADS / BLOCK < 32 ? SM_THREADS / BLOCK : 32)

__device__ __forceinline__ float scale(int v, float t) { return __fmul_rn((float)v, t); }

__device__ __forceinline__ float4 scale(int4 v, float t) {
    return make_float4(scale(v.x, t), scale(v.y, t), scale(v.z, t), scale(v.w, t));
}

// A store of a value written once, with load_once's hint (EVICT_FIRST: st.global.cs).
template <class T>
__device__ __forceinline__ void store_once(T* p, T v) {
#if EVICT_FIRST
    __stcs(p, v);
#else
    *p = v;
#endif
}

// Elements i0, i0 + BLOCK, ... (at most `units` of them, those below n) of in, scaled by t
// into out: every load first, then every store. In is int4 (16-byte units) or int (single
// values); out is float4 or float.
template <class In, class Out>
__device__ __forceinline__ void reverse_chunk(const In* __restrict__ in, Out* __restrict__ out,
                                              int i0, int n, int units, float t) {
    In v[UNITS];
#pragma unroll
    for (int j = 0; j < UNITS; ++j)
        if (j < units && i0 + j * BLOCK < n) v[j] = load_once(in + i0 + j * BLOCK);
#pragma unroll
    for (int j = 0; j < UNITS; ++j)
        if (j < units && i0 + j * BLOCK < n) store_once(out + i0 + j * BLOCK, scale(v[j], t));
}

// The flat split: elements i0, i0 + BLOCK, ... (at most `units`, those below total) of the
// whole tensor in, each scaled by its row's vth (n elements a row). The block's first row
// is found once (a 64-bit division only past 2^32 elements, and before any load, so no
// loaded value is held across its call); each unit's row from there by a 32-bit one (its
// offset from that row's start is below n + BLOCK * UNITS).
template <class In, class Out>
__device__ __forceinline__ void reverse_flat(const In* __restrict__ in, Out* __restrict__ out,
                                             const float* __restrict__ vth, long long i0,
                                             long long total, int n, int units) {
    const long long base = i0 - threadIdx.x;  // the block's first element
    const long long rb = base < 0xffffffffLL ? (long long)((unsigned)base / (unsigned)n)
                                             : base / n;
    const unsigned rem = (unsigned)(base - rb * n) + threadIdx.x;
    In v[UNITS];
    float t[UNITS];
#pragma unroll
    for (int j = 0; j < UNITS; ++j) {
        const long long i = i0 + (long long)j * BLOCK;
        if (j < units && i < total) {
            v[j] = load_once(in + i);
            t[j] = __ldg(vth + rb + (rem + (unsigned)(j * BLOCK)) / (unsigned)n);
        }
    }
#pragma unroll
    for (int j = 0; j < UNITS; ++j) {
        const long long i = i0 + (long long)j * BLOCK;
        if (j < units && i < total) store_once(out + i, scale(v[j], t[j]));
    }
}

// Grid (B * chunks): block i takes chunk i % chunks of row i / chunks, where chunks =
// ceil(n / (BLOCK * units)) and n is F / 4 (F % 4 == 0) or F; units <= UNITS. FLAT: grid
// ceil(B * n / (BLOCK * units)), block i the i-th run of BLOCK * units elements; chunks unused.
extern "C" __global__ void __launch_bounds__(BLOCK, SM_BLOCKS)
dynamic_spikes_reverse(const int* __restrict__ q, const float* __restrict__ vth, int B, int F,
                       int chunks, int units, float* __restrict__ x_rec) {
#if FLAT
    const long long i0 = (long long)blockIdx.x * (BLOCK * units) + threadIdx.x;
    if ((F & 3) == 0)
        reverse_flat(reinterpret_cast<const int4*>(q), reinterpret_cast<float4*>(x_rec), vth, i0,
                     (long long)B * (F >> 2), F >> 2, units);
    else
        reverse_flat(q, x_rec, vth, i0, (long long)B * F, F, units);
#else
    const int b = blockIdx.x / chunks, c = blockIdx.x - b * chunks;
    if (b >= B) return;
    const float t = __ldg(vth + b);
    const size_t row = (size_t)b * (size_t)F;
    const int i0 = c * (BLOCK * units) + threadIdx.x;
    if ((F & 3) == 0)
        reverse_chunk(reinterpret_cast<const int4*>(q + row), reinterpret_cast<float4*>(x_rec + row),
                      i0, F >> 2, units, t);
    else
        reverse_chunk(q + row, x_rec + row, i0, F, units, t);
#endif
}
