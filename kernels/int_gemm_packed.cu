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
//   whose producer warpgroups (0 and 3, 512 threads a CTA) decode each stage's A tile from
//   the planes into shared memory (PackedA below) where int_gemm's has it loaded by TMA; B,
//   the consumers, the promotion and the epilogue are int_gemm's.
// - int_gemm_packed (every shape; mma.sync, common/igemm_small.cuh): the general path, which
//   decodes 16 values at a time in its A-tile load.
// PACKED_WIDE=0: q decoded as int8, bytewise mod 256 (exact where q fits int8, as the q8
// path; one MMA a k step). PACKED_WIDE=1: q decoded whole in int32 and split into three byte
// planes, as int_gemm's wide build (exact for |q| < 2^23, every family; three MMAs; the
// general path only).
#ifndef PACKED_WIDE
#define PACKED_WIDE 0
#endif
// 1: the decoder's plane words come by TMA into a shared-memory staging buffer two steps
// ahead (a 2-D map of the planes as P M rows of W words, boxes of 128 rows, fewer at M <
// 128 (stage_rows), x 4 words, one a plane), on a barrier of their own, and are read from
// there; the A/B ring then has 4 stages, not 5, to make room. 0: each thread loads its
// words from global memory when a step's fill starts (its latency in the producer's path:
// kernels/NOTES.md).
#ifndef IGP_STAGED
#define IGP_STAGED 1
#endif
#if IGP_STAGED && !defined(IG_STAGES)
#define IG_STAGES 4
#endif
// The decode's warpgroups: 2 (warpgroups 0 and 3, two units a thread a K tile; 512 threads), or
// 1 (warpgroup 0, four units a thread; 384 threads). One decoding warp a sub-partition is
// latency-bound (kernels/NOTES.md).
#ifndef IG_PRODUCER_WARPGROUPS
#define IG_PRODUCER_WARPGROUPS 2
#endif
#include "bits.cuh"
#include "igemm_wgmma.cuh"
#include "igemm_small.cuh"

// The register split of the wgmma kernel's warpgroups when its producers decode: the
// decoder holds up to 8 plane words a unit (four units a thread with one producer
// warpgroup, two with two). The split must fit the registers the launch gave the CTA (168 a
// thread of 384: 96 + 200; 128 a thread of 512: 56 + 200, the whole file). These set the
// decoding kernels' split; the header's IG_PRODUCER_REGS and IG_CONSUMER_REGS do not apply
// to them.
#ifndef IGP_PRODUCER_REGS
#define IGP_PRODUCER_REGS (IG_PRODUCER_WARPGROUPS == 2 ? 56 : 96)
#endif
#ifndef IGP_CONSUMER_REGS
#define IGP_CONSUMER_REGS 200
#endif

