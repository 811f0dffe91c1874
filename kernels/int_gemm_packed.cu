// SPEC step 6 fed by the spikes themselves: the integer GEMM with group scales (as int_gemm)
// whose A operand is activation_fused's bit-packed planes (the unidirectional mode, T bits a
// value) instead of q, decoded on the fly, v = sum_t bit_t 2^(T - 1 - t), q = v + o, with T
// and o from the activation stage's stats on the device: no decode pass, no q in memory.
//   out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in group g} q[m, f] * w_q[n, f]) + bias[n]
// planes uint32 [P, M, ceil(K / 32)] (P >= T), stats int32 [qmin, qmax, o, T], w_q int8 [N, K],
// scale fp32 [N, ceil(K / G)], vth fp32 [M], bias fp32 [N], out fp32 [M, N].
// Two paths, as int_gemm's (which one a launch takes: plugins/int_gemm_packed.py):
// - int_gemm_packed_wgmma and int_gemm_packed_wgmma_single (PACKED_WIDE=0, G = 128,
//   K % 128 == 0, N % 128 == 0; sm_90a): int_gemm's Hopper kernel (common/igemm_wgmma.cuh)
//   whose producer warpgroup decodes each stage's A tile from the planes into shared memory
//   (PackedA below) where int_gemm's has it loaded by TMA; B, the consumers, the promotion
//   and the epilogue are int_gemm's.
// - int_gemm_packed (every shape; mma.sync, common/igemm_small.cuh): the general path, which
//   decodes 16 values at a time in its A-tile load.
// PACKED_WIDE=0: q decoded as int8, bytewise mod 256 (exact where q fits int8, as the q8
// path; one MMA a k step). PACKED_WIDE=1: q decoded whole in int32 and split into three byte
// planes, as int_gemm's wide build (exact for |q| < 2^23, every family; three MMAs; the
// general path only).
#ifndef PACKED_WIDE
#define PACKED_WIDE 0
#endif
#include "bits.cuh"
#include "igemm_wgmma.cuh"
#include "igemm_small.cuh"

// The register split of the wgmma kernel's warpgroups when its producer decodes: the
// decoder holds up to 32 plane words a thread (four units of up to 8 planes). The two must
// fit the registers the launch gave the CTA (168 a thread of 384; ptxas spills the
// decoder at 88). These set the decoding kernels' split; the header's IG_PRODUCER_REGS and
// IG_CONSUMER_REGS do not apply to them.
#ifndef IGP_PRODUCER_REGS
#define IGP_PRODUCER_REGS 96
#endif
#ifndef IGP_CONSUMER_REGS
#define IGP_CONSUMER_REGS 200
#endif
// 1: each unit's words of the next K tile are loaded as soon as the unit is decoded, into
// the registers it freed; 0: a K tile's words are loaded when its fill starts. 0 measured
// 7-8 % faster (kernels/NOTES.md: the stage's proxy fence waited on the early loads).
#ifndef IGP_PREFETCH
#define IGP_PREFETCH 0
#endif

namespace {

// A from the planes, decoded by the wgmma kernel's producer warpgroup (see TmaA in
// common/igemm_wgmma.cuh for what an A source provides). A K tile's A is 128 rows x 128
// values: 4 words of each plane a row. Producer thread (warp wp, lane l) takes the four
// units (row 32 wp + 8 j + l / 4, word l % 4), j = 0..3: a warp's load instruction reads 8
// rows' 16 contiguous bytes of a plane. Only the TT = min(T, 8) planes worth less than 2^8
// are read (the others drop out of q mod 256, as in the general path's int8 decode).
struct PackedA {
    static constexpr bool BY_TMA = false;
    static constexpr int ARRIVALS = 128;
    static constexpr int PRODUCER_REGS = IGP_PRODUCER_REGS, CONSUMER_REGS = IGP_CONSUMER_REGS;
    const unsigned* __restrict__ planes;
    const int* __restrict__ stats;
    int M, W;

