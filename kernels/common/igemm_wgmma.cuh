// The Hopper (sm_90a) integer GEMM's body: warp-specialised, persistent, CTA clusters
// sharing their tiles by multicast, wgmma on int8 tiles fed through a ring of shared-memory
// stages, the group promotion after each K tile and the epilogue (its design, defines and
// launch: int_gemm.cu's opening comment, for its 384 threads). Its A operand comes from an
// `ASrc`: by TMA from q as int8 (TmaA, int_gemm.cu), or written into the stage by the
// producer warpgroups themselves (int_gemm_packed.cu decodes the spikes' bit-packed planes
// there, on two producer warpgroups: 512 threads, IG_PRODUCER_WARPGROUPS). Header-only device code,
// in each including module's own anonymous namespace.
#pragma once

#include "igemm_sm90.cuh"

// How a tile's results reach out: 1, each consumer warpgroup writes them (vth and bias
// applied) to a shared buffer (IG_OUT_FULL) and one thread stores them with TMA bulk tensor
// stores that drain while the next tile's K loop runs; 0, every thread stores its own with
// 32 global stores at the tile's end, which the warps wait on (kernels/NOTES.md). The
// buffers cost a ring stage: 5 stages, not 6 (and with IG_OUT_FULL's 64 KB they fit only
// without an alignment slack).
#ifndef IG_TMA_STORE
#define IG_TMA_STORE 1
#endif
// With IG_TMA_STORE=1: 1, each consumer warpgroup's buffer is 32 KB and holds its whole
// 64 x 128 result, stored with four box stores in one bulk group, so the only wait for the
// TMA to have read the buffer falls at the next tile's epilogue, a K loop later; 0, 16 KB
// filled twice a tile, the second fill waiting for the TMA to have read the first. The
// 64 KB of buffers and 5 stages fit the 227 KB only without the 1024-byte alignment slack:
// the layout then starts at the dynamic buffer's own (1024-aligned) base.
#ifndef IG_OUT_FULL
#define IG_OUT_FULL 1
#endif
#ifndef IG_STAGES
#if IG_TMA_STORE
#define IG_STAGES 5
#else
#define IG_STAGES 6
#endif
#endif
#ifndef IG_CLUSTER_M
#define IG_CLUSTER_M 2
#endif
// CTAs of a cluster along N (1 or 2): with 2, the cluster is 2 x 2 and A is multicast too
// (N must then be a multiple of 256). 1 until 2 is measured faster (kernels/NOTES.md).
#ifndef IG_CLUSTER_N
#define IG_CLUSTER_N 1
#endif
// The persistent grid the launch takes (read from int_gemm_wgmma_config): 0, the clusters
// the driver's occupancy query says run at once; 1, the SMs over the cluster size (the
// pairs' grid measured fastest; the query answered fewer clusters, kernels/NOTES.md).
#ifndef IG_GRID
#define IG_GRID 1
#endif
#ifndef IG_OVERLAP
#define IG_OVERLAP 0
#endif
// The most ways int_gemm_wgmma_single splits K where its tiles are fewer than the SMs (the
// launch chooses how many, from the SMs and the tiles; 1: never).
#ifndef IG_SPLITS_MAX
#define IG_SPLITS_MAX 4
#endif
// Ping-pong: the two consumer warpgroups take turns issuing their K tile's wgmmas (two named
// barriers hand the turn over), so one's wgmmas run while the other promotes its group sums
// and the tensor pipe is not left empty while both promote at once (kernels/NOTES.md).
#ifndef IG_PINGPONG
#define IG_PINGPONG 1
#endif
// Ping-pong: how many of a K tile's four wgmmas may still run when the turn is handed over
// (4: at issue; 0: once all are done). Handing over at issue lets the two warpgroups' wgmmas
// share the tensor pipe and finish together, and then both promote at once with the pipe
// idle (kernels/NOTES.md).
#ifndef IG_HANDOVER
#define IG_HANDOVER 1
#endif
// How a group's int32 sum becomes a float: 0, the magic-number add (an integer add and a
// float add, both full-rate); 1, cvt.rn.f32.s32 (one I2FP); 2, half of the accumulators one
// way and half the other; 3, three quarters by I2FP. Both are exact for |sum| < 2^22, so the
// results are the same bits; only the pipes and the issue cost differ (kernels/NOTES.md).
#ifndef IG_I2F
#define IG_I2F 1
#endif
static_assert(IG_I2F >= 0 && IG_I2F <= 3, "IG_I2F must be 0, 1, 2 or 3");
// 0 leaves the promotion out (the stage is still freed): a diagnostic build whose results
// are wrong by design. It measures the TMA and barrier pipeline alone: with nothing reading
// the accumulators, ptxas removes the wgmmas too (kernels/NOTES.md).
#ifndef IG_PROMOTE
#define IG_PROMOTE 1
#endif
// How a warpgroup's 64 x 128 K tile is issued: 0, four m64n128k32 wgmmas on one accumulator
// (one dependent chain); 1, eight m64n64k32, the accumulator's two column halves as two
// independent chains, interleaved (the same registers; A is read twice from shared memory);
// 2, the left half's chain and then the right half's as two commit groups, the left half
// promoted while the right half's wgmmas still run.
#ifndef IG_SPLIT
#define IG_SPLIT 0
#endif
// 1 reads the K tile's scales from shared memory into registers as soon as its wgmmas are
// issued, so their latency is spent while the wgmmas run; 0 reads them after the wait.
#ifndef IG_SCALES_EARLY
#define IG_SCALES_EARLY 1
#endif
// 1 computes the consumers' K-loop shared addresses once, before the loop (the descriptors'
// start words, the full and empty barriers', the scales'), and waits and arrives on the
// barriers by those addresses; 0 leaves the address arithmetic to the compiler, which
// rebuilds it every K tile. The same arithmetic, so the same bits (kernels/NOTES.md).
#ifndef IG_LEAN
#define IG_LEAN 1
#endif
// 1 frees a stage as soon as its wgmmas are done and its scales are in registers, so the
// producer refills it during the promotion; 0 frees it after the promotion. (IG_SPLIT=2
// and IG_OVERLAP always free it after.)
#ifndef IG_EARLY_RELEASE
#define IG_EARLY_RELEASE 1
#endif
// 1: every consumer lane arrives on this CTA's empty barrier for its own reads of the stage
// (its scales by ld.shared; a release each) and lane 0 alone on the other CTAs' of the
// cluster (which wrote into this CTA by TMA, read here only by the wgmmas); 0: lane 0 alone
// everywhere, after __syncwarp. The same order by the PTX memory model; compute-sanitizer's
// racecheck reported the 0 build's scales (their cp.async against lanes 1-31's reads) where
// the ring wraps (kernels/NOTES.md).
#ifndef IG_ARRIVE_LANES
#define IG_ARRIVE_LANES 1
#endif
static_assert(IG_ARRIVE_LANES == 0 || IG_ARRIVE_LANES == 1, "IG_ARRIVE_LANES: 0 or 1");
// setmaxnreg split of the TMA producer's kernel: 128 producer threads + 256 consumer threads
// within 64K registers (a clustered or split-K kernel's producer needs a few more than 40 to
// stay clear of spills).
// The defaults follow each entry point (PRODUCER_REGS<WIDE>, CONSUMER_REGS<WIDE> below); a -D
// of either sets it for both entry points. They are the TMA producer's: an A source written
// by its producers (not by TMA) sets its own split and ignores these.
// Producer warpgroups: 1 (warpgroup 0), or 2 (warpgroups 0 and 3, 512 threads) for an A source
// written by its producers, which then share its decode out between them.
#ifndef IG_PRODUCER_WARPGROUPS
#define IG_PRODUCER_WARPGROUPS 1
#endif

