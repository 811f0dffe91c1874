// The activation path fused (SPEC steps 1-3): x -> vth, spikes, and the stats
// [qmin, qmax, o, T], with the transform decision and T made on the device. Two passes
// over x, no q in memory, nothing read back by the host, so the launches capture as one
// CUDA graph:
//   act_stats:  a block per row, up to STATS_BLOCKS blocks (rows grid-strided). vth exactly
//               as dynamic_spikes computes it (quantise_row's summation order: same bits).
//               No q is formed: round(x / vth) is monotonic in x, so each thread's
//               min/max of q is quantise() of its min/max of x (two divisions a row, not
//               one per value). The block's q range goes to two global words (one atomic
//               each); the last block to finish (a ticket counter) makes SPEC's decision
//               2b and T (2d), writes stats, and resets the words for the next launch.
//   act_encode: one block per row. q recomputed from x and vth[b] (the same division,
//               hence the same q), v = q - o, and T planes written:
//               LAYOUT 0: int8 planes [T, B, F], 4 bytes a plane per 4 values (for T <= 8
//               the 4 values' bytes sit in one word and each plane is a shift and a mask);
//               LAYOUT 1: bit-packed planes [P, B, W] uint32, W = ceil(F / 32), bit j of
//               word w is value 32w + j (padding bits 0). Unidirectional and
//               twos_complement: P = T planes of the bits (plane 0 of twos_complement is
//               the sign bit, worth -2^(T-1)); bidirectional: T magnitude planes and a
//               sign plane (P = T + 1).
//   act_small:  B <= SMALL_B (batch 1 and a few rows): both passes in one block and one
//               launch, no atomics; the same per-row code, so the same bits.
// The module's three __device__ words make it one launch at a time per module (per variant).
#include "threshold.cuh"
#include "spikes.cuh"

#ifndef LAYOUT
#define LAYOUT 0
#endif
#ifndef SMALL_B
#define SMALL_B 4
#endif

__device__ int g_qmin = INT_MAX;
__device__ int g_qmax = INT_MIN;
__device__ unsigned int g_ticket = 0;

