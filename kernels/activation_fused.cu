// The activation path fused (SPEC steps 1-3): x -> vth, spikes, and the stats
// [qmin, qmax, o, T], with the transform decision and T made on the device. Two passes
// over x at most, nothing read back by the host, so the launches capture as one CUDA graph:
//   act_stats:  rows grid-strided over at most STATS_BLOCKS blocks, the next row's loads
//               issued before this row's block reduction (v4: the reduction's barriers no
//               longer leave the block with nothing in flight). vth exactly as
//               dynamic_spikes computes it (quantise_row's summation order: same bits); q
//               of every value goes to the workspace q8 as int8 (clamped: only used when
//               the whole tensor's q fits). The block's q range goes to two global words
//               (one atomic each); the last block to finish (a ticket counter) makes SPEC's
//               decision 2b and T (2d), writes stats, and resets the words for the next
//               launch.
//   act_encode: v = q - o and T planes. When q fits int8 and T <= 8 (every normal input:
//               T = 6), q comes from q8, 1 byte a value instead of x's 4, over the flat
//               [B*F] index (planes are [T, B*F] too), 16 values a thread-step:
//               LAYOUT 0: int8 planes [T, B, F], one 16-byte store a plane;
//               LAYOUT 1: bit-packed planes [P, B, W] uint32, W = ceil(F / 32), bit j of
//               word w is value 32w + j (padding bits 0); the flat path needs F % 32 == 0.
//               Unidirectional and twos_complement: P = T planes of the bits (plane 0 of
//               twos_complement is the sign bit, worth -2^(T-1)); bidirectional: T
//               magnitude planes and a sign plane (P = T + 1).
//               Otherwise (wide q, T > 8, or an unaligned packed row) a block per row
//               recomputes q from x and vth[b] (the same division, hence the same q).
//   act_small:  B <= SMALL_B (batch 1 and a few rows): both passes in one block and one
//               launch, no atomics, no workspace; the same per-row code, so the same bits.
// The module's three __device__ words make it one launch at a time per module (per variant).
#include "threshold.cuh"
#include "spikes.cuh"
#include "loads.cuh"  // load_once: -DEVICT_FIRST picks the cache hint

#ifndef LAYOUT
#define LAYOUT 0
#endif
#ifndef SMALL_B
#define SMALL_B 4
#endif

__device__ int g_qmin = INT_MAX;
__device__ int g_qmax = INT_MIN;
__device__ unsigned int g_ticket = 0;

#ifndef PREFETCH
#define PREFETCH 1  // pass 1 loads a block's next row before this row's reduction
#endif
#ifndef STATS_MINB
#define STATS_MINB 4  // pass 1's blocks an SM: registers capped at 64 (80 uncapped, 3 blocks)
#endif

// quantise(x, vth) with one multiply by inv = __frcp_rn(vth) instead of a division (v5).
// y = fl(x * inv) is within 1.5 * 2^-23 |x / vth| of fl(x / vth) (two roundings of 2^-24
// against one), so the two round to the same integer unless a half-integer lies within
// 2^-22 |y| of y; there (a tie included), for |y| >= 2^21 (where that margin reaches 0.5),
// and for a non-finite y (inv overflows for a tiny vth), the division is done exactly. The
// same q bit for bit: tests/test_quantise_rule.py checks the rule on 2.4M adversarial
// values in NumPy float32, and fails when the guard is dropped.
__device__ __forceinline__ int quantise_inv(float x, float vth, float inv) {
    if (vth == 0.0f) return 0;
    const float y = __fmul_rn(x, inv);
    const float r = spec_round(y);
    if (!(0.5f - fabsf(y - r) > 0x1p-21f * fabsf(y))) return quantise(x, vth);
    return __float2int_rn(r);
}