namespace {

constexpr int BM = 128, BN = 128, BK = 128;
constexpr int STAGES = IG_STAGES;
// The register split of a kernel whose producer needs more than 40 registers (WIDE) or not.
#ifdef IG_PRODUCER_REGS
template <bool WIDE> constexpr int PRODUCER_REGS = IG_PRODUCER_REGS;
#else
template <bool WIDE> constexpr int PRODUCER_REGS = WIDE ? 56 : 40;
#endif
#ifdef IG_CONSUMER_REGS
template <bool WIDE> constexpr int CONSUMER_REGS = IG_CONSUMER_REGS;
#else
template <bool WIDE> constexpr int CONSUMER_REGS = WIDE ? 224 : 232;
#endif
constexpr int A_BYTES = BM * BK;          // 16 KB
constexpr int B_BYTES = BN * BK;          // 16 KB
constexpr int SC_BYTES = BN * 4;          // 512 B
// IG_TMA_STORE: each consumer warpgroup's staging buffer, 64 rows x 128 columns of fp32
// (IG_OUT_FULL) or 64 of them, as 64 x 32 boxes of 8 KB (a row of a box is 128 bytes, the
// TMA's swizzle span), 1024-aligned for that 128-byte swizzle.
constexpr int OUT_BOX_ROWS = 64, OUT_BOX_COLS = 32;
constexpr int OUT_BOX_BYTES = OUT_BOX_ROWS * OUT_BOX_COLS * 4;
constexpr bool OUT_FULL = IG_TMA_STORE && IG_OUT_FULL;
constexpr int OUT_PASSES = OUT_FULL ? 1 : 2;   // buffer fills a tile takes
constexpr int OUT_BOXES = 4 / OUT_PASSES;      // boxes a warpgroup's buffer holds
constexpr int OUT_BYTES = IG_TMA_STORE ? 2 * OUT_BOXES * OUT_BOX_BYTES : 0;
// OUT_FULL puts the buffers right after the tiles, which leaves them 1024-aligned without
// padding, and the scales and barriers last.
constexpr int OFF_A = 0;
constexpr int OFF_B = OFF_A + STAGES * A_BYTES;
constexpr int OFF_SC = OFF_B + STAGES * B_BYTES + (OUT_FULL ? OUT_BYTES : 0);
constexpr int OFF_FULL = OFF_SC + STAGES * SC_BYTES;
constexpr int OFF_EMPTY = OFF_FULL + STAGES * 8;
constexpr int OFF_OUT = OUT_FULL ? OFF_B + STAGES * B_BYTES
                                 : (OFF_EMPTY + STAGES * 8 + 1023) / 1024 * 1024;
constexpr int SMEM_USED = IG_TMA_STORE && !OUT_FULL ? OFF_OUT + OUT_BYTES : OFF_EMPTY + STAGES * 8;
// Slack to align the base to 1024 (SW128), but for OUT_FULL, whose 5 stages and 64 KB of
// buffers leave no room for it: that build relies on the dynamic buffer's own alignment.
constexpr int SMEM_ALLOC = SMEM_USED + (OUT_FULL ? 0 : 1024);
static_assert(OUT_BOX_COLS * 4 == 128 && OUT_BOX_ROWS == 64,
              "a box is a warpgroup's 64 rows of 128 bytes (the epilogue's swizzle)");
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0 && OFF_B % 1024 == 0 &&
              OFF_OUT % 1024 == 0 && OUT_BOX_BYTES % 1024 == 0,
              "tiles and out boxes 1024-aligned (SW128)");
constexpr int PRODUCER_WGS = IG_PRODUCER_WARPGROUPS;
static_assert(PRODUCER_WGS == 1 || PRODUCER_WGS == 2, "IG_PRODUCER_WARPGROUPS: 1 or 2");
constexpr int THREADS = 128 * (2 + PRODUCER_WGS);
// The registers the launch gives a thread (65536 / THREADS, rounded down to 8): 168 of 384, 128
// of 512.
constexpr int LAUNCH_REGS = (65536 / THREADS) / 8 * 8;
[[maybe_unused]] constexpr int CONSUMER_WARPS = 8;
[[maybe_unused]] constexpr int HANDOVER = IG_PINGPONG ? IG_HANDOVER : 0;
static_assert(IG_HANDOVER >= 0 && IG_HANDOVER <= BK / 32, "IG_HANDOVER: 0 to 4 wgmmas");
[[maybe_unused]] constexpr uint64_t HINT = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_NORMAL);

static_assert(IG_CLUSTER_M == 1 || IG_CLUSTER_M == 2, "IG_CLUSTER_M must be 1 or 2");
static_assert(IG_SPLIT >= 0 && IG_SPLIT <= 2, "IG_SPLIT must be 0, 1 or 2");
static_assert(!(IG_SPLIT && IG_OVERLAP), "IG_SPLIT and IG_OVERLAP exclude each other");
static_assert(!(IG_OVERLAP && IG_PINGPONG), "IG_OVERLAP and IG_PINGPONG exclude each other");
static_assert(IG_CLUSTER_N == 1 || IG_CLUSTER_N == 2, "IG_CLUSTER_N must be 1 or 2");
static_assert(IG_SPLITS_MAX >= 1, "IG_SPLITS_MAX: at least 1");
// (within the registers the launch gives the CTA; the defaults are the one TMA producer's)
static_assert(PRODUCER_WGS > 1 ||
                  (PRODUCER_REGS<false> * 128 + CONSUMER_REGS<false> * 256 <= LAUNCH_REGS * THREADS &&
                   PRODUCER_REGS<true> * 128 + CONSUMER_REGS<true> * 256 <= LAUNCH_REGS * THREADS),
              "register split");
static_assert(SMEM_ALLOC <= 232448, "too many stages for 227 KB of shared memory");