    template <int TT>
    struct Decoder {
        const unsigned* __restrict__ low;  // plane T - 1's word w of row 0 (weight 2^0)
        size_t plane;                      // words a plane: M W
        int M, W, r0, word;                // r0: the thread's first row in the tile;
                                           // word: its word of a row's four (lane % 4)
        unsigned o4;                       // o's low byte in each byte
        unsigned reg[4][TT > 0 ? TT : 1];  // unit j's words, reg[j][i] of weight 2^i

        __device__ __forceinline__ void fetch_unit(int j, int m0, int kt) {
            const int row = m0 + r0 + 8 * j;
            // One pointer walked down the planes (a 64-bit subtract a word), where indexing
            // each plane from the base cost a multiply and a reload of the base a word.
            const unsigned* p = low + (static_cast<size_t>(row) * W + 4 * kt);
            const bool in = row < M;
#pragma unroll
            for (int i = 0; i < TT; ++i) {
                reg[j][i] = in ? __ldg(p) : 0u;
                p -= plane;
            }
        }
        __device__ __forceinline__ void fetch(int m0, int kt) {
            if constexpr (IGP_PREFETCH) {
#pragma unroll
                for (int j = 0; j < 4; ++j) fetch_unit(j, m0, kt);
            }
        }
        // Unit j's 32 values as q bytes, in value order: words 2b and 2b + 1 hold values
        // 8b .. 8b + 7 (byte b of each plane word as an 8 x 8 bit matrix, transposed).
        __device__ __forceinline__ void decode(int j, unsigned (&q)[8]) const {
            unsigned x[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) x[i] = i < TT ? reg[j][i < TT ? i : 0] : 0u;
            unsigned lo[4], hi[4];
            bits::transpose4x4(x[0], x[1], x[2], x[3], lo[0], lo[1], lo[2], lo[3]);
            bits::transpose4x4(x[4], x[5], x[6], x[7], hi[0], hi[1], hi[2], hi[3]);
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                bits::transpose8(lo[b], hi[b]);
                q[2 * b] = lo[b];
                q[2 * b + 1] = hi[b];
            }
            // q = v + o bytewise mod 256 (v < 2^TT: below 2^7, its bytes' top bits are 0).
            const unsigned o7 = o4 & 0x7F7F7F7Fu, o8 = o4 & 0x80808080u;
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                if constexpr (TT < 8) q[i] = (q[i] + o7) ^ o8;
                else q[i] = ((q[i] & 0x7F7F7F7Fu) + o7) ^ ((q[i] & 0x80808080u) ^ o8);
            }
        }
        // The K tile held into the stage at shared address a (128 rows of 128 bytes, chunk c
        // of row r at c ^ (r % 8): CU_TENSOR_MAP_SWIZZLE_128B), each unit's registers then
        // refilled with K tile kt + 1 if `more`.
        __device__ __forceinline__ void fill(uint32_t a, int m0, int kt, bool more) {
            if constexpr (!IGP_PREFETCH) {
#pragma unroll
                for (int j = 0; j < 4; ++j) fetch_unit(j, m0, kt);
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                unsigned q[8];
                decode(j, q);
                if (IGP_PREFETCH && more) fetch_unit(j, m0, kt + 1);
                const int r = r0 + 8 * j;
                const uint32_t row = a + 128u * static_cast<uint32_t>(r);
                const uint32_t c = 2u * static_cast<uint32_t>(word);
                const uint32_t sw = static_cast<uint32_t>(r & 7);
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(row + ((c ^ sw) << 4)),
                             "r"(q[0]), "r"(q[1]), "r"(q[2]), "r"(q[3]) : "memory");
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(row + (((c + 1) ^ sw) << 4)),
                             "r"(q[4]), "r"(q[5]), "r"(q[6]), "r"(q[7]) : "memory");
            }
        }
    };

    template <class Body>
    __device__ __forceinline__ void run(Body&& body) const {
        // SPEC's T is at least 1; a T below it reads no plane (q = o), never one before the
        // buffer.
        const int T = max(__ldg(stats + 3), 0);
        const unsigned o4 = (static_cast<unsigned>(__ldg(stats + 2)) & 0xFFu) * 0x01010101u;
        const int tid = threadIdx.x;  // 0..127: the producer warpgroup
        const int lane = tid & 31, r0 = 32 * (tid >> 5) + (lane >> 2), word = lane & 3;
        const size_t plane = static_cast<size_t>(M) * W;
        // Plane T - 1 (weight 2^0), word `word` of row 0; plane T - 1 - i lies i planes before.
        const unsigned* low = planes + static_cast<size_t>(T > 0 ? T - 1 : 0) * plane + word;
        auto go = [&](auto tt) {
            Decoder<decltype(tt)::value> d;
            d.low = low;
            d.plane = plane;
            d.M = M;
            d.W = W;
            d.r0 = r0;
            d.o4 = o4;
            d.word = word;
            body(d);
        };
        switch (T < 8 ? T : 8) {
            case 0: go(std::integral_constant<int, 0>{}); break;
            case 1: go(std::integral_constant<int, 1>{}); break;
            case 2: go(std::integral_constant<int, 2>{}); break;
            case 3: go(std::integral_constant<int, 3>{}); break;
            case 4: go(std::integral_constant<int, 4>{}); break;
            case 5: go(std::integral_constant<int, 5>{}); break;
            case 6: go(std::integral_constant<int, 6>{}); break;
            case 7: go(std::integral_constant<int, 7>{}); break;
            default: go(std::integral_constant<int, 8>{}); break;
        }
    }
};

}  // namespace

