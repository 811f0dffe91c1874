// SPEC step 6 on integer tensor cores. Entry points: the Hopper fast path (int_gemm_wgmma, and
// int_gemm_wgmma_single for one or two M blocks; sm_90a only), the small-M paths on a TMA
// ring (int_gemm_stream1, int_gemm_stream: int8 q, sm_90a; see common/igemm_stream.cuh), and
// the register-fed small-M and general paths (int_gemm_small1, int_gemm_small,
// int_gemm_general, int_gemm_general_unfit: mma.sync, any shape, q of int8 or, with -DQ_WIDE,
// wider integers; see common/igemm_small.cuh). Which one a launch takes: plugins/int_gemm.py.
// The fast path:
//   out[m, n] = vth[m] * sum_g scale[n, g] * ( sum_{f in group g} q[m, f] * w_q[n, f] ) + bias[n]
// q int8 [M, K] and w_q int8 [N, K] row-major (K contiguous: "TN"), scale fp32 [N, K / 128],
// vth fp32 [M], bias fp32 [N], out fp32 [M, N] row-major.
//
// Requires G = 128, K % 128 == 0, N % 128 == 0; any M >= 1 (rows past M are TMA zero-fill and
// are not stored). Each inner group sum is exact in int32 (wgmma s32 += s8 * s8); only the
// promotion rounds: after a K tile of 128 (= one group) the int32 accumulators are turned
// into floats exactly (|sum| <= 2^21) and fmaf'ed with scale[n, g] into fp32 accumulators;
// vth (per row) and bias (per column) are applied by one fmaf in the epilogue.
// Error bound beside the kernel: ||out - ref|| / ||ref|| <= 1e-6 against float64 (one fp32
// rounding per group promotion, K / 128 of them summed sequentially, plus the epilogue's;
// a split of K adds its ranges' sums in a fixed order, the same bits on every launch).
//
// Epilogue (IG_TMA_STORE=1): each consumer warpgroup writes its 64 x 128 results to a shared
// buffer (all 128 columns at once, or with IG_OUT_FULL=0 64 at a time) and one of its threads
// stores them with TMA bulk tensor stores; with IG_TMA_STORE=0, and for a split of K, each
// thread stores its own (store_rows).
// Design (warp-specialised, persistent):
//   CTA tile 128 x 128, K tile 128 (one group), IG_STAGES-deep smem ring of
//   {A 16 KB, B 16 KB, 128 scales}. 384 threads: warpgroup 0 is the producer (warp 0: lane 0
//   issues the TMA loads, all 32 lanes cp.async the 128 scales of the group; warps 1-3 idle;
//   setmaxnreg 56 with a cluster or in int_gemm_wgmma_single, else 40), warpgroups 1 and 2
//   are consumers (setmaxnreg 224, or 232 beside a producer of 40), each owning 64 rows x 128
//   columns: 4 x wgmma m64n128k32 per K tile into int32 accumulators (the first with
//   scale-d = 0, which restarts the group), then the promotion.
//   IG_OVERLAP=1 keeps two int32 accumulator sets so the next K tile's wgmmas run while the
//   current one is promoted (correct, but measured slower than the default 0: ptxas fences
//   every predicated wgmma; the two consumer warpgroups already overlap each other).
//   int_gemm_wgmma: IG_CLUSTER_M=2, clusters of 2 CTAs along M sharing the B tile (each loads
//   half of it and multicasts it to both); a build with IG_CLUSTER_N=2 makes the cluster
//   2 x 2, the A tile shared the same way by the two CTAs along N. int_gemm_wgmma_single:
//   the same body without the cluster along M (1 x IG_CLUSTER_N), whose w box is the whole
//   128-row tile; where its tiles are too few for the SMs it splits K into up to
//   IG_SPLITS_MAX ranges of whole K tiles, a work unit being one tile's one range. Each of a
//   tile's 8 consumer warps writes its 16 rows' sums of a range to a workspace and takes a
//   ticket on a counter of its own; the warp holding a counter's last ticket adds the
//   ranges' sums of those rows (split_epilogue).
//   Persistent: grid = (co-resident clusters) x cluster size CTAs, work units walked with a
//   stride, grouped by `group_m` cluster-rows for L2 reuse.
// Launch: grid (num_ctas, 1, 1), block (384, 1, 1), dynamic smem = int_gemm_wgmma_smem
// (read it from the module), after raising MAX_DYNAMIC_SHARED_SIZE_BYTES to it.
// Parameters: three CUtensorMaps by value (q: uint8 2D {K, M}, box {128, 128 / IG_CLUSTER_N};
// w: {K, N}, box {128, 128 / IG_CLUSTER_M} for int_gemm_wgmma, {128, 128} for
// int_gemm_wgmma_single; out: fp32 {N, M}, box {32, 64}, the module's int_gemm_wgmma_out_box
// as {rows, columns}; all SWIZZLE_128B), then pointers and sizes (int_gemm_wgmma_single
// also: the splits, the workspace of splits x M x N floats, and the ticket counters, a word
// for each consumer warp of each tile, zero before the first launch). The CUtensorMaps are
// 128-byte aligned in the parameter bank, so ptxas does not put the first one at offset 0: a
// launcher that packs the arguments itself (PyCUDA's func(*args) does, from offset 0) must
// lay out the buffer from cuFuncGetParamInfo's offsets, not naturally.
// Measured times, rates and errors of each build: kernels/NOTES.md and statistics/.
#include "igemm_wgmma.cuh"