// Named barriers of the ping-pong (0 is __syncthreads'): TURN0 lets warpgroup 1 (c = 0)
// issue, TURN1 warpgroup 2 (c = 1); each generation is one warpgroup's arrive and the other's
// sync, 256 threads. OUT0 + c: consumer warpgroup c's own 128 threads (its staging buffer).
// SOURCE_BAR: the first id an A source may take for its producers' own (int_gemm_packed.cu's
// staging refill); ids up to 15.
[[maybe_unused]] constexpr int TURN0 = 1, TURN1 = 2, OUT0 = 3, SOURCE_BAR = 5;
template <int ID>
__device__ __forceinline__ void bar_sync() {
    asm volatile("bar.sync %0, 256;\n" ::"n"(ID) : "memory");
}
template <int ID>
__device__ __forceinline__ void bar_arrive() {
    asm volatile("bar.arrive %0, 256;\n" ::"n"(ID) : "memory");
}
// Named barrier OUT0 + c over consumer warpgroup c's 128 threads (ids fixed at compile time,
// so ptxas reserves only the barriers the kernel uses).
[[maybe_unused]] __device__ __forceinline__ void bar_sync_out(int c) {
    if (c == 0) asm volatile("bar.sync %0, 128;\n" ::"n"(OUT0) : "memory");
    else asm volatile("bar.sync %0, 128;\n" ::"n"(OUT0 + 1) : "memory");
}

struct TileCoord {
    int m0, n0;
};

// Work unit u of the persistent walk: its tile t and its K tiles [kb, ke) (SPLIT_K: K split
// `sp` ways into whole K tiles, a tile's units consecutive; else the whole of K).
struct UnitSpan {
    int t, kb, ke;
};
template <bool SPLIT_K>
__device__ __forceinline__ UnitSpan unit_span(int u, int sp, int nk) {
    if constexpr (SPLIT_K) return {u / sp, (u % sp) * nk / sp, (u % sp + 1) * nk / sp};
    return {u, 0, nk};
}

// A by TMA: q int8 [M, K] through its tensor map (a __grid_constant__ parameter of the entry
// point), box {BK, BM / CN}, rows past M zero-filled. An A source that is not by TMA (BY_TMA
// false) has its producer warpgroups' threads (128 PRODUCER_WGS) write each stage's A tile, in
// the 128-byte swizzle a TMA would have used, and each arrive on the stage's full barrier
// (ARRIVALS of them). It may set the warpgroups' register split (PRODUCER_REGS,
// CONSUMER_REGS; 0: the kernel's), initialises its own barriers in `init(smem)` (thread 0,
// with the kernel's), and runs the producer's loop through `run(body)`, handing `body` a
// decoder with AHEAD (how many steps, a step being a unit's K tile, its loads run in front
// of its decode), `ahead(m0, kt)` (the loads of a step to come, called in step order by all
// producer threads) and `fill(a_addr, m0, kt)` (the next step's tile into the stage at shared
// address a_addr).
struct TmaA {
    static constexpr bool BY_TMA = true;
    static constexpr int ARRIVALS = 0;
    static constexpr int PRODUCER_REGS = 0, CONSUMER_REGS = 0;
    const CUtensorMap& map;
};

// Cluster tile t -> this CTA's (m0, n0) (the CTA at (mi, ni) of its CM x CN cluster; cnb
// cluster columns); cluster rows grouped by group_m for L2 reuse.
template <int CM, int CN>
[[maybe_unused]] __device__ __forceinline__ TileCoord tile_coord(int t, int cmb, int cnb, int group_m,
                                                int mi, int ni) {
    const int per_group = group_m * cnb;
    const int gid = t / per_group;
    const int first = gid * group_m;
    const int gsz = min(cmb - first, group_m);
    const int r = t - gid * per_group;
    const int mc = first + r % gsz;
    const int nc = r / gsz;
    return {(mc * CM + mi) * BM, (nc * CN + ni) * BN};
}

}  // namespace

namespace {

// out = vth * acc + bias for one thread's share of a consumer warp's 16 x 128 results: rows
// row0 and row0 + 8, columns col + 8 i + {0, 1} (acc[4 i + 0, 1] and acc[4 i + 2, 3]), by
// streaming global stores; rows past M are not stored. The epilogue without TMA stores and
// the split of K's last warp both end here.
__device__ __forceinline__ void store_rows(const float (&acc)[64], int row0, int col, int M,
                                           int N, const float* __restrict__ vth,
                                           const float* __restrict__ bias,
                                           float* __restrict__ out) {
    const int row1 = row0 + 8;
    const float vth0 = row0 < M ? __ldg(vth + row0) : 0.0f;
    const float vth1 = row1 < M ? __ldg(vth + row1) : 0.0f;
    float* o0 = out + static_cast<size_t>(row0) * N + col;
    float* o1 = o0 + static_cast<size_t>(8) * N;  // row1 (64-bit: no int product of N)
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const float2 b = __ldg(reinterpret_cast<const float2*>(bias + col + 8 * i));
        if (row0 < M)
            __stcs(reinterpret_cast<float2*>(o0 + 8 * i),
                   make_float2(fmaf(vth0, acc[4 * i + 0], b.x), fmaf(vth0, acc[4 * i + 1], b.y)));
        if (row1 < M)
            __stcs(reinterpret_cast<float2*>(o1 + 8 * i),
                   make_float2(fmaf(vth1, acc[4 * i + 2], b.x), fmaf(vth1, acc[4 * i + 3], b.y)));
    }
}

// A split unit's end, for one consumer warp: its 16 rows x 128 columns of sums (row0 and
// row0 + 8 of this thread, columns col + 8 i + {0, 1}) into ws's slice j, then a ticket; the
// warp holding the last ticket of the tile's `sp` adds slices 0 .. sp - 1 in that order
// (from L2: other SMs wrote them), stores out = vth * sum + bias and zeroes the counter for
// the next launch. Rows past M are neither written nor read.
__device__ __forceinline__ void split_epilogue(const float (&facc)[64], float* __restrict__ ws,
                                               unsigned int* counter, int j, int sp, int row0,
                                               int col, int M, int N,
                                               const float* __restrict__ vth,
                                               const float* __restrict__ bias,
                                               float* __restrict__ out) {
    const int row1 = row0 + 8;
    const size_t slice = static_cast<size_t>(M) * N;
    const size_t eight_rows = static_cast<size_t>(8) * N;  // row0 to row1
    float* w0 = ws + j * slice + static_cast<size_t>(row0) * N + col;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        if (row0 < M)
            __stcg(reinterpret_cast<float2*>(w0 + 8 * i), make_float2(facc[4 * i + 0], facc[4 * i + 1]));
        if (row1 < M)
            __stcg(reinterpret_cast<float2*>(w0 + eight_rows + 8 * i),
                   make_float2(facc[4 * i + 2], facc[4 * i + 3]));
    }
    __threadfence();  // this lane's sums visible to the GPU before the warp's ticket
    __syncwarp();
    unsigned int ticket = 0;
    if ((threadIdx.x & 31) == 0) {
        ticket = atomicAdd(counter, 1u);
        __threadfence();  // the ticket before any read of the other splits' sums
    }
    __syncwarp();  // orders lane 0's ticket before the other lanes' reads
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    if (ticket != static_cast<unsigned int>(sp - 1)) return;
    __threadfence();  // every other split's sums, seen after their tickets
    float sum[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) sum[i] = 0.0f;
    const float* r0 = ws + static_cast<size_t>(row0) * N + col;
    for (int jj = 0; jj < sp; ++jj) {
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            if (row0 < M) {
                const float2 a = __ldcg(reinterpret_cast<const float2*>(r0 + jj * slice + 8 * i));
                sum[4 * i + 0] += a.x;
                sum[4 * i + 1] += a.y;
            }
            if (row1 < M) {
                const float2 b = __ldcg(reinterpret_cast<const float2*>(r0 + jj * slice + eight_rows + 8 * i));
                sum[4 * i + 2] += b.x;
                sum[4 * i + 3] += b.y;
            }
        }
    }
    store_rows(sum, row0, col, M, N, vth, bias, out);
    if ((threadIdx.x & 31) == 0) *counter = 0u;  // for the next launch (stream order)
}

