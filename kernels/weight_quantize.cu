// Weight path step B, weight_quantize: w_q[o, f] = round(w[o, f] / scale[o, f / G]) as int8
// in [-127, 127]; a zero scale gives 0. The work is the list of O * ceil(F / G) groups
// (common/wgroups.cuh): a team of lanes loads a group (16-byte loads) and its scale. Each
// value is one multiply by the scale's reciprocal, with the division only where the product
// could round apart from the quotient or leave [-127.5, 127.5] (quantise_w4_fast<false>: any
// scale).
//   wquant_vec1: F % 4 == 0, G % 4 == 0, G <= 128: LANES lanes a group.
//   wquant_vec4: F % 4 == 0, G % 4 == 0, G <= 512: a warp a group, 4 float4 a lane.
//   wquant_any:  any F and G: a block a row, scalar loads, the division per value.
// The vector kernels' grid (the plugin's, from WARP_STEPS): blocks enough that each warp
// takes one step and exits, the next blocks taking the SMs as blocks retire, nothing loaded
// ahead (PREFETCH 0); on an H100 2.9 % faster at 18944 x 3584 and 3.6 % at 3584 x 3584 than
// one persistent wave with the next step in flight (kernels/NOTES.md). wquant_vec1's step is
// two groups on 16 lanes each (1 KB), BPS (16) blocks an SM at once (32 registers, no
// spills); on an H100 2.2 % faster at 3584 x 3584 than 8 lanes a group at BPS 12.
// wquant_vec4 keeps VEC4_BPS (12): at 32 registers it would spill 72 bytes (40 registers;
// ptxas spills 8).
#include "wgroups.cuh"
#include "quantise_w.cuh"

#ifndef LANES
#define LANES 16  // lanes a group in wquant_vec1: 8 values a lane, 2 groups a warp's step
#endif
#ifndef BPS
#define BPS 16   // wquant_vec1's blocks an SM the registers must allow (32 registers at BLOCK 128)
#endif
#ifndef VEC4_BPS
#define VEC4_BPS 12  // wquant_vec4's (40 registers at BLOCK 128)
#endif
#ifndef WARP_STEPS
#define WARP_STEPS 1  // the plugin's grid only: n > 0 blocks enough for n steps a warp; 0 one wave
#endif

template <int V, int L>
struct ScaledGroup {  // a team's group and its scale
    WGroup<V, L> grp;
    float s;
};

template <int V, int L, bool FULL>
__device__ __forceinline__ void wquant_groups(const float* __restrict__ w,
                                              const float* __restrict__ scale, int F, int G,
                                              long long groups, signed char* __restrict__ w_q) {
    const int ng = (F + G - 1) / G;
    const int team = (threadIdx.x & 31) / L, m = threadIdx.x & (L - 1);
    for_each_step<FULL ? PREFETCH : 0>(
        groups, 32 / L,
        [=](long long g0) {
            ScaledGroup<V, L> it;
            it.grp.template locate<FULL>(g0 + team, groups, F, G, ng);
            it.s = it.grp.len > 0 ? load_once(scale + it.grp.gid) : 0.0f;
            it.grp.load(w, m);
            return it;
        },
        [=](const ScaledGroup<V, L>& it) {
            const WGroup<V, L>& grp = it.grp;
            if (grp.len == 0) return;  // past the last group (no shuffles here)
            const float inv = __frcp_rn(it.s);
            unsigned q[V];
            bool ok = true;
#pragma unroll
            for (int j = 0; j < V; ++j) q[j] = quantise_w4_fast<false>(grp.r[j], inv, ok);
            if (!ok) {  // rare: a value within 1e-4 of a half, |w / s| near 127.5, s == 0
#pragma unroll
                for (int j = 0; j < V; ++j) q[j] = quantise_w4(grp.r[j], it.s);
            }
            unsigned* out = reinterpret_cast<unsigned*>(w_q + grp.base) + m;
#pragma unroll
            for (int j = 0; j < V; ++j)
                if (grp.holds(m, j)) out[L * j] = q[j];
        });
}

template <int V, int L>
__device__ __forceinline__ void wquant_vec(const float* __restrict__ w,
                                           const float* __restrict__ scale, int F, int G,
                                           long long groups, signed char* __restrict__ w_q) {
    if (F % G == 0) wquant_groups<V, L, true>(w, scale, F, G, groups, w_q);
    else wquant_groups<V, L, false>(w, scale, F, G, groups, w_q);
}

extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
wquant_vec1(const float* __restrict__ w, const float* __restrict__ scale, int F, int G,
            long long groups, signed char* __restrict__ w_q) {
    wquant_vec<32 / LANES, LANES>(w, scale, F, G, groups, w_q);
}

extern "C" __global__ void __launch_bounds__(BLOCK, VEC4_BPS)
wquant_vec4(const float* __restrict__ w, const float* __restrict__ scale, int F, int G,
            long long groups, signed char* __restrict__ w_q) {
    wquant_vec<4, 32>(w, scale, F, G, groups, w_q);
}

// Any F and G: one block a row, a thread a value, the row's group of each value by division.
extern "C" __global__ void __launch_bounds__(BLOCK)
wquant_any(const float* __restrict__ w, const float* __restrict__ scale, int O, int F, int G,
           signed char* __restrict__ w_q) {
    const int o = blockIdx.x;
    if (o >= O) return;
    const int ng = (F + G - 1) / G;
    const float* srow = scale + (size_t)o * ng;
    const size_t row = (size_t)o * (size_t)F;
    for (int f = threadIdx.x; f < F; f += BLOCK)
        w_q[row + f] = quantise_w(__ldg(w + row + f), __ldg(srow + f / G));
}
