// A grid-wide integer min and max in one launch, with no initialising kernel and no atomics
// on the output: each block reduces its values (reduce_int.cuh's block_min_max), writes its
// (min, max) to a slot of its own and takes a ticket; the last block to take one reduces
// the slots and hands the result to the caller's tail. min and max are order-free, so the
// result is exact whichever block comes last. A one-block grid hands its own result over
// (no slot, no ticket). The output is written, never read: it need not be seeded.
// The slots and the ticket are the module's __device__ words, so a module runs one such
// launch at a time (its launches on one stream follow each other); the last block resets
// the ticket for the next launch. Every thread of the block must call grid_min_max;
// blockDim.x a multiple of 32.
#pragma once
#include "reduce_int.cuh"

// The most blocks a launch may have: harness/spikes/geometry.py's REDUCE_BLOCKS, the grid
// cap of the plugins that launch these kernels. A larger grid traps (it would overrun the
// slots).
#define LAST_MAX_BLOCKS 1024

// Blocks an SM keeps resident, for the kernels' __launch_bounds__: a full SM of threads (2048)
// over the block, at most 32 (an SM's most blocks). At BLOCK 256 that is 8 (at most 32
// registers), so a REDUCE_BLOCKS grid is resident at once on a 132-SM H200.
#ifndef BLOCK
#define BLOCK 256
#endif
#define LAST_SM_BLOCKS (2048 / BLOCK < 32 ? 2048 / BLOCK : 32)

__device__ int2 g_last_slots[LAST_MAX_BLOCKS];
__device__ unsigned int g_last_ticket = 0u;

// The grid's min of lo and max of hi, passed to tail(min, max) by one thread (thread 0 of
// the last block, or of the only one).
template <class Tail>
__device__ __forceinline__ void grid_min_max(int lo, int hi, Tail tail) {
    __shared__ int s_lo[32], s_hi[32];
    __shared__ bool s_last;
    block_min_max(lo, hi, s_lo, s_hi);  // thread 0 holds the block's
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) tail(lo, hi);
        return;
    }
    if (threadIdx.x == 0) {
        if (gridDim.x > LAST_MAX_BLOCKS) __trap();
        g_last_slots[blockIdx.x] = make_int2(lo, hi);
        __threadfence();  // the slot lands before the ticket
        const bool last = atomicAdd(&g_last_ticket, 1u) == gridDim.x - 1u;
        if (last) __threadfence();  // and the other blocks' slots are read after it
        s_last = last;
    }
    __syncthreads();  // also keeps the second block_min_max's s_lo writes after the first's reads
    if (!s_last) return;
    lo = INT_MAX;
    hi = INT_MIN;
    for (int i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
        const int2 s = __ldcg(g_last_slots + i);  // from L2: written by other SMs
        lo = min(lo, s.x);
        hi = max(hi, s.y);
    }
    block_min_max(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        tail(lo, hi);
        g_last_ticket = 0u;  // every block has taken its ticket: ready for the next launch
    }
}
