// SPEC step 6, gemm: out[b, o] = sum_f x_rec[b, f] * (w_q[o, f] * scale[o, f / G]) + bias[o].
// A plain FP32 tiled GEMM (64x64 output tile, 16-deep k slices in shared memory, 4x4 outputs
// per thread of a 16x16 block) that dequantises w_q as it loads it. Any B, O, F and G.
#define TM 64
#define TN 64
#define TK 16

extern "C" __global__ void __launch_bounds__(256)
gemm(const float* __restrict__ x, const signed char* __restrict__ w_q,
     const float* __restrict__ scale, const float* __restrict__ bias, int B, int O, int F,
     int G, float* __restrict__ out) {
    __shared__ float As[TK][TM + 4];
    __shared__ float Ws[TK][TN + 4];
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
    const int ng = (F + G - 1) / G;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < F; k0 += TK) {
#pragma unroll 1
        for (int e = threadIdx.x; e < TM * TK; e += 256) {
            const int r = e / TK, kk = e % TK, k = k0 + kk;
            const int b = row0 + r, o = col0 + r;
            As[kk][r] = (b < B && k < F) ? __ldg(x + (size_t)b * F + k) : 0.0f;
            Ws[kk][r] = (o < O && k < F)
                ? __fmul_rn((float)__ldg(w_q + (size_t)o * F + k), __ldg(scale + (size_t)o * ng + k / G))
                : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; ++kk) {
            float a[4], wv[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[kk][ty * 4 + i];
#pragma unroll
            for (int j = 0; j < 4; ++j) wv[j] = Ws[kk][tx * 4 + j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], wv[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int b = row0 + ty * 4 + i;
        if (b >= B) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int o = col0 + tx * 4 + j;
            if (o < O) out[(size_t)b * O + o] = acc[i][j] + __ldg(bias + o);
        }
    }
}
