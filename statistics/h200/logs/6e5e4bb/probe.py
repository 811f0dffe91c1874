"""Fixed costs in the harness's cold method: flush (4x L2 read), start event, the launch(es),
end event; median of 300 samples each. A diagnostic, not a result file."""
import numpy as np
import pycuda.driver as drv
drv.init()
ctx = drv.Device(0).make_context()
from pycuda.compiler import SourceModule
src = r'''
extern "C" __global__ void flush(const int4* __restrict__ buf, long long n, int* sink) {
    int acc = 0; const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int4 v = __ldcg(buf + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
    if (acc != 0) *sink = acc; }
extern "C" __global__ void k_empty(int* o) { if (threadIdx.x == 100000) o[0] = 1; }
extern "C" __global__ void k_smem(int* o) { extern __shared__ int s[]; if (threadIdx.x == 100000) o[0] = s[0]; }
extern "C" __global__ void k_load(const int* __restrict__ p, int* o) {
    const int v = __ldcg(p + blockIdx.x * 1024 + threadIdx.x); if (v == 12345) o[0] = v; }
extern "C" __global__ void k_load2(const int* __restrict__ p, int* o) {
    int v = __ldcg(p + blockIdx.x * 1024 + threadIdx.x); v = __ldcg(p + (v & 7) + blockIdx.x * 1024 + 4096 * 132 + threadIdx.x);
    if (v == 12345) o[0] = v; }
'''
mod = SourceModule(src, arch="sm_90", options=["-O3"])
f_flush, f_empty, f_smem, f_load, f_load2 = (mod.get_function(n) for n in ("flush", "k_empty", "k_smem", "k_load", "k_load2"))
f_smem.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, 227 * 1024)
l2 = drv.Device(0).get_attribute(drv.device_attribute.L2_CACHE_SIZE)
fb = drv.mem_alloc(4 * l2); drv.memset_d8(fb, 0, 4 * l2)
sink = drv.mem_alloc(4); o = drv.mem_alloc(4)
data = drv.mem_alloc(64 << 20); drv.memset_d8(data, 1, 64 << 20)
c1 = drv.mem_alloc(1 << 20); c2 = drv.mem_alloc(1 << 20)
s = drv.Stream()
sm = drv.Device(0).get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
def flush():
    f_flush(fb, np.int64(4 * l2 // 16), sink, block=(512, 1, 1), grid=(4 * sm, 1), stream=s)
def run(name, launches, n=300, cold=True):
    t = []
    for _ in range(n):
        if cold: flush()
        a, b = drv.Event(), drv.Event()
        a.record(s)
        for L in launches: L()
        b.record(s)
        b.synchronize()
        t.append(b.time_since(a) * 1000)
    t = np.array(t[20:])
    print(f"{name:58s} median {np.median(t):7.2f} us  p10 {np.percentile(t,10):7.2f}  p90 {np.percentile(t,90):7.2f}", flush=True)
E = lambda g=sm, th=160: (lambda: f_empty(o, block=(th, 1, 1), grid=(g, 1), stream=s))
S = lambda kb, g=sm: (lambda: f_smem(o, block=(160, 1, 1), grid=(g, 1), shared=kb * 1024, stream=s))
Ld = lambda: f_load(data, o, block=(160, 1, 1), grid=(sm, 1), stream=s)
Ld2 = lambda: f_load2(data, o, block=(160, 1, 1), grid=(sm, 1), stream=s)
Cp = lambda nb: (lambda: drv.memcpy_dtod_async(c2, c1, nb, s))
for cold in (True,):
    tag = "cold" if cold else "hot "
    run(f"{tag} nothing (two events)", [], cold=cold)
    run(f"{tag} empty, 1 block", [E(1)], cold=cold)
    run(f"{tag} empty, 132 x 160", [E()], cold=cold)
    run(f"{tag} empty, 264 x 128", [E(2 * sm, 128)], cold=cold)
    run(f"{tag} empty, 37888 x 128", [E(37888, 128)], cold=cold)
    run(f"{tag} empty x2, 132 x 160", [E(), E()], cold=cold)
    run(f"{tag} 227 KB smem, 132 x 160", [S(227)], cold=cold)
    run(f"{tag} 64 KB smem, 132 x 160", [S(64)], cold=cold)
    run(f"{tag} 227 KB smem x2", [S(227), S(227)], cold=cold)
    run(f"{tag} one DRAM load a thread, 132 x 160", [Ld], cold=cold)
    run(f"{tag} two dependent DRAM loads, 132 x 160", [Ld2], cold=cold)
    run(f"{tag} memcpy 4 KB", [Cp(4096)], cold=cold)
ctx.pop()
