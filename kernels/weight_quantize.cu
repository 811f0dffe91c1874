// Weight path step B, weight_quantize: w_q[o, f] = round(w[o, f] / scale[o, f / G]) as int8
// in [-127, 127]; a zero scale gives 0. One block per row; the row's scales are cached in
// shared memory (when they fit: use_smem), w is read with 16-byte float4 loads and w_q
// written 4 bytes at a time where F % 4 == 0 (every row then is aligned), scalar otherwise.
#include "quantise_w.cuh"  // quantise_w(w, s): the rule, one IEEE division per value

#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
weight_quantize(const float* __restrict__ w, const float* __restrict__ scale, int O, int F,
                int G, int use_smem, signed char* __restrict__ w_q) {
    extern __shared__ float s_scale[];
    const int o = blockIdx.x;
    if (o >= O) return;
    const int ng = (F + G - 1) / G;
    const float* srow = scale + (size_t)o * ng;
    if (use_smem) {
        for (int g = threadIdx.x; g < ng; g += BLOCK) s_scale[g] = __ldg(srow + g);
        __syncthreads();
    }
    const float* sc = use_smem ? s_scale : srow;
    const size_t row = (size_t)o * (size_t)F;
    if ((F & 3) == 0) {
        const float4* w4 = reinterpret_cast<const float4*>(w + row);
        char4* q4 = reinterpret_cast<char4*>(w_q + row);
        for (int i = threadIdx.x; i < (F >> 2); i += BLOCK) {
            const float4 v = __ldg(w4 + i);
            const int f = 4 * i;
            q4[i] = make_char4(quantise_w(v.x, sc[f / G]), quantise_w(v.y, sc[(f + 1) / G]),
                               quantise_w(v.z, sc[(f + 2) / G]), quantise_w(v.w, sc[(f + 3) / G]));
        }
    } else {
        for (int f = threadIdx.x; f < F; f += BLOCK)
            w_q[row + f] = quantise_w(__ldg(w + row + f), sc[f / G]);
    }
}
