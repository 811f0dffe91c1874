// SPEC step 3, spike_encode: v [n] int32 -> spikes [T, n] int8, the mode fixed by -DMODE.
// Where n % 4 == 0, warps stream over units of 4 values (common/units.cuh): a lane loads
// UNITS int4 (all before it stores), and writes each unit to every plane as one 4-byte word
// (each warp store a whole 128-byte line). With T <= 8 a plane's word is two operations on
// the four values' low bytes (plane_word); past 8 planes, spike_plane per value. A scalar
// grid-stride loop covers n % 4 != 0 (planes then are not 4-byte aligned).
#include "spikes.cuh"
#include "units.cuh"

#ifndef UNITS
#define UNITS 4  // int4 a lane loads before its stores: 64 bytes in flight
#endif
#ifndef BPS
#define BPS 4    // blocks an SM the registers must allow (resident at once)
#endif
#ifndef WARP_STEPS
#define WARP_STEPS 1  // the plugin's grid only: n > 0 blocks enough for n chunks a warp (blocks
                      // retiring and refilling: 4.1 % faster at 16384 rows on an H100, kernels/NOTES.md);
                      // 0 one persistent wave
#endif

// The four values' bytes, for T <= 8 planes: mag holds each value's low 8 bits (of |v| in
// bidirectional), neg is 0xFF in the bytes of negative values (bidirectional only). Bit
// p = T-1-t <= 7 of each byte is then spike_plane's bit p of that value.
__device__ __forceinline__ void plane_bytes(int4 v, unsigned& mag, unsigned& neg) {
#if MODE == 1
    mag = ((unsigned)abs(v.x) & 0xFFu) | ((unsigned)abs(v.y) & 0xFFu) << 8 |
          ((unsigned)abs(v.z) & 0xFFu) << 16 | (unsigned)abs(v.w) << 24;
    neg = (v.x < 0 ? 0xFFu : 0u) | (v.y < 0 ? 0xFF00u : 0u) | (v.z < 0 ? 0xFF0000u : 0u) |
          (v.w < 0 ? 0xFF000000u : 0u);
#else
    mag = ((unsigned)v.x & 0xFFu) | ((unsigned)v.y & 0xFFu) << 8 |
          ((unsigned)v.z & 0xFFu) << 16 | (unsigned)v.w << 24;
    neg = 0u;
#endif
}

// Plane t of the four values as one word of int8 (spike_plane of each): the bit as 0/1,
// or -1 (0xFF) for a negative bidirectional value and in twos_complement's sign plane.
__device__ __forceinline__ unsigned plane_word(unsigned mag, unsigned neg, int t, int T) {
    const unsigned bits = (mag >> (T - 1 - t)) & 0x01010101u;
#if MODE == 1
    return ((bits * 0xFFu) & neg) | (bits & ~neg);
#elif MODE == 2
    (void)neg;
    return t == 0 ? bits * 0xFFu : bits;
#else
    (void)neg;
    return bits;
#endif
}

__device__ __forceinline__ unsigned plane_word_any(int4 v, int t, int T) {
    return (unsigned)(unsigned char)spike_plane(v.x, t, T) |
           (unsigned)(unsigned char)spike_plane(v.y, t, T) << 8 |
           (unsigned)(unsigned char)spike_plane(v.z, t, T) << 16 |
           (unsigned)(unsigned char)spike_plane(v.w, t, T) << 24;
}

extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
spike_encode(const int* __restrict__ v, long long n, int T, signed char* __restrict__ spikes) {
    if ((n & 3) == 0) {
        const long long units = n >> 2;
        const int4* vq = reinterpret_cast<const int4*>(v);  // four values a load
        unsigned* planes = reinterpret_cast<unsigned*>(spikes);  // plane t: units words
        for_each_chunk<UNITS>(units, [&](long long u, auto whole) {
            constexpr bool all = decltype(whole)::value;
            int4 x[UNITS];
#pragma unroll
            for (int j = 0; j < UNITS; ++j)
                if (all || u + 32 * j < units) x[j] = __ldg(vq + u + 32 * j);
            unsigned* p = planes + u;
            if (T <= 8) {
                unsigned mag[UNITS], neg[UNITS];
#pragma unroll
                for (int j = 0; j < UNITS; ++j) plane_bytes(x[j], mag[j], neg[j]);
                for (int t = 0; t < T; ++t, p += units) {
#pragma unroll
                    for (int j = 0; j < UNITS; ++j)
                        if (all || u + 32 * j < units) p[32 * j] = plane_word(mag[j], neg[j], t, T);
                }
            } else {
                for (int t = 0; t < T; ++t, p += units) {
#pragma unroll
                    for (int j = 0; j < UNITS; ++j)
                        if (all || u + 32 * j < units) p[32 * j] = plane_word_any(x[j], t, T);
                }
            }
        });
    } else {
        const long long stride = (long long)gridDim.x * BLOCK;
        for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
            const int x = __ldg(v + i);
            for (int t = 0; t < T; ++t) spikes[(long long)t * n + i] = spike_plane(x, t, T);
        }
    }
}
