// Weight path step A, compute_scales: scale[o, g] = max_{f in group g} |w[o, f]| / 127,
// groups [g*G, min((g+1)*G, F)) (a shorter last group is allowed), one IEEE division a group.
// The work is the list of O * ceil(F / G) groups (common/wgroups.cuh): a team of lanes
// loads a group with 16-byte loads, all of them issued before the max: a warp's step of 4
// groups is 2 KB in flight.
//   scales_vec1: F % 4 == 0, G % 4 == 0, G <= 128: LANES lanes a group.
//   scales_vec4: F % 4 == 0, G % 4 == 0, G <= 512: a warp a group, 4 float4 a lane.
//   scales_any:  any F and G: a warp a group, lanes striding over it with scalar loads.
// The grid (the plugin's, from WARP_STEPS): blocks enough that each warp takes one step and
// exits, the next blocks taking the SMs as blocks retire, BPS an SM at once (VEC4_BPS for
// scales_vec4), nothing loaded ahead (PREFETCH 0: no warp has a next step); on an H100 this
// build was 2.4 % faster at 18944 x 3584 and 1.2 % at 3584 x 3584 than one persistent wave
// of warps looping over the steps (kernels/NOTES.md). No registers spilled (ptxas).
#include "wgroups.cuh"

#ifndef LANES
#define LANES 8  // lanes a group in scales_vec1: 16 values a lane, 4 groups a warp's step
#endif
#ifndef BPS
#define BPS 8    // scales_vec1's blocks an SM the registers must allow
#endif
#ifndef VEC4_BPS
#define VEC4_BPS 8  // scales_vec4's
#endif
#ifndef WARP_STEPS
#define WARP_STEPS 1  // the plugin's grid only: n > 0 blocks enough for n steps a warp; 0 one wave
#endif

template <int V, int L, bool FULL>
__device__ __forceinline__ void scales_groups(const float* __restrict__ w, int F, int G,
                                              long long groups, float* __restrict__ scale) {
    for_each_group<V, L, FULL>(w, F, G, groups, [=](const WGroup<V, L>& grp, int m) {
        const float mx = grp.amax();
        if (m == 0 && grp.len > 0) scale[grp.gid] = __fdiv_rn(mx, 127.0f);
    });
}

template <int V, int L>
__device__ __forceinline__ void scales_vec(const float* __restrict__ w, int F, int G,
                                           long long groups, float* __restrict__ scale) {
    if (F % G == 0) scales_groups<V, L, true>(w, F, G, groups, scale);
    else scales_groups<V, L, false>(w, F, G, groups, scale);
}

extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
scales_vec1(const float* __restrict__ w, int F, int G, long long groups,
            float* __restrict__ scale) {
    scales_vec<32 / LANES, LANES>(w, F, G, groups, scale);
}

extern "C" __global__ void __launch_bounds__(BLOCK, VEC4_BPS)
scales_vec4(const float* __restrict__ w, int F, int G, long long groups,
            float* __restrict__ scale) {
    scales_vec<4, 32>(w, F, G, groups, scale);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scales_any(const float* __restrict__ w, int F, int G, long long groups,
           float* __restrict__ scale) {
    for_each_group_scalar(w, F, G, groups, [=](long long gid, long long, int, int, float m) {
        if ((threadIdx.x & 31) == 0) scale[gid] = __fdiv_rn(m, 127.0f);
    });
}
