// SPEC weight step B on one value: w_q = round(w / s) (half to even, true float32 division)
// as int8 in [-127, 127], 0 where the group's scale s is 0. Shared by weight_quantize and
// weight_quant_fused, and emulated in NumPy by tests/test_quantise_rule.py.
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

// The same value with inv = __frcp_rn(s): y = w * inv lies within 2e-5 of w / s
// (|w / s| <= 127.00001, two roundings of 2^-24), so rint(y) == rint(fl(w / s)) unless y is
// within 1e-4 of a half; there (a tie included), and for a non-finite y (s so small that inv
// overflows), the division is done exactly. One multiply instead of a division per value.
__device__ __forceinline__ signed char quantise_w(float w, float s, float inv) {
    if (s == 0.0f) return 0;
    const float y = w * inv;
    float r = rintf(y);
    if (!(fabsf(fabsf(y - r) - 0.5f) > 1e-4f)) r = quantise_w_rounded(w, s);
    return quantise_w_clamp(r);
}