extern "C" __constant__ int int_gemm_packed_wgmma_smem = SMEM_ALLOC;
// The out tensor map's box (rows, fp32 columns) and the kernel's configuration, laid out as
// int_gemm's int_gemm_wgmma_out_box and int_gemm_wgmma_config (the launch reads both alike).
extern "C" __constant__ int int_gemm_packed_wgmma_out_box[2] = {OUT_BOX_ROWS, OUT_BOX_COLS};
extern "C" __constant__ int int_gemm_packed_wgmma_config[10] = {
    BM, BN, BK, STAGES, IG_CLUSTER_M, THREADS, IG_OVERLAP, IG_CLUSTER_N, IG_GRID, IG_SPLITS_MAX};

// As int_gemm_wgmma, A decoded from the planes: tmap_w and tmap_out as there, then the
// planes and stats, then int_gemm_wgmma's pointers and sizes. Needs IG_CLUSTER_N = 1.
extern "C" __global__ void __launch_bounds__(THREADS, 1) IG_CLUSTER_ATTR
int_gemm_packed_wgmma(const __grid_constant__ CUtensorMap tmap_w,
                      const __grid_constant__ CUtensorMap tmap_out,
                      const unsigned* __restrict__ planes, const int* __restrict__ stats,
                      const float* __restrict__ scale, const float* __restrict__ vth,
                      const float* __restrict__ bias, float* __restrict__ out, int M, int N,
                      int K, int group_m) {
    wgmma_tiles<IG_CLUSTER_M, IG_CLUSTER_N, false>(PackedA{planes, stats, M, K / 32}, tmap_w,
                                                   tmap_out, scale, vth, bias, out, M, N, K,
                                                   group_m, 1, nullptr, nullptr);
}

// As int_gemm_wgmma_single (no cluster along M, K split `splits` ways), A decoded from the
// planes; arguments as int_gemm_packed_wgmma's, then the splits, ws and counters.
extern "C" __global__ void __launch_bounds__(THREADS, 1) IG_SINGLE_ATTR
int_gemm_packed_wgmma_single(const __grid_constant__ CUtensorMap tmap_w,
                             const __grid_constant__ CUtensorMap tmap_out,
                             const unsigned* __restrict__ planes, const int* __restrict__ stats,
                             const float* __restrict__ scale, const float* __restrict__ vth,
                             const float* __restrict__ bias, float* __restrict__ out, int M,
                             int N, int K, int group_m, int splits, float* __restrict__ ws,
                             unsigned int* __restrict__ counters) {
    wgmma_tiles<1, IG_CLUSTER_N, true>(PackedA{planes, stats, M, K / 32}, tmap_w, tmap_out,
                                       scale, vth, bias, out, M, N, K, group_m, splits, ws,
                                       counters);
}

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