extern "C" __constant__ int int_gemm_wgmma_smem = SMEM_ALLOC;
// The box of the out tensor map (rows, fp32 columns), which the epilogue's shared-memory
// layout assumes (with the 128-byte swizzle).
extern "C" __constant__ int int_gemm_wgmma_out_box[2] = {OUT_BOX_ROWS, OUT_BOX_COLS};
// BM, BN, BK, stages, cluster size along M, threads, overlap, cluster size along N, grid
// (of int_gemm_wgmma; int_gemm_wgmma_single's cluster size along M is 1, the rest the same),
// and the most splits of K int_gemm_wgmma_single takes
extern "C" __constant__ int int_gemm_wgmma_config[10] = {BM, BN, BK, STAGES, IG_CLUSTER_M,
                                                         THREADS, IG_OVERLAP, IG_CLUSTER_N,
                                                         IG_GRID, IG_SPLITS_MAX};

// Clusters of IG_CLUSTER_M x IG_CLUSTER_N CTAs sharing their tiles by multicast.
extern "C" __global__ void __launch_bounds__(THREADS, 1) IG_CLUSTER_ATTR
int_gemm_wgmma(const __grid_constant__ CUtensorMap tmap_q,
               const __grid_constant__ CUtensorMap tmap_w,
               const __grid_constant__ CUtensorMap tmap_out,
               const float* __restrict__ scale, const float* __restrict__ vth,
               const float* __restrict__ bias, float* __restrict__ out,
               int M, int N, int K, int group_m) {
    wgmma_tiles<IG_CLUSTER_M, IG_CLUSTER_N, false>(TmaA{tmap_q}, tmap_w, tmap_out, scale, vth,
                                                   bias, out, M, N, K, group_m, 1, nullptr,
                                                   nullptr);
}

// The same kernel without the cluster along M (1 x IG_CLUSTER_N): for one or two M blocks,
// where a pair along M computes one tile's outputs with both CTAs (one of them on rows past
// M when there is one M block) and its handshakes buy no saving of B (kernels/NOTES.md). The
// w_q tensor map's box is then the whole 128-row tile. Where the tiles are too few for the
// SMs, K is split `splits` ways (at most IG_SPLITS_MAX, the config's last value): ws holds
// splits x M x N floats, counters a word for each of a tile's 8 consumer warps, zero before
// the first launch (each launch leaves them zero).
extern "C" __global__ void __launch_bounds__(THREADS, 1) IG_SINGLE_ATTR
int_gemm_wgmma_single(const __grid_constant__ CUtensorMap tmap_q,
                      const __grid_constant__ CUtensorMap tmap_w,
                      const __grid_constant__ CUtensorMap tmap_out,
                      const float* __restrict__ scale, const float* __restrict__ vth,
                      const float* __restrict__ bias, float* __restrict__ out,
                      int M, int N, int K, int group_m, int splits, float* __restrict__ ws,
                      unsigned int* __restrict__ counters) {
    wgmma_tiles<1, IG_CLUSTER_N, true>(TmaA{tmap_q}, tmap_w, tmap_out, scale, vth, bias, out, M,
                                       N, K, group_m, splits, ws, counters);
}

// ---------------------------------------------------------------------------------------
// The small-M paths (int_gemm_small1: M <= 8 IGS1_MT; int_gemm_small: M <= 8 IGS_MT) and the
// general path (any M, N, K, G); configuration by -D (defaults below), the device code in
// common/igemm_small.cuh.
// The weights are prefetched to L2 IGS_PF steps ahead: the development runs' best at every
// small M (26.2 us at M = 1 on 18944 x 3584 against 36.0 without).
#ifndef IGS_PF
#define IGS_PF 8
#endif
#include "igemm_small.cuh"

