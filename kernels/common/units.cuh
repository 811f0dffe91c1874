// Streaming over units of 4 values (an int4 of int32, a 4-byte word of an int8 plane), for
// the kernels that read or write the [T, n] planes (spike_encode, spike_decode).
//
// Warps take chunks of 32 * U consecutive units, grid-strided; lane l of a warp holds units
// c + l, c + 32 + l, ..., c + 32 (U-1) + l of chunk c. So each of the warp's U accesses to a
// plane is 128 contiguous bytes (a whole line; 512 for int4), every access of a lane to one
// plane is its first address plus a constant (128 j bytes), and a lane issues all its U
// loads before it uses any: U times the bytes in flight of one unit a thread.
// BPS blocks an SM fit at once (held by __launch_bounds__). The grid is the plugin's, from
// WARP_STEPS: blocks enough that no warp takes more than WARP_STEPS chunks, blocks retiring
// and the next taking their SM (0: one wave of the blocks that fit, warps striding).
#pragma once

#ifndef BLOCK
#define BLOCK 256
#endif

// Whether a chunk is whole, as a type: Whole<true>::value lets the body drop its bounds
// checks at compile time in every chunk but the last.
template <bool B>
struct Whole {
    static constexpr bool value = B;
};

// body(u, whole) for each chunk of the lane: its units are u + 32 j (j < U), u = c + lane;
// whole is Whole<true>() where all 32 U units of the chunk exist, else Whole<false>() (the
// body checks u + 32 j < units). Every lane of a warp runs the same chunks.
template <int U, class Body>
__device__ __forceinline__ void for_each_chunk(long long units, Body body) {
    const long long warps = (long long)gridDim.x * (BLOCK / 32);
    const int lane = threadIdx.x & 31;
    for (long long c = ((long long)blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5)) * 32 * U;
         c < units; c += warps * 32 * U) {
        if (c + 32 * U <= units) body(c + lane, Whole<true>());
        else body(c + lane, Whole<false>());
    }
}
