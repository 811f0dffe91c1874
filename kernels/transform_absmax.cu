// SPEC steps 2b-2c, transform_absmax: the transform decision o from [qmin, qmax] and the
// mode, made on the device (no host round trip), then v = q - o in place and amax = max|v|
// (one atomic per block).
//   transform_init:   o and amax's seed (0), from mm = [qmin, qmax]; one thread.
//   transform_absmax: grid-stride over q, 16-byte accesses where n % 4 == 0.
// mode: 0 unidirectional, 1 bidirectional, 2 twos_complement.
#include "reduce_int.cuh"
#include "decision.cuh"  // transform_offset: SPEC 2b

extern "C" __global__ void transform_init(const int* mm, int mode, int* o, int* amax) {
    *o = transform_offset(mm[0], mm[1], mode);
    *amax = 0;
}

extern "C" __global__ void transform_absmax(int* __restrict__ q, long long n,
                                            const int* __restrict__ o, int* amax) {
    const int off = __ldg(o);
    int hi = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((n & 3) == 0) {
        int4* q4 = reinterpret_cast<int4*>(q);
#pragma unroll 4
        for (long long i = tid; i < (n >> 2); i += stride) {
            int4 v = q4[i];
            v.x -= off; v.y -= off; v.z -= off; v.w -= off;
            q4[i] = v;
            hi = max(hi, max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w))));
        }
    } else {
        for (long long i = tid; i < n; i += stride) {
            const int v = q[i] - off;
            q[i] = v;
            hi = max(hi, abs(v));
        }
    }
    block_atomic_min_max(INT_MAX, hi, nullptr, amax);
}
