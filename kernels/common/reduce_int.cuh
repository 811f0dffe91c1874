// Integer reductions into one global word with atomics (min, max), one atomic per warp.
#pragma once

__device__ __forceinline__ void warp_atomic_min(int v, int* out) {
    v = __reduce_min_sync(0xffffffffu, v);
    if ((threadIdx.x & 31) == 0) atomicMin(out, v);
}

__device__ __forceinline__ void warp_atomic_max(int v, int* out) {
    v = __reduce_max_sync(0xffffffffu, v);
    if ((threadIdx.x & 31) == 0) atomicMax(out, v);
}
