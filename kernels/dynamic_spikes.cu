// SPEC step 1, dynamic_spikes:
//   vth[b]   = (sum_f |x[b,f]| / F) / k, clamped to [vth_min, vth_max]
//   q[b,f]   = round(x[b,f] / vth[b])  (true float32 division), 0 where vth[b] == 0
// One block per row (common/threshold.cuh, shared with activation_fused); q is written with
// 16-byte stores where F % 4 == 0.
#include "threshold.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK)
dynamic_spikes(const float* __restrict__ x, int* __restrict__ q, float* __restrict__ vth,
               int B, int F, float k, float vth_min, float vth_max) {
    __shared__ float scratch[32];
    const int b = blockIdx.x;
    if (b >= B) return;  // whole block leaves together: no barrier is skipped
    const size_t row = (size_t)b * (size_t)F;
    int* qr = q + row;
    const float t = quantise_row(
        x + row, F, k, vth_min, vth_max, scratch,
        [=](int i, int4 v) { reinterpret_cast<int4*>(qr)[i] = v; },
        [=](int f, int v) { qr[f] = v; });
    if (threadIdx.x == 0) vth[b] = t;
}
