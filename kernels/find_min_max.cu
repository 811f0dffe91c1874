// SPEC step 2a, find_min_max: mm = [min q, max q] over the whole tensor (int32).
// Two launches: minmax_init seeds the words (the output is never assumed zeroed), then
// find_min_max scans q with 16-byte loads where n % 4 == 0 (grid-stride, unrolled so each
// thread has several loads in flight) and folds each block's result in with one atomic.
// Launch whole warps: the reductions use all lanes.
#include "reduce_int.cuh"

extern "C" __global__ void minmax_init(int* mm) {
    mm[0] = INT_MAX;
    mm[1] = INT_MIN;
}

extern "C" __global__ void find_min_max(const int* __restrict__ q, long long n, int* mm) {
    int lo = INT_MAX, hi = INT_MIN;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((n & 3) == 0) {
        const int4* q4 = reinterpret_cast<const int4*>(q);
#pragma unroll 4
        for (long long i = tid; i < (n >> 2); i += stride) {
            const int4 v = __ldg(q4 + i);
            lo = min(lo, min(min(v.x, v.y), min(v.z, v.w)));
            hi = max(hi, max(max(v.x, v.y), max(v.z, v.w)));
        }
    } else {
        for (long long i = tid; i < n; i += stride) {
            const int v = __ldg(q + i);
            lo = min(lo, v);
            hi = max(hi, v);
        }
    }
    block_atomic_min_max(lo, hi, mm, mm + 1);
}