// This thread's float4 of row xr4 (n4 of them) that quantise_row keeps in registers.
__device__ __forceinline__ void load_cache(const float4* __restrict__ xr4, int n4,
                                           float4 (&c)[CACHE_VEC]) {
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) {
        const int i = threadIdx.x + j * BLOCK;
        c[j] = i < n4 ? load_once(xr4 + i) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

__device__ __forceinline__ signed char clamp8(int q) { return (signed char)max(-128, min(127, q)); }

__device__ __forceinline__ void fold4(int4 q, int& lo, int& hi) {
    lo = min(lo, min(min(q.x, q.y), min(q.z, q.w)));
    hi = max(hi, max(max(q.x, q.y), max(q.z, q.w)));
}

// Pass 1 on one aligned row (F % 4 == 0) whose cached float4 are in c: vth with
// quantise_row's exact summation order (so the same bits), q of every value folded into
// lo/hi and, when STORE, written to q8r as int8 (clamped).
template <bool STORE>
__device__ __forceinline__ float stats_row_vec(const float4 (&c)[CACHE_VEC],
                                               const float4* __restrict__ xr4, int F, float k,
                                               float* scratch, signed char* __restrict__ q8r,
                                               int& lo, int& hi) {
    const int tid = threadIdx.x, n4 = F >> 2;
    float partial = 0.0f;
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j)
        partial += fabsf(c[j].x) + fabsf(c[j].y) + fabsf(c[j].z) + fabsf(c[j].w);
    for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) {
        const float4 v = load_once(xr4 + i);
        partial += fabsf(v.x) + fabsf(v.y) + fabsf(v.z) + fabsf(v.w);
    }
    const float t = row_threshold(partial, F, k, 0.0f, INFINITY, scratch);
    const float inv = __frcp_rn(t);
    auto emit = [&](int i, float4 v) {
        const int4 q = make_int4(quantise_inv(v.x, t, inv), quantise_inv(v.y, t, inv),
                                 quantise_inv(v.z, t, inv), quantise_inv(v.w, t, inv));
        fold4(q, lo, hi);
        if (STORE)
            reinterpret_cast<char4*>(q8r)[i] = make_char4(clamp8(q.x), clamp8(q.y),
                                                          clamp8(q.z), clamp8(q.w));
    };
#pragma unroll
    for (int j = 0; j < CACHE_VEC; ++j) {
        const int i = tid + j * BLOCK;
        if (i < n4) emit(i, c[j]);
    }
    for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) emit(i, load_once(xr4 + i));
    return t;
}

// Pass 1 on a row of any F: scalar loads, quantise_row's unaligned structure.
template <bool STORE>
__device__ __forceinline__ float stats_row_any(const float* __restrict__ xr, int F, float k,
                                               float* scratch, signed char* __restrict__ q8r,
                                               int& lo, int& hi) {
    const int tid = threadIdx.x;
    constexpr int CACHE = CACHE_VEC * 4;
    float c[CACHE];
    float partial = 0.0f;
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * BLOCK;
        c[j] = i < F ? load_once(xr + i) : 0.0f;
        partial += fabsf(c[j]);
    }
    for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) partial += fabsf(load_once(xr + i));
    const float t = row_threshold(partial, F, k, 0.0f, INFINITY, scratch);
    const float inv = __frcp_rn(t);
    auto emit = [&](int i, float v) {
        const int q = quantise_inv(v, t, inv);
        lo = min(lo, q);
        hi = max(hi, q);
        if (STORE) q8r[i] = clamp8(q);
    };
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * BLOCK;
        if (i < F) emit(i, c[j]);
    }
    for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) emit(i, load_once(xr + i));
    return t;
}

// Pass 1 on row b of any width, without a prefetched cache (act_small, unaligned rows).
template <bool STORE>
__device__ __forceinline__ float stats_row(const float* __restrict__ x, int F, float k, int b,
                                           float* scratch, signed char* __restrict__ q8,
                                           int& lo, int& hi) {
    const size_t row = (size_t)b * (size_t)F;
    if ((F & 3) == 0) {
        const float4* xr4 = reinterpret_cast<const float4*>(x + row);
        float4 c[CACHE_VEC];
        load_cache(xr4, F >> 2, c);
        return stats_row_vec<STORE>(c, xr4, F, k, scratch, q8 + row, lo, hi);
    }
    return stats_row_any<STORE>(x + row, F, k, scratch, q8 + row, lo, hi);
}

