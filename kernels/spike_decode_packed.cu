// SPEC step 4 on the bit-packed layout of activation_fused: packed [P, B, W] uint32 ->
// q'[b, f] = v + o, with bit j of word w holding value 32w + j (MODE fixed by -DMODE):
//   MODE 0 unidirectional:  v = sum_t 2^(T-1-t) bit_t
//   MODE 1 bidirectional:   |v| from the T magnitude planes, plane T the sign
//   MODE 2 twos_complement: plane 0 worth -2^(T-1), the others as unidirectional
// One block per row; each thread reads a value's word of every plane (a warp's 32 lanes
// share one word: one broadcast load a plane) and writes one int32.
#ifndef MODE
#define MODE 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
spike_decode_packed(const unsigned* __restrict__ packed, int B, int F, int T,
                    const int* __restrict__ o, int* __restrict__ q) {
    const int b = blockIdx.x;
    const int W = (F + 31) >> 5;
    const size_t plane = (size_t)B * (size_t)W;
    const unsigned* rowp = packed + (size_t)b * W;
    const int off = __ldg(o);
    for (int f = threadIdx.x; f < F; f += BLOCK) {
        const int w = f >> 5, j = f & 31;
        int acc = 0;
        for (int t = 0; t < T; ++t)
            acc = (acc << 1) | (int)((__ldg(rowp + (size_t)t * plane + w) >> j) & 1u);
#if MODE == 1
        if ((__ldg(rowp + (size_t)T * plane + w) >> j) & 1u) acc = -acc;
#elif MODE == 2
        acc -= (int)(((unsigned)acc >> (T - 1)) & 1u) << T;  // sign bit: -2^(T-1), not +
#endif
        q[(size_t)b * F + f] = acc + off;
    }
}
