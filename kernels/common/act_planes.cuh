// activation_fused's int8 plane layout (LAYOUT 0): SPEC step 3's planes [T, B, F] int8,
// written by pass 2 either from q8 over the flat index (encode_from_q8) or, a block per row,
// from x (encode_row). Planes are [T, B*F] too, so the flat index needs no row boundaries.
#pragma once
#include "act_q8.cuh"
#include "threshold.cuh"  // quantise: encode_row's q, the same as pass 1's

typedef signed char out_t;

// Plane t's byte of four values from byte_planes: 0/1, and -1 (0xFF) for a negative
// bidirectional value and in twos_complement's sign plane.
__device__ __forceinline__ unsigned plane_word(unsigned mag, unsigned neg, int t, int T) {
    const unsigned bits = plane_bits(mag, t, T);
#if MODE == 1
    return ((bits * 0xFFu) & neg) | (bits & ~neg);
#elif MODE == 2
    return t == 0 ? bits * 0xFFu : bits;
#else
    (void)neg;
    return bits;
#endif
}

// Values 4i..4i+3 (v = q - o) into the T planes, `plane` bytes apart from `base`.
__device__ __forceinline__ void put_planes(signed char* __restrict__ base, size_t plane,
                                           int i, int4 v, int T) {
    if (T <= 8) {
        // Every value fits a byte (its low T bits for twos_complement): one word holds the
        // four, and plane p of all four is (word >> p) & 0x01010101.
        unsigned mag, neg;
        byte_planes(v, mag, neg);
        for (int t = 0; t < T; ++t)
            reinterpret_cast<unsigned*>(base + (size_t)t * plane)[i] = plane_word(mag, neg, t, T);
        return;
    }
    for (int t = 0; t < T; ++t) {
        const char4 s = make_char4(spike_plane(v.x, t, T), spike_plane(v.y, t, T),
                                   spike_plane(v.z, t, T), spike_plane(v.w, t, T));
        reinterpret_cast<char4*>(base + (size_t)t * plane)[i] = s;
    }
}

// Pass 2 from q8 (q8_usable): planes are [T, n] with n = B * F. Where n % 16 == 0, 16
// values a unit: one 16-byte load and one 16-byte store a plane.
__device__ __forceinline__ bool encode_from_q8(const signed char* __restrict__ q8, int qmin,
                                               int qmax, int o, int T, int B, int F,
                                               signed char* __restrict__ spikes) {
    if (!q8_usable(qmin, qmax, T)) return false;
    const size_t n = (size_t)B * (size_t)F;
    const size_t threads = (size_t)gridDim.x * BLOCK;
    const size_t gtid = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    if ((n & 15) != 0) {  // one value a thread-step
        for (size_t e = gtid; e < n; e += threads) {
            const int v = (int)q8[e] - o;
            for (int t = 0; t < T; ++t) spikes[(size_t)t * n + e] = spike_plane(v, t, T);
        }
        return true;
    }
    const uint4* src = reinterpret_cast<const uint4*>(q8);
    for_each_unit<ENC_UNITS>(
        n >> 4, [=](size_t u) { return __ldg(src + u); },
        [=](size_t u, uint4 w) {
            unsigned m0, m1, m2, m3, g0, g1, g2, g3;
            byte_planes(minus_o(w.x, o), m0, g0);
            byte_planes(minus_o(w.y, o), m1, g1);
            byte_planes(minus_o(w.z, o), m2, g2);
            byte_planes(minus_o(w.w, o), m3, g3);
            for (int t = 0; t < T; ++t)
                reinterpret_cast<uint4*>(spikes + (size_t)t * n)[u] =
                    make_uint4(plane_word(m0, g0, t, T), plane_word(m1, g1, t, T),
                               plane_word(m2, g2, t, T), plane_word(m3, g3, t, T));
        });
    return true;
}

// Row b's planes, from x, its vth t and the decision (o, T).
__device__ __forceinline__ void encode_row(const float* __restrict__ x, float t, int o, int T,
                                           int B, int F, int b, signed char* __restrict__ spikes) {
    const size_t row = (size_t)b * (size_t)F, plane = (size_t)B * (size_t)F;
    const int tid = threadIdx.x;
    if ((F & 3) == 0) {
        // Every load of the row issued before any store (CACHE_VEC float4 in flight).
        const float4* xr = reinterpret_cast<const float4*>(x + row);
        signed char* base = spikes + row;
        const int n4 = F >> 2;
        for (int i0 = 0; i0 < n4; i0 += CACHE_VEC * BLOCK) {
            float4 c[CACHE_VEC];
#pragma unroll
            for (int j = 0; j < CACHE_VEC; ++j) {
                const int i = i0 + tid + j * BLOCK;
                if (i < n4) c[j] = __ldg(xr + i);
            }
#pragma unroll
            for (int j = 0; j < CACHE_VEC; ++j) {
                const int i = i0 + tid + j * BLOCK;
                if (i < n4)
                    put_planes(base, plane, i,
                               make_int4(quantise(c[j].x, t) - o, quantise(c[j].y, t) - o,
                                         quantise(c[j].z, t) - o, quantise(c[j].w, t) - o), T);
            }
        }
    } else {
        for (int f = tid; f < F; f += BLOCK) {
            const int v = quantise(__ldg(x + row + f), t) - o;
            for (int p = 0; p < T; ++p) spikes[(size_t)p * plane + row + f] = spike_plane(v, p, T);
        }
    }
}
