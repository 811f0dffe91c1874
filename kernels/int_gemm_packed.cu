// SPEC step 6 fed by the spikes themselves: the integer GEMM with group scales (as int_gemm)
// whose A operand is activation_fused's bit-packed planes (the unidirectional mode, T bits a
// value) instead of q. The general path (mma.sync, any shape; common/igemm_small.cuh) decodes
// 16 values at a time in its A-tile load, v = sum_t bit_t 2^(T - 1 - t), q = v + o with T and
// o from the activation stage's stats on the device: no decode pass, no q in memory.
//   out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in group g} q[m, f] * w_q[n, f]) + bias[n]
// planes uint32 [P, M, ceil(K / 32)] (P >= T), stats int32 [qmin, qmax, o, T], w_q int8 [N, K],
// scale fp32 [N, ceil(K / G)], vth fp32 [M], bias fp32 [N], out fp32 [M, N].
// PACKED_WIDE=0: q decoded as int8, bytewise mod 256 (exact where q fits int8, as the q8
// path; one MMA a k step). PACKED_WIDE=1: q decoded whole in int32 and split into three byte
// planes, as int_gemm's wide build (exact for |q| < 2^23, every family; three MMAs).
#ifndef PACKED_WIDE
#define PACKED_WIDE 0
#endif
#include "igemm_small.cuh"

// The general path's tile (BM, BN, warps along m, along n, stages; common/igemm_small.cuh),
// as the plugin plans the launch with it.
extern "C" __constant__ int int_gemm_packed_config[5] = {IGG_BM, IGG_BN, IGG_WM, IGG_WN,
                                                         IGG_STAGES};

// grid (ceil(N / IGG_BN), ceil(M / IGG_BM), splits), block IGG_WM IGG_WN 32, dynamic shared
// memory igemm::general_smem_bytes(IGG_BM, IGG_BN, QP, IGG_STAGES) (QP 1, or 3 where
// PACKED_WIDE); ws: splits M N floats
// (splits > 1), counters: gridDim.x gridDim.y words, zero before the first launch (each
// launch leaves them zero).
extern "C" __global__ void __launch_bounds__(IGG_WM * IGG_WN * 32)
int_gemm_packed(const unsigned* __restrict__ planes, const int* __restrict__ stats,
                const signed char* __restrict__ w_q, const float* __restrict__ scale,
                const float* __restrict__ vth, const float* __restrict__ bias, int M, int N,
                int K, int G, int splits, float* __restrict__ ws,
                unsigned int* __restrict__ counters, float* __restrict__ out) {
    const int W = (K + 31) >> 5;
    const igemm::PackedQ pq{planes, (size_t)M * (size_t)W, W, __ldg(stats + 3), __ldg(stats + 2)};
    igemm::general_kernel<IGG_BM, IGG_BN, IGG_WM, IGG_WN, IGG_STAGES, PACKED_WIDE ? 3 : 1>(
        &pq, w_q, scale, vth, bias, M, N, K, G, splits, ws, counters, out);
}
