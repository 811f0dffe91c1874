// SPEC step 4, spike_decode: q'[i] = sum_t 2^(T-1-t) * spikes[t, i] + o (int32).
// The same for every mode: the planes carry their signs. Horner's rule, most significant
// plane first. Where n % 4 == 0, warps stream over units of 4 values (common/units.cuh): a
// lane loads a 4-byte word of each plane for UNITS units, all of them (T * UNITS words,
// T <= 8) before any is summed, sums a word's four values two at a time (Horner8), then
// stores each unit's int4. Past 8 planes the planes are read a plane at a time and summed
// value by value; a scalar grid-stride loop covers n % 4 != 0.
#include "units.cuh"

#ifndef UNITS
#define UNITS 2  // units a lane loads before it sums: T * UNITS words in flight
#endif
#ifndef BPS
#define BPS 4    // blocks an SM the registers must allow (resident at once)
#endif
#ifndef WARP_STEPS
#define WARP_STEPS 1  // the plugin's grid only: n > 0 blocks enough for n chunks a warp (blocks
                      // retiring and refilling: 3.6 % faster at 16384 rows on an H100, kernels/NOTES.md);
                      // 0 one persistent wave
#endif

// Horner's rule on four values at once, for T <= 8 planes: each plane byte s (any int8) is
// biased to s + 128 in [0, 255] and summed in a 16-bit lane (values 0 and 2 in `even`, 1
// and 3 in `odd`). A lane's sum is at most 255 (2^T - 1) < 2^16, so no lane carries into
// the next, and sum_t 2^(T-1-t) s_t is the lane minus 128 (2^T - 1): exact.
struct Horner8 {
    unsigned even = 0u, odd = 0u;

    __device__ __forceinline__ void add(unsigned w) {
        const unsigned u = w ^ 0x80808080u;
        even = 2u * even + (u & 0x00FF00FFu);
        odd = 2u * odd + __byte_perm(u, 0u, 0x4341);  // bytes 1 and 3 of u, zero-extended
    }

    // The four sums plus o, from base = o - 128 (2^T - 1) (wrapping as int32 adds do).
    __device__ __forceinline__ int4 sums(unsigned base) const {
        return make_int4((int)((even & 0xFFFFu) + base), (int)((odd & 0xFFFFu) + base),
                         (int)((even >> 16) + base), (int)((odd >> 16) + base));
    }
};

// acc = 2 acc + plane, for four values and one plane word of four int8.
__device__ __forceinline__ int4 horner4(int4 a, unsigned w) {
    return make_int4(2 * a.x + (int)(signed char)(w & 0xFFu),
                     2 * a.y + (int)(signed char)((w >> 8) & 0xFFu),
                     2 * a.z + (int)(signed char)((w >> 16) & 0xFFu),
                     2 * a.w + (int)(signed char)(w >> 24));
}

extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
spike_decode(const signed char* __restrict__ spikes, long long n, int T,
             const int* __restrict__ o, int* __restrict__ q) {
    const int off = __ldg(o);
    if ((n & 3) == 0) {
        const long long units = n >> 2;
        const unsigned* planes = reinterpret_cast<const unsigned*>(spikes);  // units words a plane
        int4* q4 = reinterpret_cast<int4*>(q);
        for_each_chunk<UNITS>(units, [&](long long u, auto whole) {
            constexpr bool all = decltype(whole)::value;
            if (T <= 8) {
                unsigned w[8][UNITS];
                const unsigned* p = planes + u;
#pragma unroll
                for (int t = 0; t < 8; ++t) {
                    if (t >= T) break;  // uniform
#pragma unroll
                    for (int j = 0; j < UNITS; ++j)
                        if (all || u + 32 * j < units) w[t][j] = __ldg(p + 32 * j);
                    p += units;
                }
                Horner8 h[UNITS];
#pragma unroll
                for (int t = 0; t < 8; ++t) {
                    if (t >= T) break;
#pragma unroll
                    for (int j = 0; j < UNITS; ++j) h[j].add(w[t][j]);
                }
                const unsigned base = (unsigned)off - 128u * ((1u << T) - 1u);
#pragma unroll
                for (int j = 0; j < UNITS; ++j)
                    if (all || u + 32 * j < units) q4[u + 32 * j] = h[j].sums(base);
                return;
            }
            int4 acc[UNITS];
#pragma unroll
            for (int j = 0; j < UNITS; ++j) acc[j] = make_int4(0, 0, 0, 0);
            const unsigned* p = planes + u;
            for (int t = 0; t < T; ++t, p += units) {
#pragma unroll
                for (int j = 0; j < UNITS; ++j)
                    if (all || u + 32 * j < units) acc[j] = horner4(acc[j], __ldg(p + 32 * j));
            }
#pragma unroll
            for (int j = 0; j < UNITS; ++j)
                if (all || u + 32 * j < units)
                    q4[u + 32 * j] = make_int4(acc[j].x + off, acc[j].y + off, acc[j].z + off,
                                               acc[j].w + off);
        });
    } else {
        const long long stride = (long long)gridDim.x * BLOCK;
        for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
            int acc = 0;
            for (int t = 0; t < T; ++t) acc = 2 * acc + __ldg(spikes + (long long)t * n + i);
            q[i] = acc + off;
        }
    }
}
