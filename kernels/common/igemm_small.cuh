// Exact integer GEMM with group scales, the small-M and general paths (SPEC "GEMM (seed
// step 6)"):
//     out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in group g} q[m, f] * w_q[n, f]) + bias[n]
// q [M, K] row-major, w_q int8 [N, K] row-major, scale fp32 [N, ceil(K / G)], vth fp32 [M],
// bias fp32 [N], out fp32 [M, N] row-major.
//
// Every group sum is an exact int32 dot product on the int8 tensor cores (mma.sync m16n8k32);
// only its promotion rounds: acc_f32 = fma(float(sum_int32), scale[n, g], acc_f32). vth and
// bias come in the epilogue as fma(vth[m], acc, bias[n]).
//
// q's element type is chosen at compile time by Q_WIDE:
//   Q_WIDE=0  q int8  (1 byte plane, s8 x s8 MMAs)
//   Q_WIDE=1  q int16 (2 planes: q = 256 hi + lo, lo = low byte as u8, hi = high byte as s8;
//             two MMAs per tile, u8 x s8 and s8 x s8; all of int16, exact)
//   Q_WIDE=2  q int32 with -2^23 <= q < 2^23 (3 planes, u8, u8, s8; three MMAs)
// The planes are split in registers as q is staged (a byte permutation, no arithmetic), and
// each group sum is rebuilt as S = S0 + 256 S1 (+ 65536 S2) in wrapping int32 arithmetic:
// exact whenever the true group sum fits int32, i.e. |q| * 127 * G < 2^31 (at G = 128,
// |q| < 132104; int16 q always qualifies when G <= 516). The int32 form covers the whole
// range the int32 accumulation allows for G >= 2.
//
// Two kernels:
//  * small_kernel: M <= 8 * MT (MT = 1, 2, 4, 8: M <= 8, 16, 32, 64). Memory-bound on the
//    weights. The weights are the MMA's A operand (16 output features x 32 k), streamed from
//    global memory straight into registers with 16-byte loads (ld.global.nc.L1::no_allocate),
//    D steps of 64 U k in flight per thread, optionally with L2 prefetches further ahead; q
//    (padded to 8 MT rows, zero rows) is the B operand, staged once per block in shared memory
//    (cp.async), the block's scales too. The dot product within a group is order-free, so the
//    MMA's k order is permuted to match the 16-byte chunks each thread loads (q is read with
//    the same permutation). Split-K over blockIdx.y (whole groups per split) with a
//    deterministic reduction: each split writes its partial sums to ws, the last block of an
//    n-block to arrive (a ticket in counters) adds the splits in order 0..splits-1 and writes
//    out; it resets the counter to 0 for the next launch. Preconditions: K % 16 == 0 and
//    G % 64 == 0 (G % 128 for the default layout MAP 0 with U 2); the kernel returns without
//    writing otherwise; any N, M <= 8 MT.
//  * general_kernel: any M, N, K, G. Block tile BM x BN, k tiles of 64 staged in shared memory
//    (cp.async, 3 stages, when K % 16 == 0; element loads otherwise), q the A operand and the
//    weights the B operand (ldmatrix), groups of any size: a 32-k chunk that straddles a group
//    boundary is issued once per group with the other group's weight bytes masked to zero.
#pragma once

#ifndef Q_WIDE
#define Q_WIDE 0
#endif

#if Q_WIDE == 0
typedef signed char igemm_q_t;
#define IGEMM_QP 1
#elif Q_WIDE == 1
typedef short igemm_q_t;
#define IGEMM_QP 2
#elif Q_WIDE == 2
typedef int igemm_q_t;
#define IGEMM_QP 3
#else
#error "Q_WIDE must be 0 (int8 q), 1 (int16 q) or 2 (int32 q, |q| < 2^23)"
#endif

// Optional L2 prefetch hint on the small kernel's weight loads: 0 (none), 128 or 256 bytes.
#ifndef IGS_L2PF
#define IGS_L2PF 0
#endif
// Optional L2 prefetch (prefetch.global.L2) of the weights IGS_PF steps ahead (0: off).
#ifndef IGS_PF
#define IGS_PF 0
#endif
// Optional bulk L2 prefetch (cp.async.bulk.prefetch.L2) IGS_BPF steps ahead, IGS_BPC steps a
// request (0: off).
#ifndef IGS_BPF
#define IGS_BPF 0
#endif
#ifndef IGS_BPC
#define IGS_BPC 4
#endif
// The general path's tile, as its launches plan it (harness/spikes/geometry.py restates it):
// BM x BN outputs a block, IGG_WM x IGG_WN warps, IGG_STAGES stages of K in flight.
#ifndef IGG_BM
#define IGG_BM 64
#endif
#ifndef IGG_BN
#define IGG_BN 64
#endif
#ifndef IGG_WM
#define IGG_WM 2
#endif
#ifndef IGG_WN
#define IGG_WN 2
#endif
#ifndef IGG_STAGES
#define IGG_STAGES 3
#endif

