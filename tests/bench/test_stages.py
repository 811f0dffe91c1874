"""pytest-benchmark regression tracking of every stage on the GPU (marked ``gpu``).

Each round is one sample as ``harness bench`` takes it (the L2 flushed, the start gated
until the launch is enqueued, CUDA events around the work), and pytest-benchmark's timer is
the event time (:mod:`tests.bench.clock`): its statistics are the kernels', with no host
launch or synchronisation inside. Save a baseline, then compare:

    pytest tests/bench -m gpu --benchmark-enable --benchmark-autosave
    pytest tests/bench -m gpu --benchmark-enable --benchmark-compare \\
        --benchmark-compare-fail=median:10%

The second run fails when a stage's median is more than 10 % slower than the saved one
(pick the percentage above the run-to-run noise that ``--benchmark-compare`` shows). A
baseline saved with another timer is not comparable (``scripts/gpu-check.sh`` says so).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.contract import registry
from tests.bench.clock import cuda_event_clock, stage_rounds

pytestmark = pytest.mark.gpu

#: A point per stage that runs well past launch overhead.
POINTS = {
    "gemm": {"batch": 1024},
    "compute_scales": {"out_f": 18944},
    "weight_quantize": {"out_f": 18944},
    "weight_quant_fused": {"out_f": 18944},
}
#: Every stage the registry finds (pipelines are timed by `harness bench PIPELINE`): a new
#: stage is benchmarked without editing this file.
STAGES = tuple(sorted(registry.discover(entry_points=False).stages))


@pytest.mark.benchmark(timer=cuda_event_clock)
@pytest.mark.parametrize("name", STAGES)
def test_stage(benchmark, reg, gpu_runner, name: str) -> None:  # type: ignore[no-untyped-def]
    st = reg.get(name)
    v = st.variants[0]
    p = st.point(v, **POINTS.get(name, {"batch": 16384}))
    ins = st.make_inputs(np.random.default_rng(0), "normal", p)
    counts: dict[str, int] = {}
    with stage_rounds(gpu_runner, st, v, ins, p, counts) as once:
        benchmark.extra_info.update({"bytes": st.bytes_moved(p), "point": dict(p),
                                     "time": "CUDA events, L2 flushed, gated, throttled "
                                             "samples discarded"})
        benchmark.pedantic(once, rounds=50, warmup_rounds=5, iterations=1)
        benchmark.extra_info.update(counts)  # the warm-up rounds' samples counted too
