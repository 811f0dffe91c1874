// Weight groups in registers, shared by the weight kernels (compute_scales, weight_quantize,
// weight_quant_fused). A group is G consecutive values of a row of w [O, F] (the last of a
// row may be shorter); the work is the list of O * ceil(F / G) groups, whatever the shape.
//
// A team of L lanes (L a power of two <= 32) holds one group, V float4 a lane: lane m of the
// team holds float4s m, m + L, ..., m + (V-1) L of its group. So each of a warp's V loads
// reads L * 16 contiguous bytes a team (whole 128-byte lines at L = 8), a warp holds 32 / L
// groups at once, and the per-group work (the max's shuffles, the division by 127, the
// reciprocal) is one warp instruction for 32 / L groups. A group holds up to 4 V L values.
// Vector paths need F % 4 == 0 and G % 4 == 0, so that every group starts 16-byte aligned.
//
// for_each_group hands a kernel every group in registers (for_each_group_scalar: any F and G,
// a warp a group, scalar loads). for_each_step walks the list: warps stride over steps of
// 32 / L groups, over any grid (the plugins' grids, from WARP_STEPS: blocks enough that each
// warp takes WARP_STEPS steps at most, or with 0 one wave of the blocks that fit, the loop
// doing the rest). Where a warp has more than one step, -DPREFETCH=1 issues its next step's
// loads before it works on this step, so it always has loads in flight (Little's law: ~4.3
// TB/s x ~1 us is ~32 KB in flight an SM); -DPREFETCH=2 the step two ahead, so it never has
// fewer than two steps in flight (three items' registers: fewer blocks an SM, BPS 6 at 64
// float registers of items). At one step a warp (WARP_STEPS 1, every kernel's default) no
// rotation runs: the default is PREFETCH 0.
#pragma once
#include "loads.cuh"  // load_once: -DEVICT_FIRST picks the cache hint

#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

__device__ __forceinline__ float amax4(float4 v) {
    return fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
}

template <int V, int L>
struct WGroup {
    static_assert(L >= 1 && L <= 32 && (L & (L - 1)) == 0, "a team is a power of two lanes");
    float4 r[V];     // this lane's share, zero past the group's end
    long long gid;   // the group's index in the list
    long long base;  // offset of the group's first value in w
    int len;         // values in the group; 0 when gid is past the last group

    // gid's place in w: back to back when F % G == 0 (FULL: no division), else its row
    // o = gid / ng and column group g (32-bit division while the list fits 32 bits).
    template <bool FULL>
    __device__ __forceinline__ void locate(long long id, long long groups, int F, int G, int ng) {
        gid = id;
        if (FULL) {
            base = id * G;
            len = id < groups ? G : 0;
        } else {
            const long long o = id / ng;
            const int g = (int)(id - o * ng);
            base = o * F + (long long)g * G;
            len = id < groups ? min(G, F - g * G) : 0;  // a multiple of 4 on the vector paths
        }
    }

    // Lane m of the team loads its V float4 (all issued before any is used), from one
    // address and constant offsets.
    __device__ __forceinline__ void load(const float* __restrict__ w, int m) {
        const float4* p = reinterpret_cast<const float4*>(w + base) + m;
#pragma unroll
        for (int j = 0; j < V; ++j)
            r[j] = holds(m, j) ? load_once(p + L * j) : make_float4(0.f, 0.f, 0.f, 0.f);
    }