namespace igemm {

// ---------------------------------------------------------------------------------------
// Small helpers

// D += A * B on one m16n8k32 tile; AU/BU: operand is u8 (else s8).
template <bool AU, bool BU>
__device__ __forceinline__ void mma16832(int (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                         unsigned a3, unsigned b0, unsigned b1) {
    if constexpr (!AU && !BU) {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else if constexpr (!AU && BU) {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else if constexpr (AU && !BU) {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
}

// Plane p of QP is unsigned (u8) except the top one.
template <int QP, int P>
struct PlaneU8 {
    static constexpr bool value = (P < QP - 1);
};

// acc += tmp * 256^p (wrapping int32 arithmetic: exact whenever the true sum fits int32).
__device__ __forceinline__ int add_shifted(int acc, int tmp, int p) {
    return (int)((unsigned)acc + ((unsigned)tmp << (8 * p)));
}

// 16-byte global load of data read once: the read-only path, not allocated in L1.
__device__ __forceinline__ uint4 ldg_stream16(const void* p) {
    uint4 v;
#if IGS_L2PF == 256
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#elif IGS_L2PF == 128
    asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#endif
    return v;
}

__device__ __forceinline__ uint4 lds16(const void* p) {
    uint4 v;
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
    return v;
}

__device__ __forceinline__ void sts16(void* p, uint4 v) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n"
                 :: "r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// Split 16 consecutive q elements into QP byte planes (16 bytes each). `src` holds the
// elements as raw 32-bit words: 4 words for int8, 8 for int16, 16 for int32.
template <int QP>
__device__ __forceinline__ void split_planes(const unsigned* src, uint4 (&pl)[QP]) {
    if constexpr (QP == 1) {
        pl[0] = make_uint4(src[0], src[1], src[2], src[3]);
    } else if constexpr (QP == 2) {
        unsigned lo[4], hi[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            lo[i] = __byte_perm(src[2 * i], src[2 * i + 1], 0x6420);
            hi[i] = __byte_perm(src[2 * i], src[2 * i + 1], 0x7531);
        }
        pl[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
        pl[1] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    } else {
        unsigned b[3][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
            for (int p = 0; p < 3; ++p) {
                const unsigned sel = (unsigned)(p | ((p + 4) << 4));
                const unsigned x = __byte_perm(src[4 * i], src[4 * i + 1], sel);
                const unsigned y = __byte_perm(src[4 * i + 2], src[4 * i + 3], sel);
                b[p][i] = __byte_perm(x, y, 0x5410);
            }
        }
#pragma unroll
        for (int p = 0; p < 3; ++p) pl[p] = make_uint4(b[p][0], b[p][1], b[p][2], b[p][3]);
    }
}

// Load 16 q elements q[row][k .. k + 15] (elements at or past `lim` read as 0; row_ok false:
// all 0) and split them into planes. `vec`: the 16 elements are 16-byte aligned and lim is a
// multiple of 16 (so a unit is either whole or empty): vector loads. Else element loads.
template <int QP, class QT>
__device__ __forceinline__ void load_q_unit(const QT* __restrict__ rowp, int k, int lim,
                                            bool row_ok, bool vec, uint4 (&pl)[QP]) {
    constexpr int WORDS = 4 * (int)sizeof(QT);  // 32-bit words in 16 elements
    unsigned w[WORDS];
    if (vec) {
        if (row_ok && k < lim) {
            const uint4* p = reinterpret_cast<const uint4*>(rowp + k);
#pragma unroll
            for (int i = 0; i < WORDS / 4; ++i) {
                const uint4 v = __ldg(p + i);
                w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
            }
        } else {
#pragma unroll
            for (int i = 0; i < WORDS; ++i) w[i] = 0u;
        }
    } else {
        QT e[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) e[i] = (row_ok && k + i < lim) ? __ldg(rowp + k + i) : (QT)0;
        if constexpr (sizeof(QT) == 1) {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                w[i] = (unsigned)(unsigned char)e[4 * i] | ((unsigned)(unsigned char)e[4 * i + 1] << 8) |
                       ((unsigned)(unsigned char)e[4 * i + 2] << 16) | ((unsigned)(unsigned char)e[4 * i + 3] << 24);
        } else if constexpr (sizeof(QT) == 2) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
                w[i] = (unsigned)(unsigned short)e[2 * i] | ((unsigned)(unsigned short)e[2 * i + 1] << 16);
        } else {
#pragma unroll
            for (int i = 0; i < 16; ++i) w[i] = (unsigned)e[i];
        }
    }
    split_planes<QP>(w, pl);
}

// q given as bit-packed spike planes instead (activation_fused's packed layout, the
// unidirectional mode): plane t of row m is W = ceil(K / 32) words at planes + t plane_stride
// + m W, bit j of word w that plane's bit of value 32 w + j; v = sum_t bit_t 2^(T - 1 - t)
// and q = v + o (T and o from the activation stage's stats). The general path takes it as
// its A operand and decodes it in the A-tile load, so q is never in memory.
struct PackedQ {
    const unsigned* planes;
    size_t plane_stride;  // M W words
    int W, T, o;
};
template <class QT> struct IsPacked { static constexpr bool value = false; };
template <> struct IsPacked<PackedQ> { static constexpr bool value = true; };

// Values k .. k + 15 of row m (k % 16 == 0) as q split into QP byte planes (values past K,
// and a row past M: 0). QP = 1: in byte arithmetic mod 256, each plane ors its bit, shifted
// to its weight, into every value's byte (a plane worth 2^8 or more adds 0 mod 256), then o
// is added bytewise: exact where q fits int8. QP = 3: v and q = v + o whole in int32, then
// the byte planes of a wide build: exact for |q| < 2^23.
template <int QP>
__device__ __forceinline__ void load_packed_unit(const PackedQ& pq, int m, int k, int K,
                                                 bool row_ok, uint4 (&pl)[QP]) {
    static_assert(QP == 1 || QP == 3, "packed q: int8 (QP 1) or int32 (QP 3) planes");
    constexpr int WORDS = QP == 1 ? 4 : 16;  // int8 bytes 4 a word, or int32 values
    unsigned w[WORDS];
#pragma unroll
    for (int i = 0; i < WORDS; ++i) w[i] = 0u;
    if (row_ok && k < K) {
        const unsigned* wp = pq.planes + (size_t)m * pq.W + (k >> 5);
        for (int t = 0; t < pq.T; ++t) {
            const int p = pq.T - 1 - t;
            if (QP == 1 && p >= 8) continue;
            const unsigned h = __ldg(wp + (size_t)t * pq.plane_stride) >> (k & 16);
#pragma unroll
            for (int i = 0; i < WORDS; ++i) {
                if constexpr (QP == 1)  // 4 bits to the low bit of 4 bytes
                    w[i] |= ((((h >> (4 * i)) & 0xFu) * 0x00204081u) & 0x01010101u) << p;
                else
                    w[i] |= ((h >> i) & 1u) << p;
            }
        }
        // Past K a value's planes are 0 (padding), so v = 0, but q must be 0, not o.
        if constexpr (QP == 1) {
            const unsigned o4 = ((unsigned)pq.o & 0xFFu) * 0x01010101u;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int left = K - (k + 4 * i);
                const unsigned keep = left >= 4 ? 0xFFFFFFFFu
                                    : left <= 0 ? 0u : 0xFFFFFFFFu >> (8 * (4 - left));
                w[i] = __vadd4(w[i], o4) & keep;
            }
        } else {
#pragma unroll
            for (int i = 0; i < 16; ++i) w[i] = k + i < K ? w[i] + (unsigned)pq.o : 0u;
        }
    }
    split_planes<QP>(w, pl);
}

__device__ __forceinline__ void cp_async16(void* sdst, const void* gsrc, bool ok) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(sdst);
    const int n = ok ? 16 : 0;  // 0: zero-fill, nothing read
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(a), "l"(gsrc), "r"(n)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}
__device__ __forceinline__ void cp_async4(void* sdst, const void* gsrc, bool ok) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(sdst);
    const int n = ok ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(a), "l"(gsrc), "r"(n)
                 : "memory");
}
__device__ __forceinline__ void prefetch_l2(const void* p) {
    asm volatile("prefetch.global.L2 [%0];\n" :: "l"(p));
}

// ---------------------------------------------------------------------------------------
// Small-M kernel

// Largest k range of one split, rounded to the step of 64 U k (what the q tile must hold).
__host__ __device__ __forceinline__ int small_kcap(int K, int G, int splits, int U) {
    const int ng = (K + G - 1) / G;
    const int ks = 64 * U;
    const long long cap = ((long long)((ng + splits - 1) / splits) * G + ks - 1) / ks * ks;
    const int kr = (K + ks - 1) / ks * ks;
    return cap < kr ? (int)cap : kr;
}
// Bytes between q rows in shared memory: >= kcap, and chosen so that the two q rows one
// quarter-warp reads with its 16-byte loads fall in disjoint banks: each row's 4 threads
// read 16 bytes at a pitch of 16 (MAP 1, or U = 1) or 32 (MAP 0, U = 2) bytes, so the second
// row is offset by 64 or 16 bytes mod 128.
__host__ __device__ __forceinline__ int small_qstride(int K, int G, int splits, int U, int MAP) {
    return ((small_kcap(K, G, splits, U) + 127) & ~127) + ((MAP == 0 && U == 2) ? 16 : 64);
}
// Floats between scale rows in shared memory (groups per split, made odd).
__host__ __device__ __forceinline__ int small_sstride(int K, int G, int splits) {
    const int ng = (K + G - 1) / G;
    return ((ng + splits - 1) / splits) | 1;
}
// Dynamic shared memory of the small kernel, in bytes (rows = WARPS NT 16).
__host__ __device__ __forceinline__ int small_smem_bytes(int MT, int rows, int QP, int U, int MAP,
                                                          int K, int G, int splits) {
    return QP * MT * 8 * small_qstride(K, G, splits, U, MAP) +
           4 * rows * small_sstride(K, G, splits);
}

// The small-M kernel body. Grid: (ceil(N / (WARPS NT 16)), splits); block WARPS * 32;
// dynamic shared memory small_smem_bytes(MT, WARPS NT 16, QP, U, MAP, K, G, splits);
// splits <= ng.
// ws: splits * M * N floats and counters: gridDim.x zeroed words (both unused when
// splits == 1). A step is 64 U contiguous k of each of the warp's 16 NT weight rows, read by
// the row's 4 threads as U 16-byte chunks each; D steps in flight in registers. Two layouts:
//   MAP 0: thread t reads 16 U contiguous bytes (chunk u at k = 16 U t + 16 u); the promotion
//          is checked once per step, so G % (64 U) == 0 is needed; U = 1 or 2.
//   MAP 1: chunk u of the row is 64 contiguous bytes (thread t: k = 64 u + 16 t), each load
//          instruction takes 8 rows x 64 contiguous bytes; the promotion is checked after each
//          64-k chunk, so G % 64 == 0 suffices for any U (1, 2, 4).
// Measured on the H200 (N 18944, K 3584, M 16, G 128): MAP 0 / U 2 30.6-31.6 us, MAP 1 / U 2
// 35.9-41.9 us (see .dev/int_gemm_small/NOTES.md). Needs K % 16 == 0 in both.
// Optional L2 prefetch: IGS_PF (prefetch.global.L2 by every thread, IGS_PF steps ahead) or
// IGS_BPF (cp.async.bulk.prefetch.L2: one thread per row prefetches IGS_BPC steps of its row,
// IGS_BPF steps ahead, every IGS_BPC steps).
template <int MT, int NT, int D, int WARPS, int U, int MAP, int QP, class QT>
__device__ __forceinline__ void small_kernel(
    const QT* __restrict__ q, const signed char* __restrict__ w, const float* __restrict__ scale,
    const float* __restrict__ vth, const float* __restrict__ bias, int M, int N, int K, int G,
    int splits, float* __restrict__ ws, unsigned* __restrict__ counters,
    float* __restrict__ out) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int s_last;
    constexpr int ROWS = WARPS * NT * 16;  // output features per block
    constexpr int MP = MT * 8;             // q rows padded
    constexpr int NTHR = WARPS * 32;
    constexpr int KS = 64 * U;             // k per step
    static_assert(U == 1 || U == 2 || U == 4, "U: 1, 2 or 4 chunks of 64 k per row and step");
    static_assert(MAP == 1 || U <= 2, "MAP 0: U = 1 or 2");
    constexpr int TSTR = MAP == 0 ? 16 * U : 16;  // k between the 4 threads of a row
    constexpr int CSTR = MAP == 0 ? 16 : 64;      // k between a thread's chunks
    if ((K & 15) || (G % (MAP == 0 ? KS : 64)) || M > MP || M < 1 || N < 1 || K < 1) return;

