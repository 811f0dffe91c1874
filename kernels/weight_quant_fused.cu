// Weight path A + B in one pass over w: scale[o, g] = max|w| over group g / 127 and
// w_q[o, f] = round(w / scale) as int8 in [-127, 127] (0 where the scale is 0).
// One warp per group, whatever the matrix's shape (tall or wide: the work is the list of
// O * ceil(F / G) groups). Each warp loads its group into registers (16-byte loads), takes
// the warp max, and quantises from the registers: w is read from DRAM once. Where
// F % G == 0 a group's offset is its index times G (no 64-bit division per group).
//   wq_vec<V>: F % 4 == 0 and G % 4 == 0 and G <= 128 * V (V float4 per lane);
//              UNROLL groups at a time per warp, all loads issued before the first
//              reduction (UNROLL * V * 512 bytes in flight a warp), and the warp's next
//              UNROLL groups loaded before these are reduced and stored.
//   wq_any:    any F and G: scalar loads, the group read twice (the second time from L1).
#include "loads.cuh"       // load_once: -DEVICT_FIRST picks the cache hint
#include "quantise_w.cuh"  // quantise_w(w, s, inv): one multiply per value, same result

#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef ITERS
#define ITERS 1  // steps a warp takes (launch's grid is that much smaller); > 1: prefetch
#endif

__device__ __forceinline__ float amax4(float4 v) {
    return fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
}

template <int V, bool FULL>
struct Groups {  // UNROLL groups of one warp, in registers
    float4 r[UNROLL][V];
    long long base[UNROLL];
    int len[UNROLL];  // 0 past the last group

    __device__ __forceinline__ void load(const float* __restrict__ w, int F, int G, int ng,
                                         long long groups, long long g0, int lane) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long gid = g0 + u;
            if (FULL) {  // F % G == 0: groups are back to back, no division
                base[u] = gid * G;
                len[u] = gid < groups ? G : 0;
            } else {
                const long long o = gid / ng;
                const int g = (int)(gid - o * ng);
                base[u] = o * F + (long long)g * G;
                len[u] = gid < groups ? min(G, F - g * G) : 0;  // a multiple of 4
            }
#pragma unroll
            for (int j = 0; j < V; ++j) {
                const int i = 4 * (lane + 32 * j);
                r[u][j] = i < len[u] ? load_once(reinterpret_cast<const float4*>(w + base[u] + i))
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
            }
        }
    }

    __device__ __forceinline__ void store(long long g0, int lane, float* __restrict__ scale,
                                          signed char* __restrict__ w_q) const {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (len[u] == 0) break;  // warp-uniform: past the last group
            float m = 0.0f;
#pragma unroll
            for (int j = 0; j < V; ++j) m = fmaxf(m, amax4(r[u][j]));
#pragma unroll
            for (int s = 16; s > 0; s >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
            const float sc = __fdiv_rn(m, 127.0f), inv = __frcp_rn(sc);
            if (lane == 0) scale[g0 + u] = sc;
#pragma unroll
            for (int j = 0; j < V; ++j) {
                const int i = 4 * (lane + 32 * j);
                if (i < len[u])
                    *reinterpret_cast<char4*>(w_q + base[u] + i) =
                        make_char4(quantise_w(r[u][j].x, sc, inv), quantise_w(r[u][j].y, sc, inv),
                                   quantise_w(r[u][j].z, sc, inv), quantise_w(r[u][j].w, sc, inv));
            }
        }
    }
};

// Warps stride over the groups UNROLL at a time; the next UNROLL groups' loads are issued
// before this UNROLL's reductions and stores (a warp always has loads in flight when the
// grid is smaller than the groups: launch's ITERS).
template <int V, bool FULL>
__device__ __forceinline__ void wq_vec(const float* __restrict__ w, int F, int G, long long groups,
                                       float* __restrict__ scale, signed char* __restrict__ w_q) {
    const int lane = threadIdx.x & 31;
    const long long stride = (long long)gridDim.x * (blockDim.x >> 5) * UNROLL;
    const int ng = (F + G - 1) / G;
    long long g0 = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * UNROLL;
    if (ITERS == 1) {  // one step a warp (the grid covers the groups): no prefetch registers
        for (; g0 < groups; g0 += stride) {
            Groups<V, FULL> cur;
            cur.load(w, F, G, ng, groups, g0, lane);
            cur.store(g0, lane, scale, w_q);
        }
        return;
    }
    Groups<V, FULL> cur;
    cur.load(w, F, G, ng, groups, g0, lane);
    for (; g0 < groups; g0 += stride) {
        Groups<V, FULL> nxt;
        nxt.load(w, F, G, ng, groups, g0 + stride, lane);
        cur.store(g0, lane, scale, w_q);
        cur = nxt;
    }
}

extern "C" __global__ void wq_vec1(const float* __restrict__ w, int F, int G, long long groups,
                                   float* __restrict__ scale, signed char* __restrict__ w_q) {
    if (F % G == 0) wq_vec<1, true>(w, F, G, groups, scale, w_q);
    else wq_vec<1, false>(w, F, G, groups, scale, w_q);
}

extern "C" __global__ void wq_vec4(const float* __restrict__ w, int F, int G, long long groups,
                                   float* __restrict__ scale, signed char* __restrict__ w_q) {
    if (F % G == 0) wq_vec<4, true>(w, F, G, groups, scale, w_q);
    else wq_vec<4, false>(w, F, G, groups, scale, w_q);
}

extern "C" __global__ void wq_any(const float* __restrict__ w, int F, int G, long long groups,
                                  float* __restrict__ scale, signed char* __restrict__ w_q) {
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const int ng = (F + G - 1) / G;
    for (long long gid = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
         gid < groups; gid += warps) {
        const long long o = gid / ng;
        const int g = (int)(gid - o * ng);
        const float* row = w + o * F;
        const int end = min((g + 1) * G, F);
        float m = 0.0f;
        for (int f = g * G + lane; f < end; f += 32) m = fmaxf(m, fabsf(__ldg(row + f)));
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
        const float sc = __fdiv_rn(m, 127.0f), inv = __frcp_rn(sc);
        if (lane == 0) scale[gid] = sc;
        for (int f = g * G + lane; f < end; f += 32)
            w_q[o * F + f] = quantise_w(__ldg(row + f), sc, inv);
    }
}