    // max |w| over the group, to every lane of the team (every lane of the warp must call it:
    // the shuffles stay inside each team, whose lanes are L-aligned).
    __device__ __forceinline__ float amax() const {
        float m = 0.0f;
#pragma unroll
        for (int j = 0; j < V; ++j) m = fmaxf(m, amax4(r[j]));
#pragma unroll
        for (int s = L / 2; s > 0; s >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
        return m;
    }

    // Whether float4 j of lane m is inside the group.
    __device__ __forceinline__ bool holds(int m, int j) const { return 4 * (m + L * j) < len; }
};

// Steps of per_warp consecutive groups, warp-strided over the list: load(g0) gives the lane's
// item for the step starting at group g0 (nothing loaded past the end), work(item) uses it.
// Every lane of a warp runs the same steps (the loop bound is warp-uniform). With PF steps
// ahead (the kernels pass PREFETCH where rows are whole groups, the shapes that matter: the
// other path's 64-bit row arithmetic would not fit two items in 64 registers) the loads of
// the step PF ahead are issued before this step's work.
template <int PF, class Load, class Work>
__device__ __forceinline__ void for_each_step(long long groups, int per_warp, Load load,
                                              Work work) {
    static_assert(PF >= 0 && PF <= 2, "PREFETCH is 0, 1 or 2 steps ahead");
    const long long warps = (long long)gridDim.x * (BLOCK / 32);
    const long long stride = warps * per_warp;
    long long g0 = ((long long)blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5)) * per_warp;
    if constexpr (PF == 0) {
        for (; g0 < groups; g0 += stride) work(load(g0));
        return;
    }
    if constexpr (PF == 2) {
        // Three items in turn, each loaded two steps before it is worked on.
        if (g0 >= groups) return;
        auto a = load(g0);
        auto b = load(g0 + stride);
        for (;;) {
            const auto c = load(g0 + 2 * stride);
            work(a);
            if ((g0 += stride) >= groups) return;
            a = load(g0 + 2 * stride);
            work(b);
            if ((g0 += stride) >= groups) return;
            b = load(g0 + 2 * stride);
            work(c);
            if ((g0 += stride) >= groups) return;
        }
    }
    // Two items in turn (no copy from the next to the current one). Past the end nothing
    // is read.
    if (g0 >= groups) return;
    auto a = load(g0);
    for (;;) {
        const auto b = load(g0 + stride);
        work(a);
        if ((g0 += stride) >= groups) return;
        a = load(g0 + stride);
        work(b);
        if ((g0 += stride) >= groups) return;
    }
}

// Every group of the list, a team of L lanes a group with V float4 a lane: work(grp, m) with
// the group in registers, m the lane's place in its team (every lane of the warp calls work,
// past the list's end too, with grp.len == 0: the team's shuffles need every lane).
template <int V, int L, bool FULL, class Work>
__device__ __forceinline__ void for_each_group(const float* __restrict__ w, int F, int G,
                                               long long groups, Work work) {
    const int ng = (F + G - 1) / G;
    const int team = (threadIdx.x & 31) / L, m = threadIdx.x & (L - 1);
    for_each_step<FULL ? PREFETCH : 0>(
        groups, 32 / L,
        [=](long long g0) {
            WGroup<V, L> grp;
            grp.template locate<FULL>(g0 + team, groups, F, G, ng);
            grp.load(w, m);
            return grp;
        },
        [=](const WGroup<V, L>& grp) { work(grp, m); });
}

// The scalar path for any F and G: a warp a group, lanes striding over it with scalar loads.
// work(gid, row, begin, end, amax): the group is row[begin, end) (row = w + o F), amax its
// max |w| on every lane.
template <class Work>
__device__ __forceinline__ void for_each_group_scalar(const float* __restrict__ w, int F, int G,
                                                      long long groups, Work work) {
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * (BLOCK / 32);
    const int ng = (F + G - 1) / G;
    for (long long gid = (long long)blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5);
         gid < groups; gid += warps) {
        const long long o = gid / ng;
        const int g = (int)(gid - o * ng);
        const float* row = w + o * F;
        const int end = min((g + 1) * G, F);
        float m = 0.0f;
        for (int f = g * G + lane; f < end; f += 32) m = fmaxf(m, fabsf(__ldg(row + f)));
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
        work(gid, o, g * G, end, m);
    }
}