    const int ng = (K + G - 1) / G;
    const int y = blockIdx.y;
    const int g0 = (int)((long long)y * ng / splits);
    const int g1 = (int)((long long)(y + 1) * ng / splits);
    const int kbeg = g0 * G;
    const int kend = min(g1 * G, K);
    const int nsteps = kend > kbeg ? (kend - kbeg + KS - 1) / KS : 0;
    const int qstride = small_qstride(K, G, splits, U, MAP);
    const int sstride = small_sstride(K, G, splits);
    signed char* sq = reinterpret_cast<signed char*>(smem);
    float* ssc = reinterpret_cast<float*>(smem + QP * MP * qstride);

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int gq = lane >> 2, t = lane & 3;
    const int nblk = blockIdx.x * ROWS;
    const int nw = nblk + warp * NT * 16;
    const int kt0 = kbeg + TSTR * t;  // this thread's first k

    // ---- prologue: the first D steps of weights in flight before anything else
    const signed char* wp[NT][2];
    bool wok[NT][2];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = nw + nt * 16 + gq + 8 * h;
            wok[nt][h] = row < N;
            wp[nt][h] = w + (size_t)(row < N ? row : 0) * K + kt0;
        }
    uint4 wr[D][NT][2][U];
    const uint4 z4 = make_uint4(0u, 0u, 0u, 0u);
    auto load_step = [&](uint4 (&dst)[NT][2][U], int st) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const bool kok = kt0 + KS * st + CSTR * u < kend;
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    dst[nt][h][u] = (kok && wok[nt][h]) ? ldg_stream16(wp[nt][h] + KS * st + CSTR * u) : z4;
        }
    };
