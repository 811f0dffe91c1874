// SPEC step 5, dynamic_spikes_reverse: x_rec[b, f] = q'[b, f] * vth[b] (float32).
// A block takes a chunk of one row: BLOCK x units 16-byte units where F % 4 == 0 (single
// values otherwise), and its vth, read once. Every load of a thread is issued before any of
// its stores, so a block is one memory round trip, not `units` of them in series (what a
// grid-strided loop over the row costs at small batches, where a launch is all latency).
// `units` is the launch's (1..UNITS): the plugin takes UNITS where the grid fits in one wave
// (a row of 3584 is one block), fewer past it (more, shorter blocks: the slots of an SM turn
// over sooner). The loads' registers are sized by UNITS at compile time.
// __fmul_rn keeps the product a single rounding, whatever contraction the compiler would like.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef UNITS
#define UNITS 4  // the most units a thread loads before it stores: its registers
#endif
// Blocks an SM holds: its threads (Hopper's 2048) over the block, at most 32 (its most
// blocks). The bounds keep that many resident (at most 32 registers at BLOCK 256); the
// plugin's one-wave test counts on it.
#define SM_THREADS 2048
#define SM_BLOCKS (SM_THREADS / BLOCK < 32 ? SM_THREADS / BLOCK : 32)

__device__ __forceinline__ float scale(int v, float t) { return __fmul_rn((float)v, t); }

__device__ __forceinline__ float4 scale(int4 v, float t) {
    return make_float4(scale(v.x, t), scale(v.y, t), scale(v.z, t), scale(v.w, t));
}

// Elements i0, i0 + BLOCK, ... (at most `units` of them, those below n) of in, scaled by t
// into out: every load first, then every store. In is int4 (16-byte units) or int (single
// values); out is float4 or float.
template <class In, class Out>
__device__ __forceinline__ void reverse_chunk(const In* __restrict__ in, Out* __restrict__ out,
                                              int i0, int n, int units, float t) {
    In v[UNITS];
#pragma unroll
    for (int j = 0; j < UNITS; ++j)
        if (j < units && i0 + j * BLOCK < n) v[j] = __ldg(in + i0 + j * BLOCK);
#pragma unroll
    for (int j = 0; j < UNITS; ++j)
        if (j < units && i0 + j * BLOCK < n) out[i0 + j * BLOCK] = scale(v[j], t);
}

// Grid (B * chunks): block i takes chunk i % chunks of row i / chunks, where chunks =
// ceil(n / (BLOCK * units)) and n is F / 4 (F % 4 == 0) or F; units <= UNITS.
extern "C" __global__ void __launch_bounds__(BLOCK, SM_BLOCKS)
dynamic_spikes_reverse(const int* __restrict__ q, const float* __restrict__ vth, int B, int F,
                       int chunks, int units, float* __restrict__ x_rec) {
    const int b = blockIdx.x / chunks, c = blockIdx.x - b * chunks;
    if (b >= B) return;
    const float t = __ldg(vth + b);
    const size_t row = (size_t)b * (size_t)F;
    const int i0 = c * (BLOCK * units) + threadIdx.x;
    if ((F & 3) == 0)
        reverse_chunk(reinterpret_cast<const int4*>(q + row), reinterpret_cast<float4*>(x_rec + row),
                      i0, F >> 2, units, t);
    else
        reverse_chunk(q + row, x_rec + row, i0, F, units, t);
}