// Stage s's B tile for K tile kt by TMA (lane 0 of the producer): this CTA's part of the
// tile its cluster column shares, multicast to the CTAs of that column (CM > 1).
template <int CM>
__device__ __forceinline__ void load_b(const CUtensorMap& tmap_w, uint64_t* bar, uint8_t* smem,
                                       int s, int kt, int n0, int mi, int ni) {
    if (CM == 1) {
        cute::SM90_TMA_LOAD_2D::copy(&tmap_w, bar, HINT, smem + OFF_B + s * B_BYTES, kt * BK,
                                     n0);
    } else {
        // columns mi of B's CM parts, to the CTAs of this cluster column
        const uint16_t col = static_cast<uint16_t>(((1 << CM) - 1) << (CM * ni));
        cute::SM90_TMA_LOAD_MULTICAST_2D::copy(&tmap_w, bar, col, HINT,
                                               smem + OFF_B + s * B_BYTES + mi * (B_BYTES / CM),
                                               kt * BK, n0 + mi * (BN / CM));
    }
}

// Stage s's 128 scales of group kt (one warp's lanes, by cp.async, then their arrivals on
// the stage's full barrier). Column n goes to slot (n / 16) * 16 + ((n % 8) / 2) * 4 +
// ((n / 8) % 2) * 2 + n % 2: then the four scales a consumer thread needs for two adjacent
// 8-column blocks are one 16-byte word.
__device__ __forceinline__ void copy_scales(uint64_t* bar, uint32_t sbase, int s, int kt,
                                            const float* __restrict__ scol, int ng, int lane) {
    const uint32_t dst = sbase + OFF_SC + s * SC_BYTES;
#pragma unroll
    for (int j = 0; j < BN / 32; ++j) {
        const int n = lane + 32 * j;
        const int slot = (n & ~15) | ((n & 6) << 1) | ((n & 8) >> 2) | (n & 1);
        igemm::cp_async_4(dst + 4 * slot, scol + static_cast<size_t>(n) * ng + kt);
    }
    igemm::cp_async_arrive_noinc(bar);
}

// The producer of an A source that is not by TMA (every thread of the producer warpgroups,
// 0 and, with two, 3; warps 0-3 and 12-15): for each
// stage, once the consumers have freed it, warp 0's lane 0 loads B by TMA (multicast over the
// cluster's column as the TMA producer does) and warp 0 the group's scales by cp.async, while
// every thread writes its share of the A tile through the source's decoder, fences its
// stores for the async proxy (the wgmmas read them) and arrives on the stage's full barrier.
template <int CM, int CN, bool SPLIT_K, class ASrc>
__device__ __forceinline__ void produce_decoded(const ASrc& asrc, const CUtensorMap& tmap_w,
                                                const CUtensorMap& tmap_out,
                                                const float* __restrict__ scale, uint8_t* smem,
                                                uint64_t* full, uint64_t* empty, int warp,
                                                int lane, int nk, int sp, int nunits, int cid,
                                                int ncl, int cmb, int cnb, int group_m, int mi,
                                                int ni) {
    const uint32_t sbase = igemm::smem_u32(smem);
    if (warp == 0 && lane == 0) {
        cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(&tmap_w));
        if constexpr (IG_TMA_STORE)
            cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(&tmap_out));
    }
    // A step is one K tile of one unit; `first` is a unit's first step, `next` the one after.
    struct Step {
        int u, kt, ke, m0, n0;
    };
    // Past the last unit: a step of no tile (u >= nunits ends both walks). A unit of no K
    // tiles (a split of more ways than K tiles, which the launch never asks for) is skipped,
    // as the consumers' loop skips it.
    auto first = [&](int u) -> Step {
        for (; u < nunits; u += ncl) {
            const UnitSpan us = unit_span<SPLIT_K>(u, sp, nk);
            if (us.kb == us.ke) continue;
            const TileCoord tc = tile_coord<CM, CN>(us.t, cmb, cnb, group_m, mi, ni);
            return {u, us.kb, us.ke, tc.m0, tc.n0};
        }
        return {u, 0, 0, 0, 0};
    };
    auto next = [&](Step st) -> Step { return ++st.kt < st.ke ? st : first(st.u + ncl); };
    asrc.run([&](auto dec) {
        // The source's loads run AHEAD steps in front of the decode (none for a source that
        // loads what it decodes).
        Step ahead = first(cid);
        for (int i = 0; i < decltype(dec)::AHEAD && ahead.u < nunits; ++i) {
            dec.ahead(ahead.m0, ahead.kt);
            ahead = next(ahead);
        }
        int s = 0;
        uint32_t ph = 0;
        for (Step st = first(cid); st.u < nunits; st = next(st)) {
            igemm::Barrier::wait(&empty[s], ph ^ 1);
            if (warp == 0) {
                if (lane == 0) {
                    igemm::TxBarrier::arrive_and_expect_tx(&full[s], B_BYTES);
                    load_b<CM>(tmap_w, &full[s], smem, s, st.kt, st.n0, mi, ni);
                }
                copy_scales(&full[s], sbase, s, st.kt, scale + static_cast<size_t>(st.n0) * nk,
                            nk, lane);
            }
            dec.fill(sbase + OFF_A + s * A_BYTES, st.m0, st.kt);
            cutlass::arch::fence_view_async_shared();  // the stores, seen by the wgmmas
            igemm::Barrier::arrive(&full[s]);
            if (decltype(dec)::AHEAD > 0 && ahead.u < nunits) {
                dec.ahead(ahead.m0, ahead.kt);
                ahead = next(ahead);
            }
            if (++s == STAGES) {
                s = 0;
                ph ^= 1;
            }
        }
    });
}