#pragma unroll
    for (int d = 0; d < D; ++d) load_step(wr[d], d);
#if IGS_PF > 0
    for (int st = D; st < IGS_PF && st < nsteps; ++st)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int u = 0; u < (MAP == 0 ? 1 : U); ++u)  // MAP 0: a row's step is one line
                    if (wok[nt][h]) prefetch_l2(wp[nt][h] + KS * st + CSTR * u);
#endif
#if IGS_BPF > 0
    // bulk L2 prefetch: lane r < 16 NT owns row nw + r
    const bool bpf_ok = lane < NT * 16 && nw + lane < N;
    const signed char* bpf_row = w + (size_t)(bpf_ok ? nw + lane : 0) * K;
    auto bulk_prefetch = [&](int st) {  // steps st .. st + IGS_BPC - 1 of this lane's row
        const int ko = kbeg + KS * st;
        if (bpf_ok && st < nsteps && ko < kend) {
            const int bytes = min(KS * IGS_BPC, kend - ko);
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" :: "l"(bpf_row + ko), "r"(bytes) : "memory");
        }
    };
    for (int st = 0; st < IGS_BPF; st += IGS_BPC) bulk_prefetch(st);
#endif

    // ---- stage q (planes, zero rows >= M and k >= kend, up to the step) and scales, all
    // loads in flight at once (cp.async, or batches of 4 units through registers for the
    // wide planes); the weight loads above stay in flight meanwhile.
    {
        const int kl = nsteps * KS;
        const int upr = kl >> 4;  // 16-element units per row
        const int nunits = MP * upr;
        if constexpr (QP == 1) {
            for (int u = threadIdx.x; u < nunits; u += NTHR) {
                const int m = u / upr, kk = (u - m * upr) << 4;
                const bool ok = m < M && kbeg + kk < kend;
                cp_async16(sq + m * qstride + kk, ok ? (const void*)(q + (size_t)m * K + kbeg + kk) : (const void*)q, ok);
            }
        } else {
            for (int u0 = threadIdx.x; u0 < nunits; u0 += 4 * NTHR) {
                uint4 pl[4][QP];
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int u = u0 + b * NTHR;
                    const int m = u / upr, kk = (u - m * upr) << 4;
                    load_q_unit<QP>(q + (size_t)(m < M ? m : 0) * K, kbeg + kk, kend, u < nunits && m < M, true, pl[b]);
                }
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int u = u0 + b * NTHR;
                    if (u < nunits) {
                        const int m = u / upr, kk = (u - m * upr) << 4;
#pragma unroll
                        for (int p = 0; p < QP; ++p) sts16(sq + (p * MP + m) * qstride + kk, pl[b][p]);
                    }
                }
            }
        }
        const int gn = g1 - g0;
        for (int i = threadIdx.x; i < ROWS * gn; i += NTHR) {
            const int r = i / gn, c = i - r * gn;
            const int n = nblk + r;
            cp_async4(ssc + r * sstride + c, n < N ? (const void*)(scale + (size_t)n * ng + g0 + c) : (const void*)scale, n < N);
        }
        cp_async_commit();
        cp_async_wait<0>();
    }
    __syncthreads();

    // ---- main loop: 64 U k per step, promotion at each group's end
    float facc[NT][MT][4];
    int iacc[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) { facc[nt][j][e] = 0.0f; iacc[nt][j][e] = 0; }

    // promotion units per group: 64-k chunks (MAP 1) or steps (MAP 0)
    const int cpg = MAP == 1 ? G >> 6 : G / KS;
    const int gn = g1 - g0;
    int left = cpg, gl = 0;  // units left in the group, group index within the split
    const signed char* sqt = sq + gq * qstride + TSTR * t;
    const float* ssct = ssc + (warp * NT * 16 + gq) * sstride;

    for (int s0 = 0; s0 < nsteps; s0 += D) {
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const int s = s0 + d;
            if (s < nsteps) {
#pragma unroll
                for (int u = 0; u < U; ++u) {
#pragma unroll
                for (int j = 0; j < MT; ++j) {
                    uint4 qb[QP];
#pragma unroll
                    for (int p = 0; p < QP; ++p)
                        qb[p] = lds16(sqt + (p * MP + j * 8) * qstride + KS * s + CSTR * u);
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        const uint4 a = wr[d][nt][0][u], b = wr[d][nt][1][u];
                        mma16832<false, PlaneU8<QP, 0>::value>(iacc[nt][j], a.x, b.x, a.y, b.y,
                                                                qb[0].x, qb[0].y);
                        mma16832<false, PlaneU8<QP, 0>::value>(iacc[nt][j], a.z, b.z, a.w, b.w,
                                                                qb[0].z, qb[0].w);
                        if constexpr (QP > 1) {
                            int tmp[4] = {0, 0, 0, 0};
                            mma16832<false, PlaneU8<QP, 1>::value>(tmp, a.x, b.x, a.y, b.y,
                                                                    qb[1].x, qb[1].y);
                            mma16832<false, PlaneU8<QP, 1>::value>(tmp, a.z, b.z, a.w, b.w,
                                                                    qb[1].z, qb[1].w);
#pragma unroll
                            for (int e = 0; e < 4; ++e)
                                iacc[nt][j][e] = add_shifted(iacc[nt][j][e], tmp[e], 1);
                        }
                        if constexpr (QP > 2) {
                            int tmp[4] = {0, 0, 0, 0};
                            mma16832<false, PlaneU8<QP, 2>::value>(tmp, a.x, b.x, a.y, b.y,
                                                                    qb[2].x, qb[2].y);
                            mma16832<false, PlaneU8<QP, 2>::value>(tmp, a.z, b.z, a.w, b.w,
                                                                    qb[2].z, qb[2].w);
#pragma unroll
                            for (int e = 0; e < 4; ++e)
                                iacc[nt][j][e] = add_shifted(iacc[nt][j][e], tmp[e], 2);
                        }
                    }
                }
                    if ((MAP == 1 || u == U - 1) && (--left == 0 || (s == nsteps - 1 && u == U - 1))) {
                        if (gl < gn) {
#pragma unroll
                            for (int nt = 0; nt < NT; ++nt) {
                                const float sc0 = ssct[(nt * 16) * sstride + gl];
                                const float sc1 = ssct[(nt * 16 + 8) * sstride + gl];
#pragma unroll
                                for (int j = 0; j < MT; ++j)
#pragma unroll
                                    for (int e = 0; e < 4; ++e) {
                                        facc[nt][j][e] = __fmaf_rn(__int2float_rn(iacc[nt][j][e]),
                                                                   e < 2 ? sc0 : sc1, facc[nt][j][e]);
                                        iacc[nt][j][e] = 0;
                                    }
                            }
                        }
                        left = cpg;
                        ++gl;
                    }
                }
#if IGS_PF > 0
                // L2 prefetch of step s + IGS_PF (no registers held): the register ring then
                // waits on L2 rather than DRAM
                if (s + IGS_PF < nsteps) {
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                        for (int h = 0; h < 2; ++h)
#pragma unroll
                            for (int u = 0; u < (MAP == 0 ? 1 : U); ++u)
                                if (wok[nt][h]) prefetch_l2(wp[nt][h] + KS * (s + IGS_PF) + CSTR * u);
                }
#endif
#if IGS_BPF > 0
                if (s % IGS_BPC == 0) bulk_prefetch(s + IGS_BPF);
#endif
                // refill this slot with step s + D
                if (s + D < nsteps) load_step(wr[d], s + D);
            }
        }
    }

    // ---- epilogue
    // Fragment element e of (nt, j): feature n = nw + 16 nt + gq + 8 (e >> 1),
    // row m = 8 j + 2 t + (e & 1).
    if (splits == 1) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int n = nw + nt * 16 + gq + 8 * (e >> 1);
                    const int m = j * 8 + 2 * t + (e & 1);
                    if (m < M && n < N)
                        out[(size_t)m * N + n] = __fmaf_rn(__ldg(vth + m), facc[nt][j][e], __ldg(bias + n));
                }
        return;
    }
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int n = nw + nt * 16 + gq + 8 * (e >> 1);
                const int m = j * 8 + 2 * t + (e & 1);
                if (m < M && n < N) ws[((size_t)y * M + m) * N + n] = facc[nt][j][e];
            }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned prev = atomicAdd(counters + blockIdx.x, 1u);
        s_last = (prev == (unsigned)(splits - 1));
    }
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    // The last block of this n-block: sum the splits in a fixed order (deterministic).
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int n = nw + nt * 16 + gq + 8 * (e >> 1);
                const int m = j * 8 + 2 * t + (e & 1);
                if (m < M && n < N) {
                    float acc = 0.0f;
                    for (int yy = 0; yy < splits; ++yy)
                        acc += __ldcg(ws + ((size_t)yy * M + m) * N + n);
                    out[(size_t)m * N + n] = __fmaf_rn(__ldg(vth + m), acc, __ldg(bias + n));
                }
            }
    if (threadIdx.x == 0) counters[blockIdx.x] = 0u;  // ready for the next launch
}