// Block-wide min of lo and max of hi; the result is valid in thread 0.
__device__ __forceinline__ void block_min_max(int& lo, int& hi, int* s_lo, int* s_hi) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    lo = __reduce_min_sync(0xffffffffu, lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
    if (lane == 0) { s_lo[warp] = lo; s_hi[warp] = hi; }
    __syncthreads();
    if (warp == 0) {
        const int nw = BLOCK >> 5;
        lo = __reduce_min_sync(0xffffffffu, lane < nw ? s_lo[lane] : INT_MAX);
        hi = __reduce_max_sync(0xffffffffu, lane < nw ? s_hi[lane] : INT_MIN);
    }
}

// SPEC 2b (o) and 2d (T, from the integer bit length of amax) into out[0..3].
__device__ __forceinline__ void decide(int qmin, int qmax, int* out) {
    int o = 0;
    if (MODE == 0 && qmin < 0) o = qmin;
    else if (MODE != 0 && qmin >= 0) o = (qmax + 1) / 2;
    const long long amax = max(llabs((long long)qmin - o), llabs((long long)qmax - o));
    const int bits = 64 - __clzll(amax);
    out[0] = qmin;
    out[1] = qmax;
    out[2] = o;
    out[3] = MODE == 2 ? bits + 1 : max(1, bits);
}

extern "C" __global__ void __launch_bounds__(BLOCK, STATS_MINB)
act_stats(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          signed char* __restrict__ q8, int B, int F, float k) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32];
    __shared__ bool s_last;
    int lo = INT_MAX, hi = INT_MIN;
    // Rows grid-strided over at most STATS_BLOCKS blocks: one block per row (v1) made
    // 65536 blocks queue three same-address atomics each.
    if (PREFETCH && (F & 3) == 0) {
        const int n4 = F >> 2;
        float4 cur[CACHE_VEC];
        if (blockIdx.x < B)
            load_cache(reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * F), n4, cur);
        for (int b = blockIdx.x; b < B; b += gridDim.x) {
            // The next row's loads go out before this row's barriers (v4).
            float4 nxt[CACHE_VEC];
            const int bn = b + gridDim.x;
            if (bn < B) load_cache(reinterpret_cast<const float4*>(x + (size_t)bn * F), n4, nxt);
            const size_t row = (size_t)b * (size_t)F;
            const float t = stats_row_vec<true>(cur, reinterpret_cast<const float4*>(x + row),
                                                F, k, scratch, q8 + row, lo, hi);
            if (threadIdx.x == 0) vth[b] = t;
#pragma unroll
            for (int j = 0; j < CACHE_VEC; ++j) cur[j] = nxt[j];
        }
    } else {
        for (int b = blockIdx.x; b < B; b += gridDim.x) {
            const float t = stats_row<true>(x, F, k, b, scratch, q8, lo, hi);
            if (threadIdx.x == 0) vth[b] = t;
        }
    }
    block_min_max(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        atomicMin(&g_qmin, lo);
        atomicMax(&g_qmax, hi);
        __threadfence();  // the block's atomics land before its ticket
        s_last = atomicAdd(&g_ticket, 1u) == gridDim.x - 1u;
    }
    __syncthreads();
    if (s_last && threadIdx.x == 0) {
        __threadfence();
        decide(atomicAdd(&g_qmin, 0), atomicAdd(&g_qmax, 0), stats);
        g_qmin = INT_MAX;  // ready for the next launch
        g_qmax = INT_MIN;
        g_ticket = 0u;
    }
}

// Whether pass 2 can take q from q8: every q fits int8 and T <= 8, so that v = q - o and
// each plane of four values fit one byte each (see plane_bits).
__device__ __forceinline__ bool q8_usable(int qmin, int qmax, int T) {
    return qmin >= -128 && qmax <= 127 && T <= 8;
}

