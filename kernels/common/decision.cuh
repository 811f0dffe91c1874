// SPEC steps 2b and 2d: the encoding decision made from the whole tensor's [qmin, qmax] and
// the mode (0 unidirectional, 1 bidirectional, 2 twos_complement). Used by the kernels that
// decide on the device: transform_absmax's transform_init and activation_fused.
#pragma once

// Step 2b, the offset o (v = q - o): the minimum when a unidirectional q goes below 0; the
// half-up transform ceil(qmax / 2) when a signed coding gets a q >= 0 (one bit fewer);
// otherwise 0.
__device__ __forceinline__ int transform_offset(int qmin, int qmax, int mode) {
    int o = 0;
    if (mode == 0 && qmin < 0) o = qmin;                      // offset by the minimum
    else if (mode != 0 && qmin >= 0) o = (qmax + 1) / 2;      // half-up: ceil(qmax / 2)
    return o;
}

// Step 2d, T from amax = max |v| by its integer bit length (no floating log2): at least one
// plane, and twos_complement's sign plane on top.
__device__ __forceinline__ int plane_count(long long amax, int mode) {
    const int bits = 64 - __clzll(amax);
    return mode == 2 ? bits + 1 : max(1, bits);
}
