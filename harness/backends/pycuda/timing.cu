// The harness's own helpers for timing (not stages).

// Keeps the stream busy for `ns` nanoseconds before a timed region, so that the host's
// launch overhead is hidden behind it and not counted in the events' time (--hot timing,
// and before each timed pipeline run).
extern "C" __global__ void harness_delay(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

// Cold-L2 flush by READING a buffer several times the L2 (ld.global.cg: cached in L2
// only). The L2 then holds clean lines of this buffer: evicting them costs the timed
// kernel nothing, where a memset flush leaves dirty lines whose write-back lands inside the
// next timed region (measured: ~5 us on an H200, 8.8 % of a 56 us kernel). `sink` is
// written only if the XOR of a zeroed buffer is not zero, which keeps the loads alive.
extern "C" __global__ void harness_flush(const int4* __restrict__ buf, long long n,
                                         int* sink) {
    int acc = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
#pragma unroll 4
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int4 v = __ldcg(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc != 0) *sink = acc;
}

// The SM clock, measured as nvbench does (nvbench/detail/gpu_frequency.cxx: SM cycles of
// clock64() over nanoseconds of %globaltimer), by one thread on one SM: out[0] = cycles,
// out[1] = nanoseconds, over at least `ns` ns; MHz = cycles / ns * 1000. The global timer
// can tick as coarsely as once a microsecond, so both clock64() reads follow a tick of it
// (the first read after the timer changed): the nanoseconds between them are exact to one
// turn of the same loop, not to one tick. Reads no memory; writes 16 bytes.
extern "C" __global__ void harness_clock(unsigned long long ns, unsigned long long* out) {
    unsigned long long t, t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    } while (t0 == t);
    const long long c0 = clock64();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    } while (t1 - t0 < ns);
    const long long c1 = clock64();
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = t1 - t0;
}

// The gate before a timed region (nvbench's blocking kernel): one thread holds the stream
// until the host has enqueued the start event, the work and the end event and opened it
// (flags[0] = 1, in host-mapped memory), so however long the host takes, none of it lands
// between the events. Past timeout_ns it opens by itself and says so (flags[1] = 1): the
// work then waited on the GPU inside its own launch (a host synchronisation), which a gate
// that never opened by itself would deadlock.
extern "C" __global__ void harness_gate(volatile int* flags, unsigned long long timeout_ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (flags[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            flags[1] = 1;
            return;
        }
    }
}

// A read/write mix (`harness calibrate --kind mix`; `--kind read` writes no plane): thread
// i reads int4 i of each of R planes of src (plane p at src + p n) and writes their xor
// (so no read is dead) to `writes` planes of dst, in one pass of short blocks of one unit
// a thread: 16 R bytes read for each 16 x writes written. With one read and six writes it
// is the traffic of a pass that reads one byte a value and writes several
// (activation_fused's pass 2: q8 in, T int8 planes out); with four reads and one write, of
// one that reads a float and writes a byte (its pass 1: x in, q8 out). What it reaches is
// that pass's ceiling, where the copy is the peak. R is compiled in, an entry point each
// (harness_mix1 ... harness_mix8), so each R keeps the registers (and so the occupancy) its
// own reads need, not those of the most reads; the launch bounds (its 256-thread blocks,
// eight an SM) hold every R to 32 a thread: a full SM of threads. Up to
// four reads go out together before the first xor (SASS); at eight ptxas issues them in
// two groups, which at 2048 threads an SM still keeps far more bytes in flight than the
// DRAM's latency needs.
template <int R>
__device__ __forceinline__ void mix(const int4* __restrict__ src, int4* __restrict__ dst,
                                    long long n, int writes) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int4 u[R];
#pragma unroll
    for (int p = 0; p < R; ++p) u[p] = src[(long long)p * n + i];
    int4 v = u[0];
#pragma unroll
    for (int p = 1; p < R; ++p) { v.x ^= u[p].x; v.y ^= u[p].y; v.z ^= u[p].z; v.w ^= u[p].w; }
    // No plane written (`harness calibrate --kind read`): a store on a value the source never
    // holds (it is filled with bytes of 1, so v is 0 or 0x01010101) keeps the reads alive.
    if (writes == 0 && (v.x & v.y & v.z & v.w) == -1) dst[i] = v;
    for (int p = 0; p < writes; ++p) dst[(long long)p * n + i] = v;
}
// 256: bandwidth.py's MIX_BLOCK, the blocks the harness launches.
#define HARNESS_MIX(R)                                                                     \
    extern "C" __global__ void __launch_bounds__(256, 8)                                   \
    harness_mix##R(const int4* __restrict__ src, int4* __restrict__ dst, long long n,       \
                   int writes) {                                                            \
        mix<R>(src, dst, n, writes);                                                        \
    }
HARNESS_MIX(1)
HARNESS_MIX(2)
HARNESS_MIX(3)
HARNESS_MIX(4)
HARNESS_MIX(5)
HARNESS_MIX(6)
HARNESS_MIX(7)
HARNESS_MIX(8)
