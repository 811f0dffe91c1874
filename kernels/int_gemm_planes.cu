// SPEC step 6 evaluated plane by plane, as spiking hardware evaluates the layer: every
// product of a spike plane and a weight bit plane is one binary MMA (AND, then popcount:
// mma.sync m16n8k128 .b1), and the shifts put the planes' significances back:
//   out[m, n] = vth[m] * sum_g scale[n, g] * S[m, n, g] + bias[n]
//   S[m, n, g] = sum_{f in g} q[m, f] w_q[n, f]
//              = sum_{s, r} 2^(s + r) D(s, 7 - r) - 128 sum_s 2^s D(s, 0) + o wsum[n, g]
// where D(s, p) = popcount(spike plane of significance s AND weight plane p) over the group
// (an exact int32 count, at most G), q = v + o with v = sum_s 2^s (its plane), and w_q in
// two's complement as 8 bit planes (plane 0 the sign, worth -128; plane p worth 2^(7 - p)).
// The positive terms run as one Horner chain over the exponent e = s + r (double, then
// accumulate every plane pair of that exponent into the MMA's C), the sign plane's as a
// second chain over s: T - 1 + 6 and T - 1 doublings an accumulator a 128-value chunk, 8 T
// binary MMAs. Every sum is an integer, so S is exact; one fp32 rounding per group's
// promotion and in the epilogue, as int_gemm's.
//   planes uint32 [P, M, W] (W = ceil(K / 32); bit j of word w is value 32 w + j; plane t of
//          the T written is worth 2^(T - 1 - t)), activation_fused's packed_unidirectional
//   stats  int32 [qmin, qmax, o, T]
//   w_bits uint32 [8, N, W], w_q's bit planes in the same packing (padding bits 0)
//   w_sum  int32 [N, ceil(K / G)], sum of w_q over each group (the offset's fold)
//   scale  fp32 [N, ceil(K / G)], vth fp32 [M], bias fp32 [N], out fp32 [M, N]
// G % 128 == 0 (a binary MMA's 128 values never straddle a group), T <= 8; any M, N, K.
// A CTA of 4 warps holds a 64 x 32 tile of out, a warp 32 x 16 (2 x 2 MMA tiles); the
// fragments come straight from global memory (each thread's 32-bit words, L1 caches the
// neighbours' reuse): this kernel prices literal evaluation, it is not a tuned GEMM.

#define PL_TMAX 8      // most spike planes (q fits int8 unidirectionally: v <= 255)
#define PL_MT 2        // MMA tiles of 16 rows a warp
#define PL_NT 2        // MMA tiles of 8 columns a warp
#define PL_BM 64       // a CTA's rows: 2 warps of 32
#define PL_BN 32       // a CTA's columns: 2 warps of 16

