// SPEC step 5, dynamic_spikes_reverse: x_rec[b, f] = q'[b, f] * vth[b] (float32).
// One block per row (vth read once), 16-byte accesses where F % 4 == 0. __fmul_rn keeps
// the product a single rounding, whatever contraction the compiler would like.
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
dynamic_spikes_reverse(const int* __restrict__ q, const float* __restrict__ vth, int B, int F,
                       float* __restrict__ x_rec) {
    const int b = blockIdx.x;
    if (b >= B) return;
    const float t = __ldg(vth + b);
    const size_t row = (size_t)b * (size_t)F;
    if ((F & 3) == 0) {
        const int4* q4 = reinterpret_cast<const int4*>(q + row);
        float4* x4 = reinterpret_cast<float4*>(x_rec + row);
        for (int i = threadIdx.x; i < (F >> 2); i += BLOCK) {
            const int4 v = __ldg(q4 + i);
            x4[i] = make_float4(__fmul_rn((float)v.x, t), __fmul_rn((float)v.y, t),
                                __fmul_rn((float)v.z, t), __fmul_rn((float)v.w, t));
        }
    } else {
        for (int i = threadIdx.x; i < F; i += BLOCK)
            x_rec[row + i] = __fmul_rn((float)__ldg(q + row + i), t);
    }
}
