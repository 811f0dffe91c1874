// SPEC step 2a, find_min_max: mm = [min q, max q] over the whole tensor (int32), in one
// launch. A grid-stride scan of q, 16-byte loads where n % 4 == 0 (single values otherwise),
// UNITS loads of a thread issued together before any is folded in, so a pass is one memory
// round trip; the grid is one pass where it fits (a row of 3584 is one block). Each block's
// (min, max) goes to a slot of its own and the last block to finish (a ticket) reduces the
// slots and writes mm (common/reduce_last.cuh); a one-block grid writes mm itself. mm is
// written, never read: no initialising launch, no atomics on it (the output is never
// assumed zeroed). The module's slots and ticket make it one launch at a time per module.
// Launch whole warps: the reductions use all lanes.
#include "reduce_last.cuh"

#ifndef UNITS
#define UNITS 4  // loads a thread has in flight (the plugin's grid counts on it)
#endif

__device__ __forceinline__ void fold(int v, int& lo, int& hi) {
    lo = min(lo, v);
    hi = max(hi, v);
}

__device__ __forceinline__ void fold(int4 v, int& lo, int& hi) {
    lo = min(lo, min(min(v.x, v.y), min(v.z, v.w)));
    hi = max(hi, max(max(v.x, v.y), max(v.z, v.w)));
}

// The thread's share of q[0, n) (T: int4 units or int values) folded into lo and hi: UNITS
// grid strides a pass, every load of the pass before its folds (at batch 16384 and 65536 also
// 1-1.5 % faster than a grid-stride loop unrolled by UNITS, measured).
template <class T>
__device__ __forceinline__ void scan(const T* __restrict__ q, long long n, int& lo, int& hi) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += UNITS * stride) {
        T v[UNITS];
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (i + j * stride < n) v[j] = __ldg(q + i + j * stride);
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (i + j * stride < n) fold(v[j], lo, hi);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK, LAST_SM_BLOCKS)
find_min_max(const int* __restrict__ q, long long n, int* mm) {
    int lo = INT_MAX, hi = INT_MIN;
    if ((n & 3) == 0)
        scan(reinterpret_cast<const int4*>(q), n >> 2, lo, hi);
    else
        scan(q, n, lo, hi);
    grid_min_max(lo, hi, [=](int qmin, int qmax) {
        mm[0] = qmin;
        mm[1] = qmax;
    });
}
