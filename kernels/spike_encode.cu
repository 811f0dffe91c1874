// SPEC step 3, spike_encode: v [n] int32 -> spikes [T, n] int8, the mode fixed by -DMODE.
// Each thread reads 4 values once (16 bytes) and writes 4 bytes to each of the T planes;
// a scalar path covers n % 4 != 0 (planes then are not 4-byte aligned).
#include "spikes.cuh"

extern "C" __global__ void spike_encode(const int* __restrict__ v, long long n, int T,
                                        signed char* __restrict__ spikes) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((n & 3) == 0) {
        const int4* v4 = reinterpret_cast<const int4*>(v);
        for (long long i = tid; i < (n >> 2); i += stride) {
            const int4 x = __ldg(v4 + i);
            for (int t = 0; t < T; ++t) {
                const char4 s = make_char4(spike_plane(x.x, t, T), spike_plane(x.y, t, T),
                                           spike_plane(x.z, t, T), spike_plane(x.w, t, T));
                reinterpret_cast<char4*>(spikes + (long long)t * n)[i] = s;
            }
        }
    } else {
        for (long long i = tid; i < n; i += stride) {
            const int x = __ldg(v + i);
            for (int t = 0; t < T; ++t) spikes[(long long)t * n + i] = spike_plane(x, t, T);
        }
    }
}