#ifndef IGS_MT
#define IGS_MT 2
#endif
#ifndef IGS_NT
#define IGS_NT 1
#endif
#ifndef IGS_D
#define IGS_D 4
#endif
#ifndef IGS_WARPS
#define IGS_WARPS 8
#endif
#ifndef IGS_U
#define IGS_U 2
#endif
#ifndef IGS_MAP
#define IGS_MAP 0
#endif
// The one-row-tile kernel for M <= 8: a q tile of 8 rows, fewer warps, deeper in flight.
#ifndef IGS1_D
#define IGS1_D 6
#endif
#ifndef IGS1_WARPS
#define IGS1_WARPS 4
#endif

// The small path's sizes (MT, NT, warps, U, map), the general path's (BM, BN, warps along m,
// along n, stages) and q's bytes a value, as the module holds them (the plugin plans those
// launches with the same values: plugins/int_gemm.py, harness/spikes/geometry.py).
extern "C" __constant__ int int_gemm_small_config[5] = {IGS_MT, IGS_NT, IGS_WARPS, IGS_U, IGS_MAP};
extern "C" __constant__ int int_gemm_small1_config[5] = {1, IGS_NT, IGS1_WARPS, IGS_U, IGS_MAP};
extern "C" __constant__ int int_gemm_general_config[5] = {IGG_BM, IGG_BN, IGG_WM, IGG_WN,
                                                          IGG_STAGES};
extern "C" __constant__ int int_gemm_q_planes = IGEMM_QP;

// grid (ceil(N / (IGS_WARPS IGS_NT 16)), splits), block IGS_WARPS * 32, dynamic shared memory
// igemm::small_smem_bytes(IGS_MT, IGS_WARPS IGS_NT 16, IGEMM_QP, IGS_U, IGS_MAP, K, G, splits);
// ws: splits M N floats, counters: gridDim.x words, zero before the first launch (each launch
// leaves them zero).
extern "C" __global__ void __launch_bounds__(IGS_WARPS * 32)
int_gemm_small(const igemm_q_t* __restrict__ q, const signed char* __restrict__ w_q,
               const float* __restrict__ scale, const float* __restrict__ vth,
               const float* __restrict__ bias, int M, int N, int K, int G, int splits,
               float* __restrict__ ws, unsigned int* __restrict__ counters,
               float* __restrict__ out) {
    igemm::small_kernel<IGS_MT, IGS_NT, IGS_D, IGS_WARPS, IGS_U, IGS_MAP, IGEMM_QP>(
        q, w_q, scale, vth, bias, M, N, K, G, splits, ws, counters, out);
}

// As int_gemm_small with one tile of 8 q rows (M <= 8), IGS1_WARPS warps, IGS1_D steps in
// flight; shared memory small_smem_bytes(1, IGS1_WARPS IGS_NT 16, ...).
extern "C" __global__ void __launch_bounds__(IGS1_WARPS * 32)
int_gemm_small1(const igemm_q_t* __restrict__ q, const signed char* __restrict__ w_q,
                const float* __restrict__ scale, const float* __restrict__ vth,
                const float* __restrict__ bias, int M, int N, int K, int G, int splits,
                float* __restrict__ ws, unsigned int* __restrict__ counters,
                float* __restrict__ out) {
    igemm::small_kernel<1, IGS_NT, IGS1_D, IGS1_WARPS, IGS_U, IGS_MAP, IGEMM_QP>(
        q, w_q, scale, vth, bias, M, N, K, G, splits, ws, counters, out);
}

// grid (ceil(N / IGG_BN), ceil(M / IGG_BM), splits), block IGG_WM IGG_WN 32, dynamic shared
// memory igemm::general_smem_bytes(IGG_BM, IGG_BN, IGEMM_QP, IGG_STAGES); ws and counters as
// above (gridDim.x gridDim.y words).
extern "C" __global__ void __launch_bounds__(IGG_WM * IGG_WN * 32)
int_gemm_general(const igemm_q_t* __restrict__ q, const signed char* __restrict__ w_q,
                 const float* __restrict__ scale, const float* __restrict__ vth,
                 const float* __restrict__ bias, int M, int N, int K, int G, int splits,
                 float* __restrict__ ws, unsigned int* __restrict__ counters,
                 float* __restrict__ out) {
    igemm::general_kernel<IGG_BM, IGG_BN, IGG_WM, IGG_WN, IGG_STAGES, IGEMM_QP>(
        q, w_q, scale, vth, bias, M, N, K, G, splits, ws, counters, out);
}