// Four values' v (each in [-255, 255], T <= 8) as bytes: mag holds |v| (bidirectional) or
// v's low 8 bits, neg is 0xFF in the bytes of negative values (bidirectional only).
__device__ __forceinline__ void byte_planes(int4 v, unsigned& mag, unsigned& neg) {
#if MODE == 1
    mag = (unsigned)abs(v.x) | (unsigned)abs(v.y) << 8 | (unsigned)abs(v.z) << 16 |
          (unsigned)abs(v.w) << 24;
    neg = (v.x < 0 ? 0xFFu : 0u) | (v.y < 0 ? 0xFF00u : 0u) | (v.z < 0 ? 0xFF0000u : 0u) |
          (v.w < 0 ? 0xFF000000u : 0u);
#else
    mag = (unsigned)(v.x & 0xFF) | (unsigned)(v.y & 0xFF) << 8 | (unsigned)(v.z & 0xFF) << 16 |
          (unsigned)(v.w & 0xFF) << 24;
    neg = 0u;
#endif
}

// Bit p = T-1-t of each byte of mag, as 0x00/0x01 bytes.
__device__ __forceinline__ unsigned plane_bits(unsigned mag, int t, int T) {
    return (mag >> (T - 1 - t)) & 0x01010101u;
}

// v = q - o of a word of four int8 q.
__device__ __forceinline__ int4 minus_o(unsigned w, int o) {
    return make_int4((int)(signed char)(w & 0xFFu) - o, (int)(signed char)((w >> 8) & 0xFFu) - o,
                     (int)(signed char)((w >> 16) & 0xFFu) - o, (int)(signed char)(w >> 24) - o);
}

#ifndef ENC_UNITS
#define ENC_UNITS 2  // 16-byte units of q8 a thread loads before storing: 32 bytes in flight
#endif

// Plane t's byte of four values from byte_planes: 0/1, and -1 (0xFF) for a negative
// bidirectional value and in twos_complement's sign plane.
__device__ __forceinline__ unsigned plane_word(unsigned mag, unsigned neg, int t, int T) {
    const unsigned bits = plane_bits(mag, t, T);
#if MODE == 1
    return ((bits * 0xFFu) & neg) | (bits & ~neg);
#elif MODE == 2
    return t == 0 ? bits * 0xFFu : bits;
#else
    (void)neg;
    return bits;
#endif
}

#if LAYOUT == 0
typedef signed char out_t;

__device__ __forceinline__ void put_planes(signed char* __restrict__ base, size_t plane,
                                           int i, int4 v, int T) {
    if (T <= 8) {
        // Every value fits a byte (its low T bits for twos_complement): one word holds the
        // four, and plane p of all four is (word >> p) & 0x01010101.
        unsigned mag, neg;
        byte_planes(v, mag, neg);
        for (int t = 0; t < T; ++t)
            reinterpret_cast<unsigned*>(base + (size_t)t * plane)[i] = plane_word(mag, neg, t, T);
        return;
    }
    for (int t = 0; t < T; ++t) {
        const char4 s = make_char4(spike_plane(v.x, t, T), spike_plane(v.y, t, T),
                                   spike_plane(v.z, t, T), spike_plane(v.w, t, T));
        reinterpret_cast<char4*>(base + (size_t)t * plane)[i] = s;
    }
}

// Pass 2 from q8 over the flat index (q8_usable): planes are [T, n] with n = B * F.
// Where n % 16 == 0, 16 values a unit: one 16-byte load and one 16-byte store a plane.
__device__ __forceinline__ void encode_flat(const signed char* __restrict__ q8, int o, int T,
                                            size_t n, signed char* __restrict__ spikes) {
    const size_t threads = (size_t)gridDim.x * BLOCK;
    const size_t gtid = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    if ((n & 15) != 0) {
        for (size_t e = gtid; e < n; e += threads) {
            const int v = (int)q8[e] - o;
            for (int t = 0; t < T; ++t) spikes[(size_t)t * n + e] = spike_plane(v, t, T);
        }
        return;
    }
    const size_t units = n >> 4;
    const uint4* src = reinterpret_cast<const uint4*>(q8);
    for (size_t u0 = gtid; u0 < units; u0 += threads * ENC_UNITS) {
        uint4 w[ENC_UNITS];
#pragma unroll
        for (int j = 0; j < ENC_UNITS; ++j) {
            const size_t u = u0 + j * threads;
            if (u < units) w[j] = __ldg(src + u);
        }
#pragma unroll
        for (int j = 0; j < ENC_UNITS; ++j) {
            const size_t u = u0 + j * threads;
            if (u >= units) break;
            unsigned m0, m1, m2, m3, g0, g1, g2, g3;
            byte_planes(minus_o(w[j].x, o), m0, g0);
            byte_planes(minus_o(w[j].y, o), m1, g1);
            byte_planes(minus_o(w[j].z, o), m2, g2);
            byte_planes(minus_o(w[j].w, o), m3, g3);
            for (int t = 0; t < T; ++t)
                reinterpret_cast<uint4*>(spikes + (size_t)t * n)[u] =
                    make_uint4(plane_word(m0, g0, t, T), plane_word(m1, g1, t, T),
                               plane_word(m2, g2, t, T), plane_word(m3, g3, t, T));
        }
    }
}

