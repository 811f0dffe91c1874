// Bitwise spike coding (SPEC step 3). Plane t (0 = most significant) of v, T planes:
//   MODE 0 unidirectional:  (v >> p) & 1                       in {0, 1}
//   MODE 1 bidirectional:   sign(v) * ((|v| >> p) & 1)         in {-1, 0, 1}
//   MODE 2 twos_complement: bit p of v's T-bit word; plane 0 (the sign bit) carries -1
// with p = T - 1 - t, so that sum_t 2^(T-1-t) * plane_t == v.
#pragma once

#ifndef MODE
#define MODE 0
#endif

__device__ __forceinline__ signed char spike_plane(int v, int t, int T) {
    const int p = T - 1 - t;
#if MODE == 0
    return (signed char)((v >> p) & 1);
#elif MODE == 1
    const int bit = (abs(v) >> p) & 1;
    return (signed char)(v < 0 ? -bit : bit);
#else
    const int bit = (int)(((unsigned)v >> p) & 1u);  // p <= T-1 < 32: bits above T unused
    return (signed char)(t == 0 ? -bit : bit);
#endif
}
