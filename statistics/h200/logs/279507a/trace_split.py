"""Does the split claimed at run time even out the stream kernel's CTAs? The trace build
(-DIGT_TRACE=1) stamps each CTA's %globaltimer at entry, at its last unit landed and at its
last store. Over 60 cold launches of each build (IGT_DYN = 0: the static split; 25: the
default), the spread of the CTAs' last units (max - min, and max - median) and the launch's
span (first entry -> last store). A diagnostic, not a result file. Usage: python trace_split.py"""
import numpy as np

from harness.backends.pycuda.buffers import Buffers
from harness.backends.pycuda.context import Device
from harness.backends.pycuda.runner import GpuRunner
from harness.contract.registry import discover
from harness.engine.jobs import one_point
from harness.engine.measure import BenchConfig, job_inputs

SLOTS = 8
reg = discover()
st = reg.get("int_gemm")
with Device(0) as dev:
    run = GpuRunner(dev)
    drv = run.drv
    for (m, n, k) in [(1, 18944, 3584), (16, 18944, 3584), (1, 3584, 18944), (1, 3584, 3584)]:
        for dyn in (0, 25):
            job = one_point(st, "int8", {}, [f"batch={m}", f"out_f={n}", f"in_f={k}"],
                            ["IGT_TRACE=1", f"IGT_DYN={dyn}"])
            inputs = job_inputs(job, BenchConfig())
            launch = run.launcher(st, job.variant)
            mod = run.module(st, job.variant)
            gptr, gsize = mod.get_global("int_gemm_stream_trace")
            bufs = Buffers.allocate(drv, st, inputs, job.point)
            args = bufs.all()
            spread, tail, span, med = [], [], [], []
            for it in range(70):
                drv.memset_d8(gptr, 0, gsize)
                run.prelude.flush()
                st.enqueue(launch, args, job.point, job.variant)
                run.stream.synchronize()
                tr = np.empty(gsize // 8, np.uint64)
                drv.memcpy_dtoh(tr, gptr)
                if it < 10:
                    continue
                tr = tr.reshape(-1, 2 * SLOTS)
                g = tr[tr[:, 0] > 0, :SLOTS].astype(np.float64)
                t0 = g[:, 0].min()
                last = (g[:, 3] - t0) / 1000.0  # us from the launch's first entry
                spread.append(last.max() - last.min())
                tail.append(last.max() - np.median(last))
                med.append(np.median(last))
                span.append((g[:, 5].max() - t0) / 1000.0)
            print(f"M={m} N={n} K={k} IGT_DYN={dyn}: {g.shape[0]} CTAs; last unit landed (us "
                  f"from first entry): median {np.median(med):.2f}, max - median "
                  f"{np.median(tail):.2f}, max - min {np.median(spread):.2f}; span "
                  f"{np.median(span):.2f} (min {np.min(span):.2f}, max {np.max(span):.2f})",
                  flush=True)
            bufs.free()