__device__ __forceinline__ bool encode_from_q8(const signed char* __restrict__ q8, int qmin,
                                               int qmax, int o, int T, int B, int F,
                                               signed char* __restrict__ spikes) {
    if (!q8_usable(qmin, qmax, T)) return false;
    encode_flat(q8, o, T, (size_t)B * (size_t)F, spikes);
    return true;
}

// Row b's planes, from x, its vth t and the decision (o, T).
__device__ __forceinline__ void encode_row(const float* __restrict__ x, float t, int o, int T,
                                           int B, int F, int b, signed char* __restrict__ spikes) {
    const size_t row = (size_t)b * (size_t)F, plane = (size_t)B * (size_t)F;
    const int tid = threadIdx.x;
    if ((F & 3) == 0) {
        // Every load of the row issued before any store (CACHE_VEC float4 in flight).
        const float4* xr = reinterpret_cast<const float4*>(x + row);
        signed char* base = spikes + row;
        const int n4 = F >> 2;
        for (int i0 = 0; i0 < n4; i0 += CACHE_VEC * BLOCK) {
            float4 c[CACHE_VEC];
#pragma unroll
            for (int j = 0; j < CACHE_VEC; ++j) {
                const int i = i0 + tid + j * BLOCK;
                if (i < n4) c[j] = __ldg(xr + i);
            }
#pragma unroll
            for (int j = 0; j < CACHE_VEC; ++j) {
                const int i = i0 + tid + j * BLOCK;
                if (i < n4)
                    put_planes(base, plane, i,
                               make_int4(quantise(c[j].x, t) - o, quantise(c[j].y, t) - o,
                                         quantise(c[j].z, t) - o, quantise(c[j].w, t) - o), T);
            }
        }
    } else {
        for (int f = tid; f < F; f += BLOCK) {
            const int v = quantise(__ldg(x + row + f), t) - o;
            for (int p = 0; p < T; ++p) spikes[(size_t)p * plane + row + f] = spike_plane(v, p, T);
        }
    }
}
#else
typedef unsigned out_t;
#ifndef PACK_UNROLL
#define PACK_UNROLL 4  // words a warp loads before packing: 512 bytes in flight per warp
#endif

// Bit `t` of plane t's word for value v (see the layout above).
__device__ __forceinline__ bool packed_bit(int v, int t, int T) {
#if MODE == 1
    return t == T ? v < 0 : ((abs(v) >> (T - 1 - t)) & 1);
#else
    return ((unsigned)v >> (T - 1 - t)) & 1u;
#endif
}

__device__ __forceinline__ void encode_row(const float* __restrict__ x, float t, int o, int T,
                                           int B, int F, int b, unsigned* __restrict__ packed) {
    const int W = (F + 31) >> 5;
    const size_t row = (size_t)b * (size_t)F, plane = (size_t)B * (size_t)W;
    const int P = MODE == 1 ? T + 1 : T;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    constexpr int NW = BLOCK >> 5;
    for (int w0 = warp * PACK_UNROLL; w0 < W; w0 += NW * PACK_UNROLL) {
        float c[PACK_UNROLL];
#pragma unroll
        for (int u = 0; u < PACK_UNROLL; ++u) {
            const int f = (w0 + u) * 32 + lane;
            c[u] = f < F ? __ldg(x + row + f) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < PACK_UNROLL; ++u) {
            const int w = w0 + u;
            if (w >= W) break;  // warp-uniform
            const int f = w * 32 + lane;
            const int v = f < F ? quantise(c[u], t) - o : 0;  // padding bits are 0
            unsigned mine = 0;
            for (int p = 0; p < P; ++p) {
                const unsigned word = __ballot_sync(0xffffffffu, packed_bit(v, p, T));
                if (lane == p) mine = word;
            }
            if (lane < P) packed[(size_t)lane * plane + (size_t)b * W + w] = mine;
        }
    }
}

