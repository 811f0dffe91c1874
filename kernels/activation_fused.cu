// The activation path fused (SPEC steps 1-3): x -> vth, spikes, and the stats
// [qmin, qmax, o, T], with the transform decision and T made on the device. Two passes
// over x, no q in memory, nothing read back by the host, so the pair is capturable as one
// CUDA graph:
//   act_stats:  a block per row, up to STATS_BLOCKS blocks (rows grid-strided). vth and q exactly as dynamic_spikes computes them
//               (common/threshold.cuh: same reduction order, same bits); q is only
//               reduced to the block's min and max, which go to two global words with one
//               atomic each. The last block to finish (a ticket counter) makes SPEC's
//               decision 2b and T (2d), writes stats, and resets the words for the next
//               launch: no init kernel, one launch per pass.
//   act_encode: one block per row. q recomputed from x and vth[b] (the same division,
//               hence the same q), v = q - o, and T planes written:
//               LAYOUT 0: int8 planes [T, B, F], 4 bytes a plane per 4 values;
//               LAYOUT 1: bit-packed planes [P, B, W] uint32, W = ceil(F / 32), bit j of
//               word w is value 32w + j (padding bits 0). Unidirectional and
//               twos_complement: P = T planes of the bits (plane 0 of twos_complement is
//               the sign bit, worth -2^(T-1)); bidirectional: T magnitude planes and a
//               sign plane (P = T + 1).
// The module's three __device__ words make it one launch at a time per module (per variant).
#include "threshold.cuh"
#include "spikes.cuh"

#ifndef LAYOUT
#define LAYOUT 0
#endif

__device__ int g_qmin = INT_MAX;
__device__ int g_qmax = INT_MIN;
__device__ unsigned int g_ticket = 0;

extern "C" __global__ void __launch_bounds__(BLOCK)
act_stats(const float* __restrict__ x, float* __restrict__ vth, int* __restrict__ stats,
          int B, int F, float k) {
    __shared__ float scratch[32];
    __shared__ int s_lo[32], s_hi[32];
    __shared__ bool s_last;
    int lo = INT_MAX, hi = INT_MIN;
    // Rows grid-strided over at most STATS_BLOCKS blocks: one block per row (v1) made
    // 65536 blocks queue three same-address atomics each, and pass 1 ran at 60 % of DRAM
    // peak (ncu, batch 65536).
    for (int b = blockIdx.x; b < B; b += gridDim.x) {
        const float t = quantise_row(
            x + (size_t)b * (size_t)F, F, k, 0.0f, INFINITY, scratch,
            [&](int, int4 q) {
                lo = min(lo, min(min(q.x, q.y), min(q.z, q.w)));
                hi = max(hi, max(max(q.x, q.y), max(q.z, q.w)));
            },
            [&](int, int q) { lo = min(lo, q); hi = max(hi, q); });
        if (threadIdx.x == 0) vth[b] = t;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    lo = __reduce_min_sync(0xffffffffu, lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
    if (lane == 0) { s_lo[warp] = lo; s_hi[warp] = hi; }
    __syncthreads();
    if (warp == 0) {
        const int nw = BLOCK >> 5;
        lo = __reduce_min_sync(0xffffffffu, lane < nw ? s_lo[lane] : INT_MAX);
        hi = __reduce_max_sync(0xffffffffu, lane < nw ? s_hi[lane] : INT_MIN);
        if (lane == 0) {
            atomicMin(&g_qmin, lo);
            atomicMax(&g_qmax, hi);
            __threadfence();  // the block's atomics land before its ticket
            s_last = atomicAdd(&g_ticket, 1u) == gridDim.x - 1u;
        }
    }
    __syncthreads();
    if (s_last && threadIdx.x == 0) {
        __threadfence();
        const int qmin = atomicAdd(&g_qmin, 0), qmax = atomicAdd(&g_qmax, 0);
        int o = 0;  // SPEC 2b
        if (MODE == 0 && qmin < 0) o = qmin;
        else if (MODE != 0 && qmin >= 0) o = (qmax + 1) / 2;
        const long long amax = max(llabs((long long)qmin - o), llabs((long long)qmax - o));
        const int bits = 64 - __clzll(amax);  // SPEC 2d: integer bit length
        stats[0] = qmin;
        stats[1] = qmax;
        stats[2] = o;
        stats[3] = MODE == 2 ? bits + 1 : max(1, bits);
        g_qmin = INT_MAX;  // ready for the next launch
        g_qmax = INT_MIN;
        g_ticket = 0u;
    }
}

#if LAYOUT == 0
__device__ __forceinline__ void put_planes(signed char* __restrict__ base, size_t plane,
                                           int i, int4 v, int T) {
    for (int t = 0; t < T; ++t) {
        const char4 s = make_char4(spike_plane(v.x, t, T), spike_plane(v.y, t, T),
                                   spike_plane(v.z, t, T), spike_plane(v.w, t, T));
        reinterpret_cast<char4*>(base + (size_t)t * plane)[i] = s;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
act_encode(const float* __restrict__ x, const float* __restrict__ vth,
           const int* __restrict__ stats, int B, int F, signed char* __restrict__ spikes) {
    const int b = blockIdx.x;
    const size_t row = (size_t)b * (size_t)F, plane = (size_t)B * (size_t)F;
    const float t = __ldg(vth + b);
    const int o = __ldg(stats + 2), T = __ldg(stats + 3);
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

extern "C" __global__ void __launch_bounds__(BLOCK)
act_encode(const float* __restrict__ x, const float* __restrict__ vth,
           const int* __restrict__ stats, int B, int F, unsigned* __restrict__ packed) {
    const int b = blockIdx.x;
    const int W = (F + 31) >> 5;
    const size_t row = (size_t)b * (size_t)F, plane = (size_t)B * (size_t)W;
    const float t = __ldg(vth + b);
    const int o = __ldg(stats + 2), T = __ldg(stats + 3);
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
