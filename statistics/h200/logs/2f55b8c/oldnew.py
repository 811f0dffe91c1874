"""act_one at batch 1 as it was (the kernel of 0ff4840, one row, no B argument: act_old.cu
beside this script) against the current source, in one process: the same point timed by the
harness's sampler (graph, cold L2, gated), the two builds alternated, five rounds each. A
diagnostic, not a result file."""
import dataclasses
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from harness.backends.pycuda.context import Device
from harness.backends.pycuda.runner import GpuRunner
from harness.contract.registry import discover
from harness.contract.timing import TimingConfig
from harness.engine.jobs import one_point
from harness.engine.measure import BenchConfig, job_inputs

f = int(sys.argv[1]) if len(sys.argv) > 1 else 3584
reg = discover()
new = reg.get("activation_fused")
old_dir = Path(tempfile.mkdtemp())
shutil.copy(Path(__file__).with_name("act_old.cu"), old_dir / "activation_fused.cu")


def old_enqueue(launch, bufs, p, v):  # type: ignore[no-untyped-def]
    """The launch of 0ff4840 at batch 1: (F, k) without B, the block (32 R, 1, 1)."""
    turns = -(-(int(p["in_f"]) // 4) // launch.block)
    dest = bufs["packed"] if p["layout"] == "packed" else bufs["spikes"]
    launch("act_one", (launch.block // 32, 1, 1), (32 * turns, 1, 1), bufs["x"], bufs["vth"],
           bufs["stats"], bufs["q8"], np.int32(p["in_f"]), np.float32(p["k"]), dest,
           bufs.get("q_wide", 0))


old = dataclasses.replace(new, kernel_dir=old_dir, enqueue=old_enqueue)
with Device(0) as dev:
    run = GpuRunner(dev)
    for k in (3.0, 4.0):
        job = one_point(new, "unidirectional", {}, ["batch=1", f"in_f={f}", f"k={k}"], [])
        inputs = job_inputs(job, BenchConfig())
        for graph in (True, False):
            cfg = TimingConfig(budget_s=0.5, graph=graph)
            got: dict[str, list[float]] = {"old": [], "new": []}
            for rnd in range(5):
                for name, st in ((("old", old), ("new", new)) if rnd % 2 == 0
                                 else (("new", new), ("old", old))):
                    res, t = run.time(st, job.variant, inputs, job.point, cfg)
                    got[name].append(t.median_us)
            # Both builds' outputs compared, so the old one ran the same work.
            a = run.run(old, job.variant, inputs, job.point).outputs
            b = run.run(new, job.variant, inputs, job.point).outputs
            same = all(np.array_equal(a[n], b[n]) for n in a)
            print(f"in_f={f} k={k} graph={graph} same_outputs={same} "
                  + "  ".join(f"{n}: median of medians {np.median(v):.3f} us "
                              f"[{' '.join(f'{x:.2f}' for x in v)}]" for n, v in got.items()),
                  flush=True)
