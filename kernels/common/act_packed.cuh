// activation_fused's bit-packed plane layout (LAYOUT 1): planes [P, B, W] uint32 with
// W = ceil(F / 32); bit j of word w is value 32w + j (padding bits 0). Unidirectional and
// twos_complement: P = T planes of the bits (plane 0 of twos_complement is the sign bit,
// worth -2^(T-1)); bidirectional: T magnitude planes and a sign plane (P = T + 1).
// Pass 2 writes them from q8 over the flat word index (encode_from_q8, rows of F % 32 == 0)
// or, a block per row, from x (encode_row).
#pragma once
#include "act_q8.cuh"
#include "threshold.cuh"  // quantise: encode_row's q, the same as pass 1's

#ifndef PACK_TRANSPOSE
#define PACK_TRANSPOSE 1  // pass 2 from q8: planes by 8 x 8 bit transposes (0: byte gathers)
#endif
#ifndef PACK_UNROLL
#define PACK_UNROLL 4  // words a warp loads before packing: 512 bytes in flight per warp
#endif

typedef unsigned out_t;

// Bit `t` of plane t's word for value v (see the layout above).
__device__ __forceinline__ bool packed_bit(int v, int t, int T) {
#if MODE == 1
    return t == T ? v < 0 : ((abs(v) >> (T - 1 - t)) & 1);
#else
    return ((unsigned)v >> (T - 1 - t)) & 1u;
#endif
}

// 0x00/0x01 bytes b0..b3 of w as the four bits b0 | b1 << 1 | b2 << 2 | b3 << 3: the
// multiply puts byte i's bit at 21 + i, and no two partial products share a bit.
__device__ __forceinline__ unsigned gather4(unsigned w) { return ((w * 0x00204081u) >> 21) & 0xFu; }

struct Q8Word {  // 32 values of q8: one packed word
    uint4 lo, hi;
};

// The 8 x 8 bit matrix whose row i is byte i of (lo, hi) (bytes 0-3 of lo, 4-7 of hi),
// transposed in place: bit j of byte i moves to bit i of byte j (the three delta swaps of
// Hacker's Delight's transpose8 on the two 32-bit halves).
__device__ __forceinline__ void transpose8(unsigned& lo, unsigned& hi) {
    unsigned t;
    t = (lo ^ (lo >> 7)) & 0x00AA00AAu; lo ^= t ^ (t << 7);
    t = (hi ^ (hi >> 7)) & 0x00AA00AAu; hi ^= t ^ (t << 7);
    t = (lo ^ (lo >> 14)) & 0x0000CCCCu; lo ^= t ^ (t << 14);
    t = (hi ^ (hi >> 14)) & 0x0000CCCCu; hi ^= t ^ (t << 14);
    t = (lo ^ (hi << 4)) & 0xF0F0F0F0u; lo ^= t; hi ^= t >> 4;
}