// ---------------------------------------------------------------------------------------
// General kernel

__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], const void* p) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
// Keep the bytes of a 4-byte word whose k (kb + i, i = 0..3) lies in [lo, hi).
__device__ __forceinline__ unsigned kmask4(int kb, int lo, int hi) {
    const int a = min(max(lo - kb, 0), 4), b = min(max(hi - kb, 0), 4);
    return b > a ? ((0xffffffffu >> (32 - 8 * (b - a))) << (8 * a)) : 0u;
}

constexpr int GEN_BK = 64;           // k per shared-memory stage
constexpr int GEN_BKP = GEN_BK + 16; // row pitch in bytes (ldmatrix conflict-free)

__host__ __device__ __forceinline__ int general_smem_bytes(int BM, int BN, int QP, int STAGES) {
    return STAGES * (QP * BM + BN) * GEN_BKP;
}

// One tile of the general path: column tile bx, row tile by, split bz, of tiles_x column
// tiles (general_kernel: the block's own indices; a persistent loop: each tile it takes,
// with a __syncthreads() between two, which reuse shared memory and s_last). Block
// WM * WN * 32; dynamic shared memory general_smem_bytes(BM, BN, QP, STAGES). Split bz
// takes whole groups [bz ng / splits, (bz + 1) ng / splits); with splits > 1, ws holds
// splits * M * N floats and counters tiles_x * ceil(M / BM) zeroed words (the same
// deterministic reduction as the small kernel's); splits <= ng.
template <int BM, int BN, int WM, int WN, int STAGES, int QP, class QT>
__device__ __forceinline__ void general_tile(
    const QT* __restrict__ q, const signed char* __restrict__ w, const float* __restrict__ scale,
    const float* __restrict__ vth, const float* __restrict__ bias, int M, int N, int K, int G,
    int splits, float* __restrict__ ws, unsigned* __restrict__ counters,
    float* __restrict__ out, int bx, int by, int bz, int tiles_x) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int s_last;
    constexpr int NTHR = WM * WN * 32;
    constexpr int TM = BM / WM, TN = BN / WN;  // warp tile
    constexpr int MI = TM / 16, NJ = TN / 8;
    static_assert(MI >= 1 && NJ >= 2 && NJ % 2 == 0, "warp tile: 16 x 16 at least");
    constexpr int AU = BM * (GEN_BK / 16), BU = BN * (GEN_BK / 16);  // 16-byte units per tile
    constexpr int AUT = (AU + NTHR - 1) / NTHR, BUT = (BU + NTHR - 1) / NTHR;
    constexpr int STAGE_BYTES = (QP * BM + BN) * GEN_BKP;
    if (M < 1 || N < 1 || K < 1 || G < 1) return;

    const int ng = (K + G - 1) / G;
    const int m0 = by * BM, n0 = bx * BN;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int gq = lane >> 2, t = lane & 3;
    const int wm0 = (warp / WN) * TM, wn0 = (warp % WN) * TN;
    const bool vec = (K & 15) == 0;  // rows 16-byte aligned: vector and async loads
    const int z = bz;
    const int g0 = (int)((long long)z * ng / splits);
    const int g1 = (int)((long long)(z + 1) * ng / splits);
    const int kbeg = g0 * G, kend = min(g1 * G, K);
    const int kt0 = kbeg / GEN_BK;
    const int ktiles = kend > kbeg ? (kend - 1) / GEN_BK + 1 - kt0 : 0;  // tiles of this split

    auto sA = [&](int st, int p) { return smem + st * STAGE_BYTES + p * BM * GEN_BKP; };
    auto sB = [&](int st) { return smem + st * STAGE_BYTES + QP * BM * GEN_BKP; };

    // q and (unaligned) weight units go through registers, loaded before a tile's MMAs and
    // stored after them; aligned int8 operands go by cp.async (packed planes never do:
    // they are decoded on the way).
    constexpr bool PACKED = IsPacked<QT>::value;
    constexpr bool A_ASYNC_OK = (QP == 1) && !PACKED;
    uint4 ra[AUT][QP];
    uint4 rb[BUT];

    auto issue_async = [&](int kt, int st) {  // cp.async parts of tile kt into stage st
        if (!vec) return;
        const int k0 = kt * GEN_BK;
#pragma unroll
        for (int i = 0; i < BUT; ++i) {
            const int u = threadIdx.x + i * NTHR;
            if (u < BU) {
                const int r = u >> 2, kk = (u & 3) << 4;
                const int n = n0 + r, k = k0 + kk;
                const bool ok = n < N && k < K;
                cp_async16(sB(st) + r * GEN_BKP + kk, ok ? (const void*)(w + (size_t)n * K + k) : (const void*)w, ok);
            }
        }
        if constexpr (A_ASYNC_OK) {
#pragma unroll
            for (int i = 0; i < AUT; ++i) {
                const int u = threadIdx.x + i * NTHR;
                if (u < AU) {
                    const int r = u >> 2, kk = (u & 3) << 4;
                    const int m = m0 + r, k = k0 + kk;
                    const bool ok = m < M && k < K;
                    cp_async16(sA(st, 0) + r * GEN_BKP + kk,
                               ok ? (const void*)(q + (size_t)m * K + k) : (const void*)q, ok);
                }
            }
        }
    };
    auto load_regs = [&](int kt) {  // register parts of tile kt
        const int k0 = kt * GEN_BK;
        if (!(vec && A_ASYNC_OK)) {
#pragma unroll
            for (int i = 0; i < AUT; ++i) {
                const int u = threadIdx.x + i * NTHR;
                if (u < AU) {
                    const int r = u >> 2, kk = (u & 3) << 4;
                    const int m = m0 + r;
                    if constexpr (PACKED)
                        load_packed_unit<QP>(*q, m, k0 + kk, K, m < M, ra[i]);
                    else
                        load_q_unit<QP>(q + (size_t)(m < M ? m : 0) * K, k0 + kk, K, m < M, vec, ra[i]);
                }
            }
        }
        if (!vec) {
#pragma unroll
            for (int i = 0; i < BUT; ++i) {
                const int u = threadIdx.x + i * NTHR;
                if (u < BU) {
                    const int r = u >> 2, kk = (u & 3) << 4;
                    const int n = n0 + r;
                    uint4 pl[1];
                    load_q_unit<1>(w + (size_t)(n < N ? n : 0) * K, k0 + kk, K, n < N, false, pl);
                    rb[i] = pl[0];
                }
            }
        }
    };
    auto store_regs = [&](int st) {
        if (!(vec && A_ASYNC_OK)) {
#pragma unroll
            for (int i = 0; i < AUT; ++i) {
                const int u = threadIdx.x + i * NTHR;
                if (u < AU) {
                    const int r = u >> 2, kk = (u & 3) << 4;
#pragma unroll
                    for (int p = 0; p < QP; ++p) sts16(sA(st, p) + r * GEN_BKP + kk, ra[i][p]);
                }
            }
        }
        if (!vec) {
#pragma unroll
            for (int i = 0; i < BUT; ++i) {
                const int u = threadIdx.x + i * NTHR;
                if (u < BU) {
                    const int r = u >> 2, kk = (u & 3) << 4;
                    sts16(sB(st) + r * GEN_BKP + kk, rb[i]);
                }
            }
        }
    };

    float facc[MI][NJ][4];
    int iacc[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) { facc[i][j][e] = 0.0f; iacc[i][j][e] = 0; }

    // prologue: tiles 0 .. STAGES-2
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) {
            issue_async(kt0 + s, s);
            load_regs(kt0 + s);
            store_regs(s);
        }
        cp_async_commit();
    }

    // scales of the next group to promote (prefetched one group ahead)
    float sn[NJ][2];
    auto load_scales = [&](int g) {
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const int n = n0 + wn0 + j * 8 + 2 * t;
            sn[j][0] = (n < N && g < g1) ? __ldg(scale + (size_t)n * ng + g) : 0.0f;
            sn[j][1] = (n + 1 < N && g < g1) ? __ldg(scale + (size_t)(n + 1) * ng + g) : 0.0f;
        }
    };
    load_scales(g0);

    // ldmatrix lane addressing
    const int lrow = lane & 7, lmat = lane >> 3;
    const int a_row = (lmat & 1) * 8 + lrow, a_k = (lmat >> 1) * 16;  // A: (rows, k) blocks
    const int b_row = (lmat >> 1) * 8 + lrow, b_k = (lmat & 1) * 16;  // B: (n, k) blocks

    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const int nk = kt + STAGES - 1;
        const bool more = nk < ktiles;
        if (more) {
            issue_async(kt0 + nk, nk % STAGES);
            load_regs(kt0 + nk);
        }
        cp_async_commit();

        const int st = kt % STAGES;