// The layer's exact path where q may not fit int8, chosen on the device: the general path's
// tiles (a Q_WIDE build takes q as int32) over a persistent grid of any size, run only where
// stats, the activation stage's [qmin, qmax, o, T], says q does not fit int8. Where it fits,
// every block returns at once and the int8 launch before this one stands (a grid of a few
// blocks an SM, so that costs one wave, not one a tile); where it does not, this launch
// writes all of out over that launch's. Arguments as int_gemm_general's, stats first.
extern "C" __global__ void __launch_bounds__(IGG_WM * IGG_WN * 32)
int_gemm_general_unfit(const int* __restrict__ stats, const igemm_q_t* __restrict__ q,
                       const signed char* __restrict__ w_q, const float* __restrict__ scale,
                       const float* __restrict__ vth, const float* __restrict__ bias, int M,
                       int N, int K, int G, int splits, float* __restrict__ ws,
                       unsigned int* __restrict__ counters, float* __restrict__ out) {
    if (__ldg(stats) >= -128 && __ldg(stats + 1) <= 127) return;
    igemm::general_persistent<IGG_BM, IGG_BN, IGG_WM, IGG_WN, IGG_STAGES, IGEMM_QP>(
        q, w_q, scale, vth, bias, M, N, K, G, splits, ws, counters, out);
}


// ---------------------------------------------------------------------------------------
// The small-M paths on a TMA ring (int_gemm_stream1: M <= 8; int_gemm_stream: M <= 16), for
// int8 q, G = 128 and K % 16 == 0: the weights streamed by TMA, the units shared evenly over
// a persistent grid (common/igemm_stream.cuh; they read q only through its tensor map, so a
// Q_WIDE build compiles them too, unused). IGS_STREAM=0 keeps the launch on the
// register-fed small kernels above for the same shapes (the host reads the choice from
// int_gemm_stream_config), so the two can be timed side by side.
#include "igemm_stream.cuh"
#ifndef IGS_STREAM
#define IGS_STREAM 1
#endif
// Groups a unit (1, 2 or 4: the 128-byte pieces of each weight row a unit takes) and units
// in flight an SM. Two groups a unit measured 10 % faster than one on 18944 x 3584, and four
// 1-5 % faster than two at M = 1 and 16 on two shapes and both GPUs, each within its noise;
// the depth did not matter from 64 KB of weights in flight an SM to 160 KB (kernels/NOTES.md).
#ifndef IGT_GROUPS
#define IGT_GROUPS 4
#endif
#ifndef IGT_STAGES
#define IGT_STAGES (16 / IGT_GROUPS)
#endif
static_assert(IGT_GROUPS == 1 || IGT_GROUPS == 2 || IGT_GROUPS == 4, "IGT_GROUPS: 1, 2 or 4");
static_assert(igemm::StreamSmem<2, IGT_STAGES, IGT_GROUPS>::ALLOC <= 232448,
              "the stream kernels' ring does not fit an SM's shared memory");

// On, threads, shared memory of stream1 and of stream, groups a unit.
extern "C" __constant__ int int_gemm_stream_config[5] = {
    IGS_STREAM, igemm::ST_THREADS, igemm::StreamSmem<1, IGT_STAGES, IGT_GROUPS>::ALLOC,
    igemm::StreamSmem<2, IGT_STAGES, IGT_GROUPS>::ALLOC, IGT_GROUPS};

// grid (P, 1, 1), P <= min(units, ST_MAX_CTAS) (one CTA an SM; units: ceil(N / 64) x
// ceil(K / (128 IGT_GROUPS))); block ST_THREADS; dynamic
// shared memory from int_gemm_stream_config. tmap_w: w_q uint8 {K, N}, box {128, 64};
// tmap_q: q {K, M}, box {128, 8} (stream1) or {128, 16} (stream); SWIZZLE_128B. ws: P 64
// 8 MT floats; counters: ceil(N / 64) words, zero before the first launch.
extern "C" __global__ void __launch_bounds__(igemm::ST_THREADS, 1)
int_gemm_stream1(const __grid_constant__ CUtensorMap tmap_w,
                 const __grid_constant__ CUtensorMap tmap_q, const float* __restrict__ scale,
                 const float* __restrict__ vth, const float* __restrict__ bias,
                 float* __restrict__ ws, unsigned int* __restrict__ counters,
                 float* __restrict__ out, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    igemm::stream_kernel<1, IGT_STAGES, IGT_GROUPS>(&tmap_w, &tmap_q, scale, vth, bias, ws,
                                                    counters, out, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(igemm::ST_THREADS, 1)
int_gemm_stream(const __grid_constant__ CUtensorMap tmap_w,
                const __grid_constant__ CUtensorMap tmap_q, const float* __restrict__ scale,
                const float* __restrict__ vth, const float* __restrict__ bias,
                float* __restrict__ ws, unsigned int* __restrict__ counters,
                float* __restrict__ out, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    igemm::stream_kernel<2, IGT_STAGES, IGT_GROUPS>(&tmap_w, &tmap_q, scale, vth, bias, ws,
                                                    counters, out, M, N, K);
#endif
}