namespace {

// The staging buffers (IGP_STAGED): two slots of 8 planes x 128 rows x 4 words (16 KB), each
// with a transaction barrier, past the kernel's own layout (the barriers in its last
// 128-byte line's slack, the slots 128-aligned for the TMA).
constexpr int STG_SLOTS = 2;
constexpr int STG_PLANE_BYTES = 128 * 16;
// Rows of a staged box: the tile's 128, or M rounded up to 8 where M is smaller, so that no
// box of a small M reaches far past the planes' map (at M 1 a 128-row box is 113 rows out
// of bounds, and the producers' wait on those boxes doubled the kernel's time: NOTES). The
// launch builds the map's box with the same rule. Only the single kernel (M <= 256: the
// launch's rule) takes it, a compile-time choice (PackedA<true>), so that the paired
// kernel's code is the 128-row box's as it was.
// IGP_SMALL_BOX=0 keeps 128 rows at every M (the A/B's other build; the launch reads it back).
#ifndef IGP_SMALL_BOX
#define IGP_SMALL_BOX 1
#endif
__device__ __forceinline__ int stage_rows(int M) { return min(128, (M + 7) / 8 * 8); }
constexpr int STG_BYTES = 8 * STG_PLANE_BYTES;
constexpr int OFF_STG_BAR = SMEM_USED;
constexpr int OFF_STG = (OFF_STG_BAR + 8 * STG_SLOTS + 127) / 128 * 128;
constexpr int PACKED_SMEM = IGP_STAGED ? OFF_STG + STG_SLOTS * STG_BYTES : SMEM_ALLOC;
static_assert(PACKED_SMEM <= 232448, "the staging buffers do not fit beside the ring");
static_assert(!IGP_STAGED || (IG_TMA_STORE && IG_OUT_FULL),
              "the staging layout follows the full-tile TMA-store layout (no base slack)");

// A from the planes, decoded by the wgmma kernel's producer warpgroups (see TmaA in
// common/igemm_wgmma.cuh for what an A source provides). A K tile's A is 128 rows x 128
// values: 4 words of each plane a row, 512 (row, word) units. Producer thread (producer warp
// wp = 0 .. 4 PRODUCER_WGS - 1, lane l) takes the UNITS = 4 / PRODUCER_WGS units (row
// (32 / PRODUCER_WGS) wp + 8 j + l / 4, word l % 4), j < UNITS: a warp's read of a plane is 8
// rows' 16 contiguous bytes. Only the TT = min(T, 8) planes worth less than 2^8 are read (the
// others drop out of q mod 256, as in the general path's int8 decode): planes c .. c + TT - 1,
// c = T - TT, local plane i of a step's words worth 2^(TT - 1 - i). SMALL_BOX: the staged
// boxes are stage_rows(M) rows (else 128).
template <bool SMALL_BOX>
struct PackedA {
    static constexpr bool BY_TMA = false;
    static constexpr int ARRIVALS = 128 * PRODUCER_WGS;
    static constexpr int UNITS = 4 / PRODUCER_WGS;  // units a thread a K tile
    static constexpr int PRODUCER_REGS = IGP_PRODUCER_REGS, CONSUMER_REGS = IGP_CONSUMER_REGS;
    const CUtensorMap& map;  // planes as P M rows of W words, boxes of rows x 4 words
    const unsigned* __restrict__ planes;
    const int* __restrict__ stats;
    int M, W;

    __device__ __forceinline__ void init(uint8_t* smem) const {
        if constexpr (IGP_STAGED) {
            uint64_t* bar = reinterpret_cast<uint64_t*>(smem + OFF_STG_BAR);
            for (int b = 0; b < STG_SLOTS; ++b) igemm::TxBarrier::init(&bar[b], 1);
        }
    }

    template <int TT>
    struct Decoder {
        static constexpr int AHEAD = IGP_STAGED ? STG_SLOTS : 0;
        const CUtensorMap* map;
        const unsigned* __restrict__ low;  // plane T - 1's word w of row 0 (weight 2^0)
        size_t plane;                      // words a plane: M W
        uint8_t* smem;
        int M, W, c, r0, word;  // c: the first plane read; r0: the thread's first row in the
                                // tile; word: its word of a row's four (lane % 4)
        int rows;               // rows of a staged box (stage_rows(M) where SMALL_BOX)
        unsigned o4;            // o's low byte in each byte
        int loaded = 0, used = 0;  // steps whose loads were issued, and decoded