#pragma unroll
        for (int kc = 0; kc < GEN_BK; kc += 32) {
            const int kabs = (kt0 + kt) * GEN_BK + kc;
            if (kabs >= kend) break;
            if (kabs + 32 <= kbeg) continue;
            unsigned af[QP][MI][4], bf[NJ][2];
#pragma unroll
            for (int p = 0; p < QP; ++p)
#pragma unroll
                for (int i = 0; i < MI; ++i)
                    ldsm_x4(af[p][i], sA(st, p) + (wm0 + i * 16 + a_row) * GEN_BKP + kc + a_k);
#pragma unroll
            for (int j = 0; j < NJ; j += 2) {
                unsigned r[4];
                ldsm_x4(r, sB(st) + (wn0 + j * 8 + b_row) * GEN_BKP + kc + b_k);
                bf[j][0] = r[0]; bf[j][1] = r[1]; bf[j + 1][0] = r[2]; bf[j + 1][1] = r[3];
            }
            const int kend_c = min(kabs + 32, kend);
            const int gfirst = max(kabs / G, g0), glast = (kend_c - 1) / G;
            for (int g = gfirst; g <= glast; ++g) {
                const int lo = max(g * G, kabs), hi = min(min(g * G + G, K), kabs + 32);
                unsigned b2[NJ][2];
                if (lo == kabs && hi == kabs + 32) {
#pragma unroll
                    for (int j = 0; j < NJ; ++j) { b2[j][0] = bf[j][0]; b2[j][1] = bf[j][1]; }
                } else {
                    const unsigned mk0 = kmask4(kabs + 4 * t, lo, hi);
                    const unsigned mk1 = kmask4(kabs + 16 + 4 * t, lo, hi);
#pragma unroll
                    for (int j = 0; j < NJ; ++j) { b2[j][0] = bf[j][0] & mk0; b2[j][1] = bf[j][1] & mk1; }
                }
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int j = 0; j < NJ; ++j) {
                        mma16832<PlaneU8<QP, 0>::value, false>(iacc[i][j], af[0][i][0], af[0][i][1],
                                                               af[0][i][2], af[0][i][3], b2[j][0], b2[j][1]);
                        if constexpr (QP > 1) {
                            int tmp[4] = {0, 0, 0, 0};
                            mma16832<PlaneU8<QP, 1>::value, false>(tmp, af[1][i][0], af[1][i][1],
                                                                   af[1][i][2], af[1][i][3], b2[j][0], b2[j][1]);
#pragma unroll
                            for (int e = 0; e < 4; ++e) iacc[i][j][e] = add_shifted(iacc[i][j][e], tmp[e], 1);
                        }
                        if constexpr (QP > 2) {
                            int tmp[4] = {0, 0, 0, 0};
                            mma16832<PlaneU8<QP, 2>::value, false>(tmp, af[2][i][0], af[2][i][1],
                                                                   af[2][i][2], af[2][i][3], b2[j][0], b2[j][1]);
#pragma unroll
                            for (int e = 0; e < 4; ++e) iacc[i][j][e] = add_shifted(iacc[i][j][e], tmp[e], 2);
                        }
                    }
                if (min(g * G + G, K) <= kabs + 32) {  // group g ends in this chunk: promote
#pragma unroll
                    for (int j = 0; j < NJ; ++j)
#pragma unroll
                        for (int i = 0; i < MI; ++i)
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                facc[i][j][e] = __fmaf_rn(__int2float_rn(iacc[i][j][e]),
                                                          sn[j][e & 1], facc[i][j][e]);
                                iacc[i][j][e] = 0;
                            }
                    load_scales(g + 1);
                }
            }
        }
        if (more) store_regs(nk % STAGES);
    }
    cp_async_wait<0>();

    // epilogue: element e of (i, j): m = m0 + wm0 + 16 i + gq + 8 (e >> 1), n = ... + 2 t + (e & 1)
    if (splits > 1) {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int m = m0 + wm0 + i * 16 + gq + 8 * (e >> 1);
                    const int n = n0 + wn0 + j * 8 + 2 * t + (e & 1);
                    if (m < M && n < N) ws[((size_t)z * M + m) * N + n] = facc[i][j][e];
                }
        __threadfence();
        __syncthreads();
        const unsigned tile = by * tiles_x + bx;
        if (threadIdx.x == 0) {
            const unsigned prev = atomicAdd(counters + tile, 1u);
            s_last = (prev == (unsigned)(splits - 1));
        }
        __syncthreads();
        if (!s_last) return;
        __threadfence();
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int m = m0 + wm0 + i * 16 + gq + 8 * (e >> 1);
                    const int n = n0 + wn0 + j * 8 + 2 * t + (e & 1);
                    float acc = 0.0f;
                    if (m < M && n < N)
                        for (int zz = 0; zz < splits; ++zz)
                            acc += __ldcg(ws + ((size_t)zz * M + m) * N + n);
                    facc[i][j][e] = acc;
                }
        if (threadIdx.x == 0) counters[tile] = 0u;
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int e2 = 0; e2 < 2; ++e2) {
            const int m = m0 + wm0 + i * 16 + gq + 8 * e2;
            if (m >= M) continue;
            const float v = __ldg(vth + m);
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e1 = 0; e1 < 2; ++e1) {
                    const int n = n0 + wn0 + j * 8 + 2 * t + e1;
                    if (n < N) out[(size_t)m * N + n] = __fmaf_rn(v, facc[i][j][2 * e2 + e1], __ldg(bias + n));
                }
        }
}

