// SPEC weight step B on one value: w_q = round(w / s) (half to even, true float32 division)
// as int8 in [-127, 127], 0 where the group's scale s is 0. Shared by weight_quantize and
// weight_quant_fused, and emulated in NumPy by tests/spikes/test_quantise_rule.py.
#pragma once

// The rule as SPEC writes it: one IEEE division.
__device__ __forceinline__ float quantise_w_rounded(float w, float s) {
    return rintf(__fdiv_rn(w, s));
}

__device__ __forceinline__ signed char quantise_w_clamp(float r) {
    return (signed char)fminf(fmaxf(r, -127.0f), 127.0f);
}

__device__ __forceinline__ signed char quantise_w(float w, float s) {
    if (s == 0.0f) return 0;
    return quantise_w_clamp(quantise_w_rounded(w, s));
}

// The same value without a division or a float-to-int conversion, where it is safe to say
// so: quantise_w_bits(w, inv, ok) with inv = __frcp_rn(s) returns bits whose low byte is
// quantise_w(w, s) as int8, or clears ok (then call quantise_w(w, s)).
//   y = fl(w * inv)           within |w / s| * 1.8e-7 of fl(w / s) (three roundings of
//                             2^-24; inv normal, or subnormal only for |s| > 2^126 where
//                             its 2^-22 error still keeps the bound under 5e-5 below)
//   t = fl(y + 1.5 * 2^23)    floats in [2^23, 2^24) are 1 apart: t is y rounded to an
//                             integer, half to even (for |y| < 2^22), so r = t - 1.5 * 2^23
//                             == rintf(y) exactly, and t's low byte is r's (the constant's
//                             low 22 bits are 0)
//   d = y - r                 exact, |d| <= 0.5
// The fast path needs |d| < 0.4999 (y farther than 9.9e-5 from a half) and |r| <= 127:
//   BOUNDED: s = fl(max |w| / 127) over w's own group (weight_quant_fused). Wherever inv is
//            finite, s >= 2^-128 has relative error <= 2^-22, so |w / s| <= 127.00003 and
//            |y| < 127.5: r never needs the clamp, and |y - fl(w / s)| <= 2.3e-5.
//   else:    any scale (weight_quantize's input): |y| < 127.5 is checked too, which gives
//            |w / s| < 127.50003 and |y - fl(w / s)| <= 2.3e-5 (4.6e-5 with a subnormal inv).
// Either way fl(w / s) lies strictly inside (r - 0.5, r + 0.5), so rintf gives r. A
// non-finite y (s == 0: inv = inf, w * inf = inf or NaN; s so small that inv overflows)
// makes d NaN and clears ok: the division decides, and s == 0 gives 0 there.
constexpr float kRintMagic = 12582912.0f;  // 1.5 * 2^23

template <bool BOUNDED>
__device__ __forceinline__ unsigned quantise_w_bits(float w, float inv, bool& ok) {
    const float y = __fmul_rn(w, inv);
    const float t = __fadd_rn(y, kRintMagic);
    const float d = __fsub_rn(y, __fsub_rn(t, kRintMagic));
    ok &= fabsf(d) < 0.4999f;
    if (!BOUNDED) ok &= fabsf(y) < 127.5f;
    return __float_as_uint(t);
}

// The low bytes of a, b, c, d as one word (a in the lowest byte: w_q[f] .. w_q[f + 3]).
__device__ __forceinline__ unsigned pack_low_bytes(unsigned a, unsigned b, unsigned c,
                                                   unsigned d) {
    return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
}

// Four values' w_q as a word, by the fast path, ok cleared where it does not hold.
template <bool BOUNDED>
__device__ __forceinline__ unsigned quantise_w4_fast(float4 v, float inv, bool& ok) {
    return pack_low_bytes(quantise_w_bits<BOUNDED>(v.x, inv, ok),
                          quantise_w_bits<BOUNDED>(v.y, inv, ok),
                          quantise_w_bits<BOUNDED>(v.z, inv, ok),
                          quantise_w_bits<BOUNDED>(v.w, inv, ok));
}

// Four values' w_q as a word, by the division.
__device__ __forceinline__ unsigned quantise_w4(float4 v, float s) {
    return (unsigned)(unsigned char)quantise_w(v.x, s) |
           (unsigned)(unsigned char)quantise_w(v.y, s) << 8 |
           (unsigned)(unsigned char)quantise_w(v.z, s) << 16 |
           (unsigned)(unsigned char)quantise_w(v.w, s) << 24;
}