// Pass 2 from q8 (q8_usable, F % 32 == 0: rows need no padding): a thread-step is
// ENC_UNITS / 2 words of 32 values, two 16-byte loads each. PACK_TRANSPOSE: the word's
// bytes v = q - o (their low 8 bits, or |v| bidirectional) as four 8 x 8 bit matrices,
// transposed, so byte j of each holds bit j of eight values; a plane's word is four such
// bytes (three byte permutes). Else each plane's bits are gathered a byte at a time.
__device__ __forceinline__ bool encode_from_q8(const signed char* __restrict__ q8, int qmin,
                                               int qmax, int o, int T, int B, int F,
                                               unsigned* __restrict__ packed) {
    if (!q8_usable(qmin, qmax, T) || (F & 31) != 0) return false;
    constexpr int U = ENC_UNITS / 2 > 0 ? ENC_UNITS / 2 : 1;
    const size_t words = (size_t)B * (size_t)(F >> 5);
    const uint4* src = reinterpret_cast<const uint4*>(q8);
#if PACK_TRANSPOSE && MODE != 1
    const unsigned o4 = (unsigned)(o & 0xFF) * 0x01010101u;  // o in each byte
#endif
    for_each_unit<U>(
        words, [=](size_t wi) { return Q8Word{__ldg(src + 2 * wi), __ldg(src + 2 * wi + 1)}; },
        [=](size_t wi, Q8Word w) {
            const unsigned q[8] = {w.lo.x, w.lo.y, w.lo.z, w.lo.w, w.hi.x, w.hi.y, w.hi.z, w.hi.w};
#if PACK_TRANSPOSE
            unsigned m[8];
#if MODE == 1
            unsigned g[8];
#endif
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#if MODE == 1
                byte_planes(minus_o(q[i], o), m[i], g[i]);
#else
                m[i] = __vsub4(q[i], o4);  // (q - o) mod 256 a byte: v's low 8 bits
#endif
            }
#pragma unroll
            for (int k = 0; k < 4; ++k) transpose8(m[2 * k], m[2 * k + 1]);
            // Bit j of v is plane T-1-j: byte j of the four matrices, value 8k + i at bit
            // 8k + i (matrix k's byte in byte k of the word).
            unsigned* plane = packed + (size_t)(T - 1) * words + wi;  // plane T-1-j, j = 0
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                if (j >= T) break;
                const int h = j >> 2, sel = (j & 3) | ((j & 3) + 4) << 4;
                const unsigned a = __byte_perm(m[h], m[2 + h], sel);
                const unsigned b = __byte_perm(m[4 + h], m[6 + h], sel);
                *plane = __byte_perm(a, b, 0x5410);
                plane -= words;
            }
#if MODE == 1
            unsigned sign = 0;  // the sign plane, p == T
#pragma unroll
            for (int i = 0; i < 8; ++i) sign |= gather4(g[i] & 0x01010101u) << (4 * i);
            packed[(size_t)T * words + wi] = sign;
#endif
#else
            const int P = MODE == 1 ? T + 1 : T;
            unsigned m[8], g[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) byte_planes(minus_o(q[i], o), m[i], g[i]);
            for (int p = 0; p < P; ++p) {
                unsigned word = 0;
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    // The sign plane (bidirectional, p == T) takes the sign bytes.
                    const unsigned b = MODE == 1 && p == T ? g[i] & 0x01010101u
                                                           : plane_bits(m[i], p, T);
                    word |= gather4(b) << (4 * i);
                }
                packed[(size_t)p * words + wi] = word;
            }
#endif
        });
    return true;
}

// Row b's packed planes, from x, its vth t and the decision (o, T): a warp a word, one
// ballot a plane.
__device__ __forceinline__ void encode_row(const float* __restrict__ x, float t, int o, int T,
                                           int B, int F, int b, unsigned* __restrict__ packed) {
    const int W = (F + 31) >> 5;
    const size_t row = (size_t)b * (size_t)F, plane = (size_t)B * (size_t)W;
    const int P = MODE == 1 ? T + 1 : T;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    constexpr int NW = BLOCK >> 5;
    for (int w0 = warp * PACK_UNROLL; w0 < W; w0 += NW * PACK_UNROLL) {
        float c[PACK_UNROLL];
#pragma unroll
        for (int u = 0; u < PACK_UNROLL; ++u) {
            const int f = (w0 + u) * 32 + lane;
            c[u] = f < F ? __ldg(x + row + f) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < PACK_UNROLL; ++u) {
            const int w = w0 + u;
            if (w >= W) break;  // warp-uniform
            const int f = w * 32 + lane;
            const int v = f < F ? quantise(c[u], t) - o : 0;  // padding bits are 0
            unsigned mine = 0;
            for (int p = 0; p < P; ++p) {
                const unsigned word = __ballot_sync(0xffffffffu, packed_bit(v, p, T));
                if (lane == p) mine = word;
            }
            if (lane < P) packed[(size_t)lane * plane + (size_t)b * W + w] = mine;
        }
    }
}