// The general kernel: a block a tile. Grid (ceil(N / BN), ceil(M / BM), splits); counters
// gridDim.x * gridDim.y words.
template <int BM, int BN, int WM, int WN, int STAGES, int QP, class QT>
__device__ __forceinline__ void general_kernel(
    const QT* __restrict__ q, const signed char* __restrict__ w, const float* __restrict__ scale,
    const float* __restrict__ vth, const float* __restrict__ bias, int M, int N, int K, int G,
    int splits, float* __restrict__ ws, unsigned* __restrict__ counters,
    float* __restrict__ out) {
    general_tile<BM, BN, WM, WN, STAGES, QP>(q, w, scale, vth, bias, M, N, K, G, splits, ws,
                                             counters, out, blockIdx.x, blockIdx.y, blockIdx.z,
                                             gridDim.x);
}

// The same tiles taken by a persistent grid of any size: block b takes tiles b, b + gridDim.x,
// ... of ceil(N / BN) x ceil(M / BM) x splits, column tiles first, splits last.
template <int BM, int BN, int WM, int WN, int STAGES, int QP, class QT>
__device__ __forceinline__ void general_persistent(
    const QT* __restrict__ q, const signed char* __restrict__ w, const float* __restrict__ scale,
    const float* __restrict__ vth, const float* __restrict__ bias, int M, int N, int K, int G,
    int splits, float* __restrict__ ws, unsigned* __restrict__ counters,
    float* __restrict__ out) {
    const int tx = (N + BN - 1) / BN, ty = (M + BM - 1) / BM;
    const int total = tx * ty * splits;
    for (int t = blockIdx.x; t < total; t += gridDim.x) {
        general_tile<BM, BN, WM, WN, STAGES, QP>(q, w, scale, vth, bias, M, N, K, G, splits,
                                                 ws, counters, out, t % tx, (t / tx) % ty,
                                                 t / (tx * ty), tx);
        __syncthreads();  // the next tile reuses shared memory and s_last
    }
}

}  // namespace igemm
