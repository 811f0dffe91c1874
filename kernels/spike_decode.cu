// SPEC step 4, spike_decode: q'[i] = sum_t 2^(T-1-t) * spikes[t, i] + o (int32).
// The same for every mode: the planes carry their signs. Horner's rule, most significant
// plane first; 4-byte plane loads and 16-byte stores where n % 4 == 0.
extern "C" __global__ void spike_decode(const signed char* __restrict__ spikes, long long n,
                                        int T, const int* __restrict__ o,
                                        int* __restrict__ q) {
    const int off = __ldg(o);
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((n & 3) == 0) {
        for (long long i = tid; i < (n >> 2); i += stride) {
            int4 acc = make_int4(0, 0, 0, 0);
            for (int t = 0; t < T; ++t) {
                const char4 s = __ldg(reinterpret_cast<const char4*>(spikes + (long long)t * n) + i);
                acc.x = 2 * acc.x + s.x; acc.y = 2 * acc.y + s.y;
                acc.z = 2 * acc.z + s.z; acc.w = 2 * acc.w + s.w;
            }
            reinterpret_cast<int4*>(q)[i] =
                make_int4(acc.x + off, acc.y + off, acc.z + off, acc.w + off);
        }
    } else {
        for (long long i = tid; i < n; i += stride) {
            int acc = 0;
            for (int t = 0; t < T; ++t) acc = 2 * acc + __ldg(spikes + (long long)t * n + i);
            q[i] = acc + off;
        }
    }
}
