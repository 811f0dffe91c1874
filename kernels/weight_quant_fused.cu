// Weight path A + B in one pass over w: scale[o, g] = max|w| over group g / 127 and
// w_q[o, f] = round(w / scale) as int8 in [-127, 127] (0 where the scale is 0).
// The work is the list of O * ceil(F / G) groups, whatever the matrix's shape (tall or wide).
// A team of lanes holds a group in registers (common/wgroups.cuh: 16-byte loads, w read from
// DRAM once), takes its max, and quantises from the registers with one multiply by the
// reciprocal of the scale and no float-to-int conversion (quantise_w4_fast: the division
// only where the product could round apart from the quotient).
//   wq_vec1: F % 4 == 0, G % 4 == 0, G <= 128: LANES lanes a group (32 / LANES groups a
//            warp), 128 / (4 LANES) float4 a lane.
//   wq_vec4: F % 4 == 0, G % 4 == 0, G <= 512: a warp a group, 4 float4 a lane.
//   wq_any:  any F and G: a warp a group, scalar loads, the group read twice (the second
//            time from L1), the division per value.
// The grid (the plugin's, from WARP_STEPS): blocks enough that each warp takes one step and
// exits, the next blocks taking the SMs as blocks retire, nothing loaded ahead (PREFETCH 0);
// on an H100 3.1-4.4 % faster than one persistent wave whose warps loop over steps with the
// next step in flight (WARP_STEPS 0, PREFETCH 1, BPS 8: kernels/NOTES.md). wq_vec1's step is
// two groups on 16 lanes each (8 values a lane, 1 KB), BPS (16) blocks an SM at once, the
// 4:1 mix kernel's 64 warps (held by __launch_bounds__: 32 registers, no spills); on an H100
// 2.5 % faster at 3584 x 3584 than 8 lanes a group at BPS 12. wq_vec4 keeps VEC4_BPS (12):
// at 32 registers its 4 float4 a lane would spill 56 bytes (40 registers; ptxas spills 16).
#include "wgroups.cuh"
#include "quantise_w.cuh"

#ifndef LANES
#define LANES 16  // lanes a group in wq_vec1: 8 values a lane, a warp's step 2 groups (1 KB)
#endif
#ifndef BPS
#define BPS 16   // wq_vec1's blocks an SM the registers must allow (32 registers at BLOCK 128)
#endif
#ifndef VEC4_BPS
#define VEC4_BPS 12  // wq_vec4's (40 registers at BLOCK 128)
#endif
#ifndef WARP_STEPS
#define WARP_STEPS 1  // the plugin's grid only: n > 0 blocks enough for n steps a warp; 0 one wave
#endif

// Scales and w_q of the groups, a team of L lanes a group with V float4 a lane.
template <int V, int L, bool FULL>
__device__ __forceinline__ void wq_groups(const float* __restrict__ w, int F, int G,
                                          long long groups, float* __restrict__ scale,
                                          signed char* __restrict__ w_q) {
    for_each_group<V, L, FULL>(w, F, G, groups, [=](const WGroup<V, L>& grp, int m) {
        const float sc = __fdiv_rn(grp.amax(), 127.0f);
        if (grp.len == 0) return;  // past the last group (after the team's shuffles)
        if (m == 0) scale[grp.gid] = sc;
        const float inv = __frcp_rn(sc);
        unsigned q[V];
        bool ok = true;
#pragma unroll
        for (int j = 0; j < V; ++j) q[j] = quantise_w4_fast<true>(grp.r[j], inv, ok);
        if (!ok) {  // rare: a value within 1e-4 of a half, or a zero scale
#pragma unroll
            for (int j = 0; j < V; ++j) q[j] = quantise_w4(grp.r[j], sc);
        }
        unsigned* out = reinterpret_cast<unsigned*>(w_q + grp.base) + m;
#pragma unroll
        for (int j = 0; j < V; ++j)
            if (grp.holds(m, j)) out[L * j] = q[j];
    });
}

template <int V, int L>
__device__ __forceinline__ void wq_vec(const float* __restrict__ w, int F, int G,
                                       long long groups, float* __restrict__ scale,
                                       signed char* __restrict__ w_q) {
    if (F % G == 0) wq_groups<V, L, true>(w, F, G, groups, scale, w_q);
    else wq_groups<V, L, false>(w, F, G, groups, scale, w_q);
}

extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
wq_vec1(const float* __restrict__ w, int F, int G, long long groups, float* __restrict__ scale,
        signed char* __restrict__ w_q) {
    wq_vec<32 / LANES, LANES>(w, F, G, groups, scale, w_q);
}

extern "C" __global__ void __launch_bounds__(BLOCK, VEC4_BPS)
wq_vec4(const float* __restrict__ w, int F, int G, long long groups, float* __restrict__ scale,
        signed char* __restrict__ w_q) {
    wq_vec<4, 32>(w, F, G, groups, scale, w_q);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
wq_any(const float* __restrict__ w, int F, int G, long long groups, float* __restrict__ scale,
       signed char* __restrict__ w_q) {
    for_each_group_scalar(w, F, G, groups, [=](long long gid, long long o, int f0, int end,
                                               float m) {
        const float sc = __fdiv_rn(m, 127.0f);
        const float* row = w + o * F;
        if ((threadIdx.x & 31) == 0) scale[gid] = sc;
        for (int f = f0 + (threadIdx.x & 31); f < end; f += 32)
            w_q[o * F + f] = quantise_w(__ldg(row + f), sc);
    });
}