// 0x00/0x01 bytes b0..b3 of w as the four bits b0 | b1 << 1 | b2 << 2 | b3 << 3: the
// multiply puts byte i's bit at 21 + i, and no two partial products share a bit.
__device__ __forceinline__ unsigned gather4(unsigned w) { return ((w * 0x00204081u) >> 21) & 0xFu; }

// Pass 2 from q8 over the flat word index (q8_usable, F % 32 == 0: rows need no padding):
// a thread-step is ENC_UNITS / 2 words of 32 values, two 16-byte loads each.
__device__ __forceinline__ bool encode_from_q8(const signed char* __restrict__ q8, int qmin,
                                               int qmax, int o, int T, int B, int F,
                                               unsigned* __restrict__ packed) {
    if (!q8_usable(qmin, qmax, T) || (F & 31) != 0) return false;
    constexpr int U = ENC_UNITS / 2 > 0 ? ENC_UNITS / 2 : 1;
    const size_t words = (size_t)B * (size_t)(F >> 5);
    const size_t threads = (size_t)gridDim.x * BLOCK;
    const size_t gtid = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    const int P = MODE == 1 ? T + 1 : T;
    const uint4* src = reinterpret_cast<const uint4*>(q8);
    for (size_t w0 = gtid; w0 < words; w0 += threads * U) {
        uint4 a[U], c[U];
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const size_t wi = w0 + j * threads;
            if (wi < words) { a[j] = __ldg(src + 2 * wi); c[j] = __ldg(src + 2 * wi + 1); }
        }
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const size_t wi = w0 + j * threads;
            if (wi >= words) break;
            const unsigned q[8] = {a[j].x, a[j].y, a[j].z, a[j].w, c[j].x, c[j].y, c[j].z, c[j].w};
            unsigned m[8], g[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) byte_planes(minus_o(q[i], o), m[i], g[i]);
            for (int p = 0; p < P; ++p) {
                unsigned word = 0;
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    // The sign plane (bidirectional, p == T) takes the sign bytes.
                    const unsigned b = MODE == 1 && p == T ? g[i] & 0x01010101u
                                                           : plane_bits(m[i], p, T);
                    word |= gather4(b) << (4 * i);
                }
                packed[(size_t)p * words + wi] = word;
            }
        }
    }
    return true;
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
act_encode(const float* __restrict__ x, const float* __restrict__ vth,
           const int* __restrict__ stats, const signed char* __restrict__ q8, int B, int F,
           out_t* __restrict__ out) {
    const int o = __ldg(stats + 2), T = __ldg(stats + 3);
    if (encode_from_q8(q8, __ldg(stats), __ldg(stats + 1), o, T, B, F, out)) return;
    // q wider than int8 (or T > 8, or padded packed rows): a block per row, from x.
    for (int b = blockIdx.x; b < B; b += gridDim.x) encode_row(x, __ldg(vth + b), o, T, B, F, b, out);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
act_small(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          int B, int F, float k, out_t* __restrict__ out) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32], s_stats[4];
    __shared__ float s_vth[SMALL_B];
    int lo = INT_MAX, hi = INT_MIN;
    for (int b = 0; b < B; ++b) {
        const float t = stats_row<false>(x, F, k, b, scratch, nullptr, lo, hi);
        if (threadIdx.x == 0) { vth[b] = t; s_vth[b] = t; }
    }
    block_min_max(lo, hi, s_lo, s_hi);
    if (threadIdx.x == 0) {
        decide(lo, hi, s_stats);
        for (int i = 0; i < 4; ++i) stats[i] = s_stats[i];
    }
    __syncthreads();
    const int o = s_stats[2], T = s_stats[3];
    for (int b = 0; b < B; ++b) encode_row(x, s_vth[b], o, T, B, F, b, out);
}
