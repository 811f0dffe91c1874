"""Where the stream kernel's fixed time goes: a build with -DIGT_TRACE=1 stamps %globaltimer
and clock64 per CTA at its milestones (common/igemm_stream.cuh); each launch here runs cold
(the harness's flush first), timed by events, then the stamps are read back. A diagnostic,
not a result file. Usage: python trace.py [EXTRA_DEFINE=V ...]"""
import sys

import numpy as np

from harness.backends.pycuda.context import Device
from harness.backends.pycuda.runner import GpuRunner
from harness.backends.pycuda.buffers import Buffers
from harness.contract.registry import discover
from harness.engine.jobs import one_point
from harness.engine.measure import BenchConfig, job_inputs

SLOTS = 8
NAMES = ["entry", "first TMA issued", "first unit landed", "last unit landed",
         "epilogue begun", "last store issued"]
extra = sys.argv[1:]
reg = discover()
st = reg.get("int_gemm")
with Device(0) as dev:
    run = GpuRunner(dev)
    drv = run.drv
    for (m, n, k) in [(1, 3584, 3584), (1, 18944, 3584), (16, 18944, 3584), (1, 3584, 18944)]:
        job = one_point(st, "int8", {}, [f"batch={m}", f"out_f={n}", f"in_f={k}"],
                        ["IGT_TRACE=1", *extra])
        inputs = job_inputs(job, BenchConfig())
        launch = run.launcher(st, job.variant)
        mod = run.module(st, job.variant)
        gptr, gsize = mod.get_global("int_gemm_stream_trace")
        bufs = Buffers.allocate(drv, st, inputs, job.point)
        args = bufs.all()
        ev0, ev1 = drv.Event(), drv.Event()
        spans, evs, rows = [], [], []
        for it in range(60):
            drv.memset_d8(gptr, 0, gsize)
            run.prelude.flush()
            ev0.record(run.stream)
            st.enqueue(launch, args, job.point, job.variant)
            ev1.record(run.stream)
            ev1.synchronize()
            tr = np.empty(gsize // 8, np.uint64)
            drv.memcpy_dtoh(tr, gptr)
            if it < 10:
                continue
            tr = tr.reshape(-1, 2 * SLOTS)
            used = tr[:, 0] > 0
            g = tr[used, :SLOTS].astype(np.float64)
            c = tr[used, SLOTS:].astype(np.float64)
            g[g == 0] = np.nan
            c[c == 0] = np.nan
            t0 = np.nanmin(g[:, 0])
            rows.append((g - t0, c - c[:, :1]))
            spans.append(np.nanmax(g[:, 5]) - t0)
            evs.append(ev1.time_since(ev0) * 1000)
        print(f"\n== M={m} N={n} K={k} {' '.join(extra)}: CTAs {len(rows[-1][0])}, "
              f"event median {np.median(evs):.2f} us, globaltimer span (first entry -> "
              f"last store) median {np.median(spans) / 1000:.2f} us")
        G = np.stack([r[0] for r in rows])  # samples x CTAs x slots (ns from first entry)
        C = np.stack([r[1] for r in rows])  # cycles from the CTA's own entry
        print(f"{'milestone':22s} {'globaltimer ns: min':>20s} {'median':>8s} {'max':>8s}"
              f" | {'own cycles: median':>18s} {'max':>8s}")
        for s, name in enumerate(NAMES):
            gs = np.nanmedian(G[:, :, s], axis=0)  # per CTA over samples
            cs = np.nanmedian(C[:, :, s], axis=0)
            print(f"{name:22s} {np.nanmin(gs):20.0f} {np.nanmedian(gs):8.0f} "
                  f"{np.nanmax(gs):8.0f} | {np.nanmedian(cs):18.0f} {np.nanmax(cs):8.0f}")
        # distinct globaltimer steps seen (its resolution on this device)
        v = G[:, :, :6].ravel()
        d = np.diff(np.unique(v[~np.isnan(v)]))
        print(f"globaltimer smallest steps: {np.unique(d[d > 0])[:5]}")
        bufs.free()
