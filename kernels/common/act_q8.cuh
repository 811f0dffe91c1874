// activation_fused's pass 2 from q8, the pieces both plane layouts share (act_planes.cuh,
// act_packed.cuh). Pass 1 leaves q in the workspace q8 as int8 (clamped); pass 2 reads it,
// 1 byte a value instead of x's 4, whenever q8_usable. It then works on the flat [B*F]
// index, four values a 32-bit word: v = q - o of each, and the bits of v as bytes.
#pragma once
#include "spikes.cuh"  // MODE

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ENC_UNITS
#define ENC_UNITS 2  // 16-byte units of q8 a thread loads before storing: 32 bytes in flight
#endif

// Whether every q of the range [qmin, qmax] fits int8 (q8 then holds q exactly).
__device__ __forceinline__ bool fits_int8(int qmin, int qmax) {
    return qmin >= -128 && qmax <= 127;
}

// Whether pass 2 can take q from q8: every q fits int8 and T <= 8, so that v = q - o and
// each plane of four values fit one byte each (see plane_bits).
__device__ __forceinline__ bool q8_usable(int qmin, int qmax, int T) {
    return fits_int8(qmin, qmax) && T <= 8;
}

// Four values' v (each in [-255, 255], T <= 8) as bytes: mag holds |v| (bidirectional) or
// v's low 8 bits, neg is 0xFF in the bytes of negative values (bidirectional only).
__device__ __forceinline__ void byte_planes(int4 v, unsigned& mag, unsigned& neg) {
#if MODE == 1
    mag = (unsigned)abs(v.x) | (unsigned)abs(v.y) << 8 | (unsigned)abs(v.z) << 16 |
          (unsigned)abs(v.w) << 24;
    neg = (v.x < 0 ? 0xFFu : 0u) | (v.y < 0 ? 0xFF00u : 0u) | (v.z < 0 ? 0xFF0000u : 0u) |
          (v.w < 0 ? 0xFF000000u : 0u);
#else
    mag = (unsigned)(v.x & 0xFF) | (unsigned)(v.y & 0xFF) << 8 | (unsigned)(v.z & 0xFF) << 16 |
          (unsigned)(v.w & 0xFF) << 24;
    neg = 0u;
#endif
}

// Bit p = T-1-t of each byte of mag, as 0x00/0x01 bytes.
__device__ __forceinline__ unsigned plane_bits(unsigned mag, int t, int T) {
    return (mag >> (T - 1 - t)) & 0x01010101u;
}

// v = q - o of a word of four int8 q.
__device__ __forceinline__ int4 minus_o(unsigned w, int o) {
    return make_int4((int)(signed char)(w & 0xFFu) - o, (int)(signed char)((w >> 8) & 0xFFu) - o,
                     (int)(signed char)((w >> 16) & 0xFFu) - o, (int)(signed char)(w >> 24) - o);
}

// Units 0..units-1 of the flat index, grid-strided, U a thread-step: the step's U loads,
// load(u), are all issued before its first encode(u, loaded), so a thread has U units of
// q8 in flight.
template <int U, class Load, class Encode>
__device__ __forceinline__ void for_each_unit(size_t units, Load load, Encode encode) {
    const size_t threads = (size_t)gridDim.x * BLOCK;
    const size_t gtid = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    for (size_t u0 = gtid; u0 < units; u0 += threads * U) {
        decltype(load(u0)) w[U];
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const size_t u = u0 + j * threads;
            if (u < units) w[j] = load(u);
        }
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const size_t u = u0 + j * threads;
            if (u >= units) break;
            encode(u, w[j]);
        }
    }
}