// The kernel's body on clusters of CM x CN CTAs (rank = mi + CM ni), inlined into each entry
// point below; the tensor maps are the entry's __grid_constant__ parameters, by reference.
// SPLIT_K: K is split into `splits` ranges of whole K tiles, a work unit being one tile's one
// range (units of a tile consecutive); with splits > 1 each consumer warp writes its unit's
// sums (before vth and bias) to ws [splits, M, N] and takes a ticket on counters [tile, warp];
// the warp that takes the last one adds the splits' sums in split order (the same bits
// whichever finishes last), applies vth and bias, stores out and zeroes the counter.
template <int CM, int CN, bool SPLIT_K, class ASrc>
__device__ __forceinline__ void wgmma_tiles(const ASrc& asrc, const CUtensorMap& tmap_w,
                                            const CUtensorMap& tmap_out,
                                            const float* __restrict__ scale,
                                            const float* __restrict__ vth,
                                            const float* __restrict__ bias,
                                            float* __restrict__ out, int M, int N, int K,
                                            int group_m, int splits, float* __restrict__ ws,
                                            unsigned int* __restrict__ counters) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int CS = CM * CN;  // CTAs a cluster
    // The register split: a clustered producer's, or a split one's (its units' arithmetic),
    // needs more than 40 registers to stay clear of spills.
    constexpr bool WIDE_PRODUCER = CS > 1 || SPLIT_K;
    constexpr int P_REGS = ASrc::PRODUCER_REGS ? ASrc::PRODUCER_REGS : PRODUCER_REGS<WIDE_PRODUCER>;
    constexpr int C_REGS = ASrc::CONSUMER_REGS ? ASrc::CONSUMER_REGS : CONSUMER_REGS<WIDE_PRODUCER>;
    // setmaxnreg moves registers between the warpgroups within what the launch gave the CTA
    // (LAUNCH_REGS a thread): a split past it waits forever in the consumers' increase.
    static_assert(P_REGS * 128 * PRODUCER_WGS + C_REGS * 256 <= LAUNCH_REGS * THREADS,
                  "register split past the CTA's registers");
    static_assert(ASrc::BY_TMA || CN == 1, "A written by the producer is not multicast");
    static_assert(!ASrc::BY_TMA || PRODUCER_WGS == 1, "the TMA producer is one warpgroup");
    extern __shared__ __align__(1024) uint8_t smem_raw[];
#if IG_TMA_STORE && IG_OUT_FULL
    // No slack to align with (SMEM_ALLOC): smem_raw is the kernel's only shared variable, so
    // its __align__(1024) holds; if it ever does not, the swizzled tiles would be read wrong,
    // so stop here instead.
    igemm::trap_unless_1024_aligned(smem_raw);
    uint8_t* smem = smem_raw;
#else
    const uint32_t raw_addr = igemm::smem_u32(smem_raw);
    uint8_t* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