        // Step `loaded`'s words into staging slot loaded % STG_SLOTS (IGP_STAGED), one box a
        // plane, once every producer thread has read the slot's previous step (called after
        // this thread's fill of that step, whose decode used what it read, and after the
        // body's fence_view_async_shared, which orders those generic-proxy reads before the
        // TMA's async-proxy writes): the producer threads meet at a named barrier, then
        // thread 0 issues it. The first STG_SLOTS steps have no previous reader (AHEAD ==
        // STG_SLOTS), so no barrier. (A refill by the last warp to have read the slot,
        // each warp counting itself and none waiting, measured 14-17 % slower:
        // kernels/NOTES.md.)
        __device__ __forceinline__ void ahead(int m0, int kt) {
            if constexpr (IGP_STAGED) {
                const int b = loaded % STG_SLOTS;
                if (loaded >= STG_SLOTS)
                    asm volatile("bar.sync %0, %1;\n" ::"n"(SOURCE_BAR), "n"(ARRIVALS) : "memory");
                if (threadIdx.x == 0 && TT > 0) {
                    uint64_t* bar = reinterpret_cast<uint64_t*>(smem + OFF_STG_BAR) + b;
                    igemm::TxBarrier::arrive_and_expect_tx(
                        bar, SMALL_BOX ? TT * rows * 16 : TT * STG_PLANE_BYTES);
#pragma unroll
                    for (int i = 0; i < TT; ++i)
                        cute::SM90_TMA_LOAD_2D::copy(map, bar, HINT,
                                                     smem + OFF_STG + b * STG_BYTES +
                                                         i * STG_PLANE_BYTES,
                                                     4 * kt, (c + i) * M + m0);
                }
                ++loaded;
            }
        }
        // Unit j's words of step kt, reg[i] of weight 2^i.
        __device__ __forceinline__ void words(int j, int m0, int kt, unsigned (&reg)[8]) const {
            const int r = r0 + 8 * j;
            if constexpr (IGP_STAGED) {
                const uint32_t at = igemm::smem_u32(smem + OFF_STG + (used % STG_SLOTS) * STG_BYTES) +
                                    16u * static_cast<uint32_t>(r) + 4u * word;
                // A row past a small box reads what an earlier step left in the slot (or
                // nothing written yet): decoded like any row past M, its out row never
                // stored. No compare here: the decode is bound by its integer issue, and
                // one more instruction a word measured +1.3 % at M >= 1024 (NOTES).
#pragma unroll
                for (int i = 0; i < TT; ++i)  // local plane TT - 1 - i has weight 2^i
                    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(reg[i])
                                 : "r"(at + (TT - 1 - i) * STG_PLANE_BYTES));
            } else {
                // One pointer walked down the planes (a 64-bit subtract a word).
                const unsigned* p = low + (static_cast<size_t>(m0 + r) * W + 4 * kt);
                const bool in = m0 + r < M;
#pragma unroll
                for (int i = 0; i < TT; ++i) {
                    reg[i] = in ? __ldg(p) : 0u;
                    p -= plane;
                }
            }
#pragma unroll
            for (int i = TT; i < 8; ++i) reg[i] = 0u;
        }
        // Unit j's 32 values as q bytes, in value order: words 2b and 2b + 1 hold values
        // 8b .. 8b + 7 (byte b of each plane word as an 8 x 8 bit matrix, transposed).
        __device__ __forceinline__ void decode(const unsigned (&x)[8], unsigned (&q)[8]) const {
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
        // Step (m0, kt)'s tile into the stage at shared address a (128 rows of 128 bytes,
        // chunk c of row r at c ^ (r % 8): CU_TENSOR_MAP_SWIZZLE_128B). With IGP_STAGED the
        // step's words are waited for in their staging slot (rows past M hold the next
        // plane's rows or zeros: decoded into the stage like any row; their out rows are
        // never written).
        __device__ __forceinline__ void fill(uint32_t a, int m0, int kt) {
            if constexpr (IGP_STAGED) {
                if (TT > 0) {
                    uint64_t* bar = reinterpret_cast<uint64_t*>(smem + OFF_STG_BAR) +
                                    used % STG_SLOTS;
                    igemm::Barrier::wait(bar, static_cast<uint32_t>((used / STG_SLOTS) & 1));
                }
            }
            unsigned x[UNITS][8];
#pragma unroll
            for (int j = 0; j < UNITS; ++j) words(j, m0, kt, x[j]);
#pragma unroll
            for (int j = 0; j < UNITS; ++j) {
                unsigned q[8];
                decode(x[j], q);
                const int r = r0 + 8 * j;
                const uint32_t row = a + 128u * static_cast<uint32_t>(r);
                const uint32_t ch = 2u * static_cast<uint32_t>(word);
                const uint32_t sw = static_cast<uint32_t>(r & 7);
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(row + ((ch ^ sw) << 4)),
                             "r"(q[0]), "r"(q[1]), "r"(q[2]), "r"(q[3]) : "memory");
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(row + (((ch + 1) ^ sw) << 4)),
                             "r"(q[4]), "r"(q[5]), "r"(q[6]), "r"(q[7]) : "memory");
            }
            ++used;
        }
    };

    template <class Body>
    __device__ __forceinline__ void run(Body&& body) const {
        // SPEC's T is at least 1; a T below it reads no plane (q = o), never one before the
        // buffer.
        const int T = max(__ldg(stats + 3), 0);
        const unsigned o4 = (static_cast<unsigned>(__ldg(stats + 2)) & 0xFFu) * 0x01010101u;
        // The thread's place among the producers: warpgroup 0's threads, then warpgroup 3's.
        const int pt = threadIdx.x < 128 ? threadIdx.x : threadIdx.x - 256;
        const int lane = pt & 31, r0 = (32 / PRODUCER_WGS) * (pt >> 5) + (lane >> 2),
                  word = lane & 3;
        const size_t plane = static_cast<size_t>(M) * W;
        // Plane T - 1 (weight 2^0), word `word` of row 0; plane T - 1 - i lies i planes before.
        const unsigned* low = planes + static_cast<size_t>(T > 0 ? T - 1 : 0) * plane + word;
        extern __shared__ __align__(1024) uint8_t smem_raw[];
        if constexpr (IGP_STAGED)
            cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(&map));
        auto go = [&](auto tt) {
            constexpr int TT = decltype(tt)::value;
            Decoder<TT> d;
            d.map = &map;
            d.low = low;
            d.plane = plane;
            d.smem = smem_raw;  // the layout's base (IG_OUT_FULL: no slack)
            d.M = M;
            d.rows = SMALL_BOX ? stage_rows(M) : 128;
            d.W = W;
            d.c = T - TT;
            d.r0 = r0;
            d.word = word;
            d.o4 = o4;
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

extern "C" __constant__ int int_gemm_packed_wgmma_smem = PACKED_SMEM;
// The out tensor map's box (rows, fp32 columns) and the kernel's configuration, laid out as
// int_gemm's int_gemm_wgmma_out_box and int_gemm_wgmma_config (the launch reads both alike).
extern "C" __constant__ int int_gemm_packed_wgmma_out_box[2] = {OUT_BOX_ROWS, OUT_BOX_COLS};
extern "C" __constant__ int int_gemm_packed_wgmma_config[10] = {
    BM, BN, BK, STAGES, IG_CLUSTER_M, THREADS, IG_OVERLAP, IG_CLUSTER_N, IG_GRID, IG_SPLITS_MAX};

// As int_gemm_wgmma, A decoded from the planes: tmap_w and tmap_out as there, then the
// planes' map (uint32 {W, P M}, box {4, 128}, no swizzle: IGP_STAGED's), the planes and
// stats, then int_gemm_wgmma's pointers and sizes. Needs IG_CLUSTER_N = 1.
extern "C" __global__ void __launch_bounds__(THREADS, 1) IG_CLUSTER_ATTR
int_gemm_packed_wgmma(const __grid_constant__ CUtensorMap tmap_w,
                      const __grid_constant__ CUtensorMap tmap_out,
                      const __grid_constant__ CUtensorMap tmap_planes,
                      const unsigned* __restrict__ planes, const int* __restrict__ stats,
                      const float* __restrict__ scale, const float* __restrict__ vth,
                      const float* __restrict__ bias, float* __restrict__ out, int M, int N,
                      int K, int group_m) {
    wgmma_tiles<IG_CLUSTER_M, IG_CLUSTER_N, false>(
        PackedA<false>{tmap_planes, planes, stats, M, K / 32}, tmap_w, tmap_out, scale, vth,
        bias, out, M, N, K, group_m, 1, nullptr, nullptr);
}

// As int_gemm_wgmma_single (no cluster along M, K split `splits` ways), A decoded from the
// planes; arguments as int_gemm_packed_wgmma's (the planes' box {4, stage_rows(M)} where
// IGP_SMALL_BOX), then the splits, ws and counters.
extern "C" __global__ void __launch_bounds__(THREADS, 1) IG_SINGLE_ATTR
int_gemm_packed_wgmma_single(const __grid_constant__ CUtensorMap tmap_w,
                             const __grid_constant__ CUtensorMap tmap_out,
                             const __grid_constant__ CUtensorMap tmap_planes,
                             const unsigned* __restrict__ planes, const int* __restrict__ stats,
                             const float* __restrict__ scale, const float* __restrict__ vth,
                             const float* __restrict__ bias, float* __restrict__ out, int M,
                             int N, int K, int group_m, int splits, float* __restrict__ ws,
                             unsigned int* __restrict__ counters) {
    wgmma_tiles<1, IG_CLUSTER_N, true>(
        PackedA<IGP_SMALL_BOX != 0>{tmap_planes, planes, stats, M, K / 32}, tmap_w, tmap_out,
        scale, vth, bias, out, M, N, K, group_m, splits, ws, counters);
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
