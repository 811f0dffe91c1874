// SPEC step 5, dynamic_spikes_reverse: x_rec[b, f] = q'[b, f] * vth[b] (float32).
// A block takes a chunk of one row: BLOCK x UNITS 16-byte units where F % 4 == 0 (single
// values otherwise), and its vth, read once. Every load of a thread is issued before any of
// its stores, so a block is one memory round trip, not UNITS of them in series (what a
// grid-strided loop over the row costs at small batches, where a launch is all latency).
// __fmul_rn keeps the product a single rounding, whatever contraction the compiler would like.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef UNITS
#define UNITS 4
#endif

// Grid (B * chunks): block i takes chunk i % chunks of row i / chunks, where chunks =
// ceil(n / (BLOCK * UNITS)) and n is F / 4 (F % 4 == 0) or F.
extern "C" __global__ void __launch_bounds__(BLOCK)
dynamic_spikes_reverse(const int* __restrict__ q, const float* __restrict__ vth, int B, int F,
                       int chunks, float* __restrict__ x_rec) {
    const int b = blockIdx.x / chunks, c = blockIdx.x - b * chunks;
    if (b >= B) return;
    const float t = __ldg(vth + b);
    const size_t row = (size_t)b * (size_t)F;
    const int i0 = c * (BLOCK * UNITS) + threadIdx.x;
    if ((F & 3) == 0) {
        const int n = F >> 2;
        const int4* q4 = reinterpret_cast<const int4*>(q + row);
        float4* x4 = reinterpret_cast<float4*>(x_rec + row);
        int4 v[UNITS];
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (i0 + j * BLOCK < n) v[j] = __ldg(q4 + i0 + j * BLOCK);
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (i0 + j * BLOCK < n)
                x4[i0 + j * BLOCK] = make_float4(__fmul_rn((float)v[j].x, t), __fmul_rn((float)v[j].y, t),
                                                 __fmul_rn((float)v[j].z, t), __fmul_rn((float)v[j].w, t));
    } else {
        int v[UNITS];
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (i0 + j * BLOCK < F) v[j] = __ldg(q + row + i0 + j * BLOCK);
#pragma unroll
        for (int j = 0; j < UNITS; ++j)
            if (i0 + j * BLOCK < F) x_rec[row + i0 + j * BLOCK] = __fmul_rn((float)v[j], t);
    }
}
