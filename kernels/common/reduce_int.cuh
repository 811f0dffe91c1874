// Integer reductions into global words: a warp reduction, then a block reduction through
// shared memory, then ONE atomic per block. (Per-warp atomics on one address serialise in
// L2: 64K of them cost ~300 us on an H200, measured on find_min_max at batch 65536.)
// Every thread of the block must call these; blockDim.x a multiple of 32.
#pragma once
#include <climits>

struct NoMinMaxTail {  // block_min_max's default tail: the caller reads lo and hi (warp 0)
    __device__ __forceinline__ void operator()(int, int, int) const {}
};

// Block-wide min of lo and max of hi, through s_lo and s_hi (32 ints each, shared): warp 0
// ends with the block's values in lo and hi and calls tail(lane, lo, hi). NW: the block's
// warps where the kernel fixes them at compile time (BLOCK / 32), else 0 (blockDim.x / 32).
template <int NW = 0, class Tail = NoMinMaxTail>
__device__ __forceinline__ void block_min_max(int& lo, int& hi, int* s_lo, int* s_hi,
                                              Tail tail = Tail()) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    lo = __reduce_min_sync(0xffffffffu, lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
    if (lane == 0) { s_lo[warp] = lo; s_hi[warp] = hi; }
    __syncthreads();
    if (warp == 0) {
        const int nw = NW > 0 ? NW : blockDim.x >> 5;
        lo = __reduce_min_sync(0xffffffffu, lane < nw ? s_lo[lane] : INT_MAX);
        hi = __reduce_max_sync(0xffffffffu, lane < nw ? s_hi[lane] : INT_MIN);
        tail(lane, lo, hi);
    }
}

// The block's min of lo into *mn and max of hi into *mx (either may be null): one atomic each.
__device__ __forceinline__ void block_atomic_min_max(int lo, int hi, int* mn, int* mx) {
    __shared__ int s_lo[32], s_hi[32];
    block_min_max(lo, hi, s_lo, s_hi, [=](int lane, int block_lo, int block_hi) {
        if (lane == 0) {
            if (mn) atomicMin(mn, block_lo);
            if (mx) atomicMax(mx, block_hi);
        }
    });
}