// vth of row xr with quantise_row's exact summation order (so the same bits), and the
// min and max of the values this thread loaded (+inf, -inf when it loaded none).
__device__ __forceinline__ float row_vth_minmax(const float* __restrict__ xr, int F, float k,
                                                float* scratch, float& xmin, float& xmax) {
    const int tid = threadIdx.x;
    float partial = 0.0f;
    xmin = INFINITY;
    xmax = -INFINITY;
    if ((F & 3) == 0) {
        const float4* xr4 = reinterpret_cast<const float4*>(xr);
        const int n4 = F >> 2;
#pragma unroll
        for (int j = 0; j < CACHE_VEC; ++j) {
            const int i = tid + j * BLOCK;
            const float4 c = i < n4 ? __ldg(xr4 + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            partial += fabsf(c.x) + fabsf(c.y) + fabsf(c.z) + fabsf(c.w);
            if (i < n4) {
                xmin = fminf(xmin, fminf(fminf(c.x, c.y), fminf(c.z, c.w)));
                xmax = fmaxf(xmax, fmaxf(fmaxf(c.x, c.y), fmaxf(c.z, c.w)));
            }
        }
        for (int i = tid + CACHE_VEC * BLOCK; i < n4; i += BLOCK) {
            const float4 c = __ldg(xr4 + i);
            partial += fabsf(c.x) + fabsf(c.y) + fabsf(c.z) + fabsf(c.w);
            xmin = fminf(xmin, fminf(fminf(c.x, c.y), fminf(c.z, c.w)));
            xmax = fmaxf(xmax, fmaxf(fmaxf(c.x, c.y), fmaxf(c.z, c.w)));
        }
    } else {
        constexpr int CACHE = CACHE_VEC * 4;
#pragma unroll
        for (int j = 0; j < CACHE; ++j) {
            const int i = tid + j * BLOCK;
            const float c = i < F ? __ldg(xr + i) : 0.0f;
            partial += fabsf(c);
            if (i < F) { xmin = fminf(xmin, c); xmax = fmaxf(xmax, c); }
        }
        for (int i = tid + CACHE * BLOCK; i < F; i += BLOCK) {
            const float c = __ldg(xr + i);
            partial += fabsf(c);
            xmin = fminf(xmin, c);
            xmax = fmaxf(xmax, c);
        }
    }
    return row_threshold(partial, F, k, 0.0f, INFINITY, scratch);
}

// Fold a row's q range into lo/hi: q = quantise(x, t) is monotonic in x.
__device__ __forceinline__ void fold_row(float xmin, float xmax, float t, int& lo, int& hi) {
    if (xmin <= xmax) {  // this thread loaded at least one value of the row
        lo = min(lo, quantise(xmin, t));
        hi = max(hi, quantise(xmax, t));
    }
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

extern "C" __global__ void __launch_bounds__(BLOCK)
act_stats(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          int B, int F, float k) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32];
    __shared__ bool s_last;
    int lo = INT_MAX, hi = INT_MIN;
    // Rows grid-strided over at most STATS_BLOCKS blocks: one block per row (v1) made
    // 65536 blocks queue three same-address atomics each.
    for (int b = blockIdx.x; b < B; b += gridDim.x) {
        float xmin, xmax;
        const float t = row_vth_minmax(x + (size_t)b * (size_t)F, F, k, scratch, xmin, xmax);
        fold_row(xmin, xmax, t, lo, hi);
        if (threadIdx.x == 0) vth[b] = t;
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

#if LAYOUT == 0
typedef signed char out_t;

__device__ __forceinline__ void put_planes(signed char* __restrict__ base, size_t plane,
                                           int i, int4 v, int T) {
    if (T <= 8) {
        // Every value fits a byte (its low T bits for twos_complement): one word holds the
        // four, and plane p of all four is (word >> p) & 0x01010101.
#if MODE == 1
        const unsigned mag = (unsigned)abs(v.x) | (unsigned)abs(v.y) << 8 |
                             (unsigned)abs(v.z) << 16 | (unsigned)abs(v.w) << 24;
        const unsigned neg = (v.x < 0 ? 0xFFu : 0u) | (v.y < 0 ? 0xFF00u : 0u) |
                             (v.z < 0 ? 0xFF0000u : 0u) | (v.w < 0 ? 0xFF000000u : 0u);
#else
        const unsigned mag = (unsigned)(v.x & 0xFF) | (unsigned)(v.y & 0xFF) << 8 |
                             (unsigned)(v.z & 0xFF) << 16 | (unsigned)(v.w & 0xFF) << 24;
#endif
        for (int t = 0; t < T; ++t) {
            const unsigned bits = (mag >> (T - 1 - t)) & 0x01010101u;
#if MODE == 1
            const unsigned s = ((bits * 0xFFu) & neg) | (bits & ~neg);  // -1 is 0xFF
#elif MODE == 2
            const unsigned s = t == 0 ? bits * 0xFFu : bits;  // the sign plane carries -1
#else
            const unsigned s = bits;
#endif
            reinterpret_cast<unsigned*>(base + (size_t)t * plane)[i] = s;
        }
        return;
    }
    for (int t = 0; t < T; ++t) {
        const char4 s = make_char4(spike_plane(v.x, t, T), spike_plane(v.y, t, T),
                                   spike_plane(v.z, t, T), spike_plane(v.w, t, T));
        reinterpret_cast<char4*>(base + (size_t)t * plane)[i] = s;
    }
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
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
act_encode(const float* __restrict__ x, const float* __restrict__ vth,
           const int* __restrict__ stats, int B, int F, out_t* __restrict__ out) {
    const int b = blockIdx.x;
    encode_row(x, __ldg(vth + b), __ldg(stats + 2), __ldg(stats + 3), B, F, b, out);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
act_small(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          int B, int F, float k, out_t* __restrict__ out) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32], s_stats[4];
    __shared__ float s_vth[SMALL_B];
    int lo = INT_MAX, hi = INT_MIN;
    for (int b = 0; b < B; ++b) {
        float xmin, xmax;
        const float t = row_vth_minmax(x + (size_t)b * (size_t)F, F, k, scratch, xmin, xmax);
        fold_row(xmin, xmax, t, lo, hi);
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
