"""Does the weights' physical placement set int_gemm's time at M <= 16? The same point timed
(gated, cold, the harness's own sampler) with a dummy allocation of D MB made first, for
several D, the list twice; the weight buffer's device address printed beside each. A
diagnostic, not a result file."""
import sys

from harness.backends.pycuda.context import Device
from harness.backends.pycuda.runner import GpuRunner
from harness.contract.registry import discover
from harness.contract.timing import TimingConfig
from harness.engine.jobs import one_point
from harness.engine.measure import BenchConfig, job_inputs

m, n, k = (int(a) for a in (sys.argv[1:4] if len(sys.argv) > 3 else (1, 18944, 3584)))
reg = discover()
st = reg.get("int_gemm")
cfg = TimingConfig(budget_s=0.3)
with Device(0) as dev:
    run = GpuRunner(dev)
    drv = run.drv
    job = one_point(st, "int8", {}, [f"batch={m}", f"out_f={n}", f"in_f={k}"], [])
    inputs = job_inputs(job, BenchConfig())
    print(f"M={m} N={n} K={k}")
    for rnd in range(2):
        for d_mb in (0, 2, 6, 24, 64, 130, 258, 1026):
            dummy = drv.mem_alloc(d_mb << 20) if d_mb else None
            probe = drv.mem_alloc(1 << 20)  # where the next allocation lands
            addr = int(probe)
            probe.free()
            _, t = run.time(st, job.variant, inputs, job.point, cfg)
            print(f"round {rnd} dummy {d_mb:5d} MB  next alloc {addr:#x}  median {t.median_us:7.2f} us"
                  f"  p10 {t.p10_us:7.2f}  p90 {t.p90_us:7.2f}  samples {t.samples}", flush=True)
            if dummy is not None:
                dummy.free()