#endif
    const uint32_t sbase = igemm::smem_u32(smem);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + OFF_FULL);
    uint64_t* empty = reinterpret_cast<uint64_t*>(smem + OFF_EMPTY);
    float* sc = reinterpret_cast<float*>(smem + OFF_SC);

    const int tid = threadIdx.x;
    // Read through a shuffle from lane 0 so the compiler knows it is warp-uniform: what is
    // derived from it (the consumers' descriptors) then lives in uniform registers.
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int rank = (CS > 1) ? static_cast<int>(cute::block_rank_in_cluster()) : 0;
    const int mi = rank % CM, ni = rank / CM;  // this CTA's place in the cluster

    const int nk = K / BK;                  // K tiles = groups
    const int ng = nk;                      // scale row length
    const int nmb = (M + BM - 1) / BM;      // m blocks
    const int cmb = (nmb + CM - 1) / CM;    // cluster m blocks
    const int cnb = N / (BN * CN);           // cluster n blocks (N % (BN CN) == 0)
    const int ntiles = cmb * cnb;
    const int sp = SPLIT_K ? splits : 1;   // K ranges a tile
    const int nunits = ntiles * sp;
    const int cid = blockIdx.x / CS;
    const int ncl = gridDim.x / CS;
    if (group_m < 1) group_m = 1;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            igemm::TxBarrier::init(&full[s], 1 + 32 + ASrc::ARRIVALS);
            // Freed by this CTA's consumers (each lane, or each warp's lane 0) and by those
            // of every CTA it multicasts into (its row of the cluster for A, its column for
            // B; their warps' lane 0).
            igemm::Barrier::init(&empty[s], CONSUMER_WARPS * ((IG_ARRIVE_LANES ? 32 : 1) +
                                                              CM + CN - 2));
        }
        if constexpr (!ASrc::BY_TMA) asrc.init(smem);
        cutlass::arch::fence_barrier_init();
    }
    if (CS > 1) {
        cute::cluster_arrive_relaxed();
        cute::cluster_wait();
    } else {
        __syncthreads();
    }
    // Launched as the programmatic dependent of the kernel ahead of it (the layer's GEMM after
    // the activation stage), this kernel may start before that one ends: what is above (the
    // barriers, the cluster's handshake) runs under its tail, and nothing it writes (q, the
    // planes, vth) is read before the wait, which returns once it has ended and its writes
    // are visible. Launched otherwise, the wait returns at once.
    asm volatile("griddepcontrol.wait;" ::: "memory");

    if (wg == 0 || (PRODUCER_WGS > 1 && wg == 3)) {
        // ---------------- producer ----------------
        cutlass::arch::warpgroup_reg_dealloc<P_REGS>();
        if constexpr (!ASrc::BY_TMA) {
            produce_decoded<CM, CN, SPLIT_K>(asrc, tmap_w, tmap_out, scale, smem, full, empty,
                                              warp, lane, nk, sp, nunits, cid, ncl, cmb, cnb,
                                              group_m, mi, ni);
        } else if (warp == 0) {
            const CUtensorMap& tmap_q = asrc.map;
            if (lane == 0) {
                cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(&tmap_q));
                cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(&tmap_w));
                if constexpr (IG_TMA_STORE)
                    cute::prefetch_tma_descriptor(reinterpret_cast<const cute::TmaDescriptor*>(&tmap_out));
            }
            int s = 0;
            uint32_t ph = 0;
            for (int u = cid; u < nunits; u += ncl) {
                const auto [t, kb, ke] = unit_span<SPLIT_K>(u, sp, nk);
                const TileCoord tc = tile_coord<CM, CN>(t, cmb, cnb, group_m, mi, ni);
                const float* scol = scale + static_cast<size_t>(tc.n0) * ng;
                for (int kt = kb; kt < ke; ++kt) {
                    igemm::Barrier::wait(&empty[s], ph ^ 1);
                    if (lane == 0) {
                        igemm::TxBarrier::arrive_and_expect_tx(&full[s], A_BYTES + B_BYTES);
                        if (CN == 1) {
                            cute::SM90_TMA_LOAD_2D::copy(&tmap_q, &full[s], HINT,
                                                         smem + OFF_A + s * A_BYTES, kt * BK,
                                                         tc.m0);
                        } else {  // rows ni of A's CN parts, to the CTAs of this cluster row
                            uint16_t row = 0;
#pragma unroll
                            for (int j = 0; j < CN; ++j) row |= static_cast<uint16_t>(1 << (mi + CM * j));
                            cute::SM90_TMA_LOAD_MULTICAST_2D::copy(
                                &tmap_q, &full[s], row, HINT,
                                smem + OFF_A + s * A_BYTES + ni * (A_BYTES / CN), kt * BK,
                                tc.m0 + ni * (BM / CN));
                        }
                        load_b<CM>(tmap_w, &full[s], smem, s, kt, tc.n0, mi, ni);
                    }
                    copy_scales(&full[s], sbase, s, kt, scol, ng, lane);
                    if (++s == STAGES) {
                        s = 0;
                        ph ^= 1;
                    }
                }
            }
        }
    } else {
        // ---------------- consumers ----------------
        cutlass::arch::warpgroup_reg_alloc<C_REGS>();
        const int c = wg - 1;                 // which 64-row half of the tile
        const int wq = warp % 4;              // warp within the warpgroup
        [[maybe_unused]] const int wtid = tid - 128 * wg;  // thread within the warpgroup
        const uint64_t desc_a0 = igemm::desc_kmajor_sw128(sbase + OFF_A + c * 64 * BK);
        const uint64_t desc_b0 = igemm::desc_kmajor_sw128(sbase + OFF_B);
        // Only the low word (start address) of a descriptor moves from stage to stage and
        // from one k32 step to the next; it is advanced in 32 bits, without carries into the
        // high word (every address of the ring fits the 14-bit field).
        const uint32_t a_lo0 = static_cast<uint32_t>(desc_a0);
        const uint32_t b_lo0 = static_cast<uint32_t>(desc_b0);
        const uint64_t a_hi = desc_a0 & 0xFFFFFFFF00000000ull;
        const uint64_t b_hi = desc_b0 & 0xFFFFFFFF00000000ull;
        const float* sc_lane = sc + 4 * (lane & 3);
        // IG_LEAN's addresses: stage st's full barrier is full_a + 8 st, its empty barrier
        // empty_a + 8 st (peer_a / peer_b + 8 st in the cluster's other CTAs this one frees:
        // its cluster row's other CTA, A's source when CN = 2, and its column's, B's), its
        // scales for this thread sc_a + SC_BYTES st. Hidden from the compiler, which would
        // otherwise rebuild them from their parts in the loop.
        [[maybe_unused]] uint32_t a_lo_k = a_lo0, b_lo_k = b_lo0;
        [[maybe_unused]] uint32_t full_a = igemm::smem_u32(full), empty_a = igemm::smem_u32(empty);
        [[maybe_unused]] uint32_t sc_a = sbase + OFF_SC + 16 * (lane & 3);
        [[maybe_unused]] uint32_t peer_a = 0, peer_b = 0;
        if constexpr (IG_LEAN) {
            if constexpr (CN == 2) peer_a = igemm::cluster_addr(empty_a, mi + CM * (1 - ni));
            if constexpr (CM == 2) peer_b = igemm::cluster_addr(empty_a, (1 - mi) + CM * ni);
            igemm::opaque(a_lo_k);
            igemm::opaque(b_lo_k);
            igemm::opaque(full_a);
            igemm::opaque(empty_a);
            igemm::opaque(sc_a);
            igemm::opaque(peer_a);
            igemm::opaque(peer_b);
        }
        // Wait until stage st holds its K tile.
        auto wait_full = [&](int st, uint32_t phase) {
            if constexpr (IG_LEAN) igemm::mbar_wait(full_a + 8 * st, phase);
            else igemm::Barrier::wait(&full[st], phase);
        };
        int s = 0;
        uint32_t ph = 0;
        [[maybe_unused]] bool issued = false;  // ping-pong: this warpgroup has had a turn

        for (int u = cid; u < nunits; u += ncl) {
            const auto [t, kb, ke] = unit_span<SPLIT_K>(u, sp, nk);
            const TileCoord tc = tile_coord<CM, CN>(t, cmb, cnb, group_m, mi, ni);
            float facc[64];
#pragma unroll
            for (int i = 0; i < 64; ++i) facc[i] = 0.0f;

            // Accumulator j's group sum as a float (j: its register, a constant once the
            // promotion is unrolled), by I2FP or by the magic-number add as IG_I2F says.
            auto to_float = [](uint32_t x, int j) -> float {
                const bool i2f = IG_I2F == 1 || (IG_I2F == 2 && j % 2 == 0) ||
                                 (IG_I2F == 3 && j % 4 != 3);
                if (i2f) return __int2float_rn(static_cast<int>(x));
                return igemm::small_int_to_float(x);
            };
            // The scales of the group in stage st this thread needs: columns
            // 16 i2 + 2 (lane % 4) + {0, 1} and 16 i2 + 8 + ..., one 16-byte word an i2.
            auto load_scales = [&](int st, float4(&sv)[8]) {
                if constexpr (IG_LEAN) {
                    const uint32_t a = sc_a + static_cast<uint32_t>(st) * SC_BYTES;
#pragma unroll
                    for (int i2 = 0; i2 < 8; ++i2) sv[i2] = igemm::ld_shared_f4(a + 64 * i2);
                } else {
                    const float* sp = sc_lane + st * BN;
#pragma unroll
                    for (int i2 = 0; i2 < 8; ++i2)
                        sv[i2] = *reinterpret_cast<const float4*>(sp + 16 * i2);
                }
            };
            // facc += float(acc) * scale[n, g] over the accumulator's 16-column blocks
            // [i2b, i2e), the group's scales in sv.
            auto promote_cols = [&](auto i2b, auto i2e, const float4(&sv)[8],
                                    uint32_t(&acc)[64]) {
#pragma unroll
                for (int i2 = decltype(i2b)::value; i2 < decltype(i2e)::value; ++i2) {
                    if constexpr (IG_PROMOTE) {
                        const float4 v = sv[i2];
                        const int i = 8 * i2;  // acc[4 (2 i2) + ...] and acc[4 (2 i2 + 1) + ...]
                        facc[i + 0] = fmaf(to_float(acc[i + 0], i + 0), v.x, facc[i + 0]);
                        facc[i + 1] = fmaf(to_float(acc[i + 1], i + 1), v.y, facc[i + 1]);
                        facc[i + 2] = fmaf(to_float(acc[i + 2], i + 2), v.x, facc[i + 2]);
                        facc[i + 3] = fmaf(to_float(acc[i + 3], i + 3), v.y, facc[i + 3]);
                        facc[i + 4] = fmaf(to_float(acc[i + 4], i + 4), v.z, facc[i + 4]);
                        facc[i + 5] = fmaf(to_float(acc[i + 5], i + 5), v.w, facc[i + 5]);
                        facc[i + 6] = fmaf(to_float(acc[i + 6], i + 6), v.z, facc[i + 6]);
                        facc[i + 7] = fmaf(to_float(acc[i + 7], i + 7), v.w, facc[i + 7]);
                    }
                }
            };
            // Stage st is read: free it.
            auto release = [&](int st) {
                // Every lane's wgmmas done (and, in the 0 build, its scales read) before lane
                // 0 arrives for the warp.
                __syncwarp();
                if constexpr (IG_LEAN) {
                    const uint32_t off = 8 * static_cast<uint32_t>(st);
                    if (IG_ARRIVE_LANES || lane == 0) igemm::mbar_arrive(empty_a + off);
                    if (lane == 0) {
                        if constexpr (CN == 2) igemm::mbar_arrive_cluster(peer_a + off);
                        if constexpr (CM == 2) igemm::mbar_arrive_cluster(peer_b + off);
                    }
                } else {
                    if (IG_ARRIVE_LANES || lane == 0) igemm::Barrier::arrive(&empty[st]);
                    if (lane == 0 && CS > 1) {  // its cluster row (A's sources), column (B's)
#pragma unroll
                        for (int j = 0; j < CN; ++j)
                            if (j != ni) igemm::Barrier::arrive(&empty[st], mi + CM * j, 1);
#pragma unroll
                        for (int i = 0; i < CM; ++i)
                            if (i != mi) igemm::Barrier::arrive(&empty[st], i + CM * ni, 1);
                    }
                }
            };
            using I0 = std::integral_constant<int, 0>;
            using I4 = std::integral_constant<int, 4>;
            using I8 = std::integral_constant<int, 8>;

#if IG_OVERLAP
            auto promote = [&](int st, uint32_t(&acc)[64]) {
                float4 sv[8];
                load_scales(st, sv);
                promote_cols(I0{}, I8{}, sv, acc);
                release(st);
            };
            // Software-pipelined by one K tile: K tile kt+1's wgmmas run while kt is promoted.
            // Every iteration issues from the same two places (predicated off past the end),
            // so no copies of in-flight accumulators appear and ptxas keeps the wgmmas async.
            uint32_t acc0[64], acc1[64];
            int s0 = 0, s1 = 0;  // stages of the K tiles held in acc0 / acc1
            auto issue_p = [&](int st, uint32_t(&acc)[64], int p) {
                cute::warpgroup_arrive();
                const uint32_t a_lo = a_lo_k + static_cast<uint32_t>(st) * (A_BYTES >> 4);
                const uint32_t b_lo = b_lo_k + static_cast<uint32_t>(st) * (B_BYTES >> 4);
#pragma unroll
                for (int k = 0; k < BK / 32; ++k) {
                    const uint64_t da = a_hi | (a_lo + static_cast<uint32_t>(k * 32 >> 4));
                    const uint64_t db = b_hi | (b_lo + static_cast<uint32_t>(k * 32 >> 4));
                    igemm::wgmma_m64n128k32_pred(da, db, acc, k > 0 ? 1 : 0, p);
                }
                cute::warpgroup_commit_batch();
            };
            for (int kt = kb; kt <= ke; kt += 2) {
                {   // issue K tile kt into acc0; promote K tile kt - 1 from acc1
                    const int p = kt < ke;
                    if (p) {
                        wait_full(s, ph);
                        s0 = s;
                        if (++s == STAGES) { s = 0; ph ^= 1; }
                    }
                    issue_p(s0, acc0, p);
                    cute::warpgroup_wait<1>();
                    igemm::fence_regs(acc1);
                    if (kt >= kb + 1) promote(s1, acc1);
                }
                {   // issue K tile kt + 1 into acc1; promote K tile kt from acc0
                    const int p = kt + 1 < ke;
                    if (p) {
                        wait_full(s, ph);
                        s1 = s;
                        if (++s == STAGES) { s = 0; ph ^= 1; }
                    }
                    issue_p(s1, acc1, p);
                    cute::warpgroup_wait<1>();
                    igemm::fence_regs(acc0);
                    if (kt < ke) promote(s0, acc0);
                }
            }
            cute::warpgroup_wait<0>();
#else
            // The K tile in stage st into acc (its first wgmma restarts the group); with
            // 0 < HANDOVER < 4 committed as two batches, the last HANDOVER wgmmas the second.
            auto issue = [&](int st, uint32_t(&acc)[64]) {
                cute::warpgroup_arrive();
                const uint32_t a_lo = a_lo_k + static_cast<uint32_t>(st) * (A_BYTES >> 4);
                const uint32_t b_lo = b_lo_k + static_cast<uint32_t>(st) * (B_BYTES >> 4);
                // B's rows 64-127 (the right half's columns) start 64 x 128 bytes further.
                constexpr uint32_t B_HALF = (64 * BK) >> 4;
                if constexpr (IG_SPLIT == 2) {  // left chain, then right chain
#pragma unroll
                    for (int k = 0; k < BK / 32; ++k)
                        igemm::wgmma_m64n64k32<0>(a_hi | (a_lo + static_cast<uint32_t>(k * 2)),
                                                  b_hi | (b_lo + static_cast<uint32_t>(k * 2)),
                                                  acc, k > 0 ? 1 : 0);
                    cute::warpgroup_commit_batch();
#pragma unroll
                    for (int k = 0; k < BK / 32; ++k)
                        igemm::wgmma_m64n64k32<32>(
                            a_hi | (a_lo + static_cast<uint32_t>(k * 2)),
                            b_hi | (b_lo + B_HALF + static_cast<uint32_t>(k * 2)), acc,
                            k > 0 ? 1 : 0);
                    cute::warpgroup_commit_batch();
                } else {
#pragma unroll
                    for (int k = 0; k < BK / 32; ++k) {
                        const uint64_t da = a_hi | (a_lo + static_cast<uint32_t>(k * 32 >> 4));
                        const uint64_t db = b_hi | (b_lo + static_cast<uint32_t>(k * 32 >> 4));
                        if constexpr (IG_SPLIT == 0) {
                            igemm::wgmma_m64n128k32(da, db, acc, k > 0 ? 1 : 0);
                        } else {  // the two halves interleaved: two chains in flight
                            igemm::wgmma_m64n64k32<0>(da, db, acc, k > 0 ? 1 : 0);
                            igemm::wgmma_m64n64k32<32>(da, db + B_HALF, acc, k > 0 ? 1 : 0);
                        }
                        if (HANDOVER > 0 && HANDOVER < BK / 32 && k == BK / 32 - 1 - HANDOVER)
                            cute::warpgroup_commit_batch();
                    }
                    cute::warpgroup_commit_batch();
                }
            };
            uint32_t acc0[64];
            for (int kt = kb; kt < ke; ++kt) {
                wait_full(s, ph);
#if IG_PINGPONG
                // Wait for the turn (warpgroup 1's very first K tile goes first), issue, and
                // hand the turn over once all but HANDOVER of this K tile's wgmmas are done:
                // the other warpgroup's wgmmas then follow ours on the tensor pipe while we
                // promote, instead of sharing the pipe with ours and finishing with them.
                if (c == 0) {
                    if (issued) bar_sync<TURN0>();
                } else {
                    bar_sync<TURN1>();
                }
                issue(s, acc0);
                if constexpr (HANDOVER == 0) cute::warpgroup_wait<0>();
                else if constexpr (HANDOVER < BK / 32) cute::warpgroup_wait<1>();
                if (c == 0) bar_arrive<TURN1>(); else bar_arrive<TURN0>();
                issued = true;
#else
                issue(s, acc0);
#endif
                // The group's scales: read while the wgmmas run (IG_SCALES_EARLY), so that
                // the promotion does not wait on shared-memory latency, or just before it.
                float4 sv[8];
                if constexpr (IG_SCALES_EARLY) load_scales(s, sv);
                if constexpr (IG_SPLIT == 2) {  // the left half while the right still runs
                    cute::warpgroup_wait<1>();
                    if constexpr (!IG_SCALES_EARLY) load_scales(s, sv);
                    igemm::fence_regs<0, 32>(acc0);
                    promote_cols(I0{}, I4{}, sv, acc0);
                    cute::warpgroup_wait<0>();
                    igemm::fence_regs<32, 64>(acc0);
                    promote_cols(I4{}, I8{}, sv, acc0);
                } else {
                    cute::warpgroup_wait<0>();
                    if constexpr (!IG_SCALES_EARLY) load_scales(s, sv);
                    igemm::fence_regs(acc0);
                    // The stage's wgmmas are done and its scales are in registers.
                    if constexpr (IG_EARLY_RELEASE) release(s);
                    promote_cols(I0{}, I8{}, sv, acc0);
                }
                if (!IG_EARLY_RELEASE || IG_SPLIT == 2) release(s);
                if (++s == STAGES) { s = 0; ph ^= 1; }
            }
#endif

            // ---------------- epilogue: out = vth[m] * facc + bias[n] ----------------
            const int row0 = tc.m0 + c * 64 + wq * 16 + lane / 4;
            if constexpr (SPLIT_K) {
                if (sp > 1) {
                    split_epilogue(facc, ws,
                                   counters + (static_cast<size_t>(t) * CN + ni) * CONSUMER_WARPS +
                                       4 * c + wq,
                                   u % sp, sp, row0, tc.n0 + 2 * (lane & 3), M, N, vth, bias,
                                   out);
                    continue;
                }
            }
#if IG_TMA_STORE
            // The 128 columns through the warpgroup's buffer in OUT_PASSES fills of OUT_BOXES
            // 32-column boxes. Thread (wq, lane) holds rows r = wq 16 + lane / 4 and r + 8 of
            // the warpgroup's 64, columns 8 i + 2 (lane % 4) + {0, 1}; in a 64 x 32 box, row
            // r's 128 bytes have their 16-byte chunks in the order chunk ^ (r % 8)
            // (CU_TENSOR_MAP_SWIZZLE_128B), so a warp's eight rows write different banks.
            {
                const int row1 = row0 + 8;
                const float vth0 = row0 < M ? __ldg(vth + row0) : 0.0f;
                const float vth1 = row1 < M ? __ldg(vth + row1) : 0.0f;
                const float* bp = bias + tc.n0 + 2 * (lane & 3);
                constexpr int BLOCKS = 4 * OUT_BOXES;  // 8-column blocks i a fill holds
                const uint32_t buf = sbase + OFF_OUT + c * (OUT_BOXES * OUT_BOX_BYTES);
                const int r0 = wq * 16 + lane / 4;
                const uint32_t sw = static_cast<uint32_t>(lane / 4);  // r0 % 8 == (r0 + 8) % 8
#pragma unroll
                for (int h = 0; h < OUT_PASSES; ++h) {
                    // The buffer is free once the TMA has read what it stored from it last
                    // (with one fill a tile, the previous tile's stores, long since read).
                    if (wtid == 0) cute::tma_store_wait<0>();
                    bar_sync_out(c);
#pragma unroll
                    for (int j = 0; j < BLOCKS; ++j) {
                        const int i = BLOCKS * h + j;
                        const float2 b = __ldg(reinterpret_cast<const float2*>(bp + 8 * i));
                        const uint32_t chunk = static_cast<uint32_t>(2 * (j % 4) + (lane & 3) / 2);
                        const uint32_t at = buf + (j / 4) * OUT_BOX_BYTES + ((chunk ^ sw) << 4) +
                                            8 * (lane & 1);
                        igemm::st_shared_f2(at + r0 * 128,
                                            fmaf(vth0, facc[4 * i + 0], b.x), fmaf(vth0, facc[4 * i + 1], b.y));
                        igemm::st_shared_f2(at + (r0 + 8) * 128,
                                            fmaf(vth1, facc[4 * i + 2], b.x), fmaf(vth1, facc[4 * i + 3], b.y));
                    }
                    cute::tma_store_fence();  // the writes, visible to the TMA (async proxy)
                    bar_sync_out(c);
                    if (wtid == 0) {  // rows past M are clipped by the TMA; one bulk group a fill
                        const int col = tc.n0 + 8 * BLOCKS * h, row = tc.m0 + c * 64;
                        cute::SM90_TMA_STORE_2D::copy(&tmap_out, smem + (buf - sbase), col, row);
#pragma unroll
                        for (int b = 1; b < OUT_BOXES; ++b)
                            cute::SM90_TMA_STORE_2D::copy(&tmap_out,
                                                          smem + (buf - sbase) + b * OUT_BOX_BYTES,
                                                          col + OUT_BOX_COLS * b, row);
                        cute::tma_store_arrive();
                    }
                }
            }
#else
            store_rows(facc, row0, tc.n0 + 2 * (lane & 3), M, N, vth, bias, out);
#endif
        }
#if IG_PINGPONG && !IG_OVERLAP
        // Warpgroup 2's last hand-over is owed to warpgroup 1: take it, so no named-barrier
        // generation is left open at exit.
        if (c == 0 && issued) bar_sync<TURN0>();
#endif
#if IG_TMA_STORE
        // The last tile's stores, complete (not only read from shared memory) before exit.
        if (wtid == 0) igemm::bulk_wait_all();
#endif
    }

    // No CTA of a cluster may exit while its peer can still multicast into its shared memory
    // or arrive on its barriers.
    if (CS > 1) {
        cute::cluster_arrive();
        cute::cluster_wait();
    }
#else
    // Built for a target without wgmma/TMA (anything but sm_90a): not usable.
    asm volatile("trap;");
#endif
}

}  // namespace

#if IG_CLUSTER_M * IG_CLUSTER_N > 1
#define IG_CLUSTER_ATTR __cluster_dims__(IG_CLUSTER_M * IG_CLUSTER_N, 1, 1)
#else
#define IG_CLUSTER_ATTR
#endif
#if IG_CLUSTER_N > 1
#define IG_SINGLE_ATTR __cluster_dims__(IG_CLUSTER_N, 1, 1)
#else
#define IG_SINGLE_ATTR
#endif

