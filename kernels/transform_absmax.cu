// SPEC steps 2b-2c, transform_absmax, in one launch: the transform decision o from
// mm = [qmin, qmax] and the mode, made on the device (no host round trip), then v = q - o in
// place and amax = max|v|. Every block makes the decision itself (common/decision.cuh's
// transform_offset: a few integer ops on two words, cheaper than a launch of its own). Then
// q grid-strided, 16-byte accesses where n % 4 == 0 (single values otherwise): where the grid
// covers q in one pass of UNITS units a thread (the plugin's grid wherever that fits; a row of
// 3584 is one block), every load before any store, one memory round trip; past that, a loop.
// Each block's max|v| goes to a slot of its own and the last block to finish (a ticket)
// reduces the slots and writes amax and o (common/reduce_last.cuh); a one-block grid writes
// them itself. o and amax are written, never read: no initialising launch, no atomics on them.
// The module's slots and ticket make it one launch at a time per module.
// mode: 0 unidirectional, 1 bidirectional, 2 twos_complement.
#include "reduce_last.cuh"
#include "decision.cuh"  // transform_offset: SPEC 2b

#ifndef UNITS
#define UNITS 4  // loads a thread has in flight (the plugin's grid counts on it)
#endif
constexpr int kUnits = UNITS;  // for #pragma unroll, which does not expand macros

__device__ __forceinline__ int sub_abs(int& v, int off) {
    v -= off;
    return abs(v);
}

__device__ __forceinline__ int sub_abs(int4& v, int off) {
    return max(max(sub_abs(v.x, off), sub_abs(v.y, off)), max(sub_abs(v.z, off), sub_abs(v.w, off)));
}

// The thread's share of q[0, n) (T: int4 units or int values): q -= off in place, max |q|
// into hi. Where the grid covers q in one pass of UNITS grid strides (the plugin's grid,
// wherever that fits in REDUCE_BLOCKS blocks), every load of the pass goes out before any
// store: one memory round trip. Past that, a grid-stride loop unrolled by UNITS, each load
// stored back as it comes (measured 0.7-1.6 % faster at batch 16384 and 65536 than loads
// first and stores after, pass by pass).
template <class T>
__device__ __forceinline__ void transform(T* __restrict__ q, long long n, int off, int& hi) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (n <= UNITS * stride) {
        // n is at most UNITS x REDUCE_BLOCKS x 1024 here (a larger grid traps at the end)
        const int s = (int)stride, left = (int)(n - tid);
        T v[UNITS];
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (j * s < left) v[j] = q[tid + j * s];
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (j * s < left) {
                hi = max(hi, sub_abs(v[j], off));
                q[tid + j * s] = v[j];
            }
        return;
    }
#pragma unroll kUnits
    for (long long i = tid; i < n; i += stride) {
        T v = q[i];
        hi = max(hi, sub_abs(v, off));
        q[i] = v;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK, LAST_SM_BLOCKS)
transform_absmax(int* __restrict__ q, long long n, const int* __restrict__ mm, int mode, int* o,
                 int* amax) {
    const int off = transform_offset(__ldg(mm), __ldg(mm + 1), mode);
    int hi = 0;
    if ((n & 3) == 0)
        transform(reinterpret_cast<int4*>(q), n >> 2, off, hi);
    else
        transform(q, n, off, hi);
    grid_min_max(INT_MAX, hi, [=](int, int vmax) {
        *o = off;
        *amax = vmax;
    });
}