namespace {

// D = A (16 x 128 bits, row) AND-popcount B (128 x 8 bits, col) + C.
__device__ __forceinline__ void mma_b1(int (&d)[4], unsigned a0, unsigned a1, unsigned b) {
    asm volatile(
        "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5}, "
        "{%6}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(b));
}

__device__ __forceinline__ unsigned word_at(const unsigned* __restrict__ base, int row,
                                            int rows, int w, int W) {
    return (row < rows && w < W) ? __ldg(base + (size_t)row * W + w) : 0u;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128)
int_gemm_planes(const unsigned* __restrict__ planes, const int* __restrict__ stats,
                const unsigned* __restrict__ w_bits, const int* __restrict__ w_sum,
                const float* __restrict__ scale, const float* __restrict__ vth,
                const float* __restrict__ bias, int M, int N, int K, int G,
                float* __restrict__ out) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g8 = lane >> 2, tq = lane & 3;  // the MMA fragments' groupID, thread in group
    const int m0 = blockIdx.y * PL_BM + (warp >> 1) * (PL_MT * 16);
    const int n0 = blockIdx.x * PL_BN + (warp & 1) * (PL_NT * 8);
    const int T = stats[3], o = stats[2];
    const int W = (K + 31) / 32, ng = (K + G - 1) / G;
    const size_t a_plane = (size_t)M * W, b_plane = (size_t)N * W;

    float acc[PL_MT][PL_NT][4] = {};
    for (int grp = 0; grp < ng; ++grp) {
        int S[PL_MT][PL_NT][4] = {};
        const int w_end = min((grp + 1) * (G / 32), W);
        for (int w0 = grp * (G / 32); w0 < w_end; w0 += 4) {  // a 128-value chunk
            const int w = w0 + tq;
            // Spike planes by significance s (plane T - 1 - s), rows g8 and g8 + 8 of each
            // MMA tile; none past T.
            unsigned a[PL_TMAX][PL_MT][2];
#pragma unroll
            for (int s = 0; s < PL_TMAX; ++s)
#pragma unroll
                for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        a[s][mt][h] = s < T ? word_at(planes + (size_t)(T - 1 - s) * a_plane,
                                                      m0 + mt * 16 + h * 8 + g8, M, w, W)
                                            : 0u;
            // Weight planes by significance r (plane 7 - r), and the sign plane (plane 0).
            unsigned b[8][PL_NT];
#pragma unroll
            for (int p = 0; p < 8; ++p)
#pragma unroll
                for (int nt = 0; nt < PL_NT; ++nt)
                    b[p][nt] = word_at(w_bits + (size_t)p * b_plane, n0 + nt * 8 + g8, N, w, W);

            int x[PL_MT][PL_NT][4] = {};  // positive planes, Horner over e = s + r
#pragma unroll
            for (int e = PL_TMAX - 1 + 6; e >= 0; --e) {
                if (e > T - 1 + 6) continue;  // uniform: no plane pair this high
#pragma unroll
                for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < PL_NT; ++nt)
#pragma unroll
                        for (int i = 0; i < 4; ++i) x[mt][nt][i] += x[mt][nt][i];
#pragma unroll
                for (int r = 0; r <= 6; ++r) {
                    const int s = e - r;
                    if (s < 0 || s >= PL_TMAX || s >= T) continue;
#pragma unroll
                    for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
                        for (int nt = 0; nt < PL_NT; ++nt)
                            mma_b1(x[mt][nt], a[s][mt][0], a[s][mt][1], b[7 - r][nt]);
                }
            }
            int y[PL_MT][PL_NT][4] = {};  // the sign plane, Horner over s
#pragma unroll
            for (int s = PL_TMAX - 1; s >= 0; --s) {
                if (s >= T) continue;
#pragma unroll
                for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < PL_NT; ++nt) {
#pragma unroll
                        for (int i = 0; i < 4; ++i) y[mt][nt][i] += y[mt][nt][i];
                        mma_b1(y[mt][nt], a[s][mt][0], a[s][mt][1], b[0][nt]);
                    }
            }
#pragma unroll
            for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < PL_NT; ++nt)
#pragma unroll
                    for (int i = 0; i < 4; ++i) S[mt][nt][i] += x[mt][nt][i] - 128 * y[mt][nt][i];
        }
        // q = v + o: the offset folds back through the group's weight sum; then the
        // group's promotion.
#pragma unroll
        for (int nt = 0; nt < PL_NT; ++nt)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                const int n = n0 + nt * 8 + 2 * tq + c;
                const size_t at = (size_t)min(n, N - 1) * ng + grp;
                const int ws = __ldg(w_sum + at);
                const float sc = __ldg(scale + at);
#pragma unroll
                for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int i = 2 * h + c;
                        acc[mt][nt][i] = fmaf((float)(S[mt][nt][i] + o * ws), sc,
                                              acc[mt][nt][i]);
                    }
            }
    }
#pragma unroll
    for (int mt = 0; mt < PL_MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int m = m0 + mt * 16 + h * 8 + g8;
            if (m >= M) continue;
            const float v = __ldg(vth + m);
#pragma unroll
            for (int nt = 0; nt < PL_NT; ++nt)
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    const int n = n0 + nt * 8 + 2 * tq + c;
                    if (n < N) out[(size_t)m * N + n] = fmaf(v, acc[mt][nt][2 * h + c], __ldg(bias + n));
                }
        }
}
