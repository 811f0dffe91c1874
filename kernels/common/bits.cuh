// Bit-matrix helpers shared by the kernels that pack and unpack spike planes.
#pragma once

namespace bits {

// x with the bits of (x ^ (x >> S)) & M swapped with those S places above them: one delta
// swap in four instructions (shift, lop3, shift, lop3), written in PTX because nvcc's own
// lowering of the C expression took six.
template <int S, unsigned M>
__device__ __forceinline__ unsigned delta_swap(unsigned x) {
    unsigned t, u;
    asm("shr.b32 %1, %2, %3;\n\t"
        "lop3.b32 %1, %1, %2, %4, 0x28;\n\t"  // (x >> S ^ x) & M
        "shl.b32 %0, %1, %3;\n\t"
        "lop3.b32 %0, %2, %1, %0, 0x96;"        // x ^ t ^ (t << S)
        : "=&r"(u), "=&r"(t) : "r"(x), "n"(S), "n"(M));
    return u;
}

// The 8 x 8 bit matrix whose row i is byte i of (lo, hi) (bytes 0-3 of lo, 4-7 of hi),
// transposed in place: bit j of byte i moves to bit i of byte j (the three delta swaps of
// Hacker's Delight's transpose8 on the two 32-bit halves).
__device__ __forceinline__ void transpose8(unsigned& lo, unsigned& hi) {
    lo = delta_swap<7, 0x00AA00AAu>(lo);
    hi = delta_swap<7, 0x00AA00AAu>(hi);
    lo = delta_swap<14, 0x0000CCCCu>(lo);
    hi = delta_swap<14, 0x0000CCCCu>(hi);
    const unsigned t = (lo ^ (hi << 4)) & 0xF0F0F0F0u;
    lo ^= t;
    hi ^= t >> 4;
}

// The 4 x 4 byte matrix whose row i is x_i, transposed: y_b holds byte b of x0, x1, x2, x3
// in its bytes 0-3 (eight byte permutes).
__device__ __forceinline__ void transpose4x4(unsigned x0, unsigned x1, unsigned x2, unsigned x3,
                                             unsigned& y0, unsigned& y1, unsigned& y2,
                                             unsigned& y3) {
    const unsigned t0 = __byte_perm(x0, x1, 0x5140), t1 = __byte_perm(x0, x1, 0x7362);
    const unsigned t2 = __byte_perm(x2, x3, 0x5140), t3 = __byte_perm(x2, x3, 0x7362);
    y0 = __byte_perm(t0, t2, 0x5410);
    y1 = __byte_perm(t0, t2, 0x7632);
    y2 = __byte_perm(t1, t3, 0x5410);
    y3 = __byte_perm(t1, t3, 0x7632);
}

}  // namespace bits
