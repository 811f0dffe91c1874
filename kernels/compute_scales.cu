// Weight path step A, compute_scales: scale[o, g] = max_{f in group g} |w[o, f]| / 127,
// groups [g*G, min((g+1)*G, F)) (a shorter last group is allowed). One warp per group,
// lanes striding over it (coalesced), a warp max, one IEEE division.
extern "C" __global__ void compute_scales(const float* __restrict__ w, int O, int F, int G,
                                          float* __restrict__ scale) {
    const int ng = (F + G - 1) / G;
    const long long gid = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (gid >= (long long)O * ng) return;  // a whole warp leaves together
    const int lane = threadIdx.x & 31;
    const long long o = gid / ng;
    const int g = (int)(gid - o * ng);
    const int end = min((g + 1) * G, F);
    const float* row = w + o * (long long)F;
    float m = 0.0f;
    for (int f = g * G + lane; f < end; f += 32) m = fmaxf(m, fabsf(__ldg(row + f)));
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
    if (lane == 0) scale[gid] = __fdiv_rn(m, 127.0f);
}
