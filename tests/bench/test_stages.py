"""pytest-benchmark regression tracking of every stage on the GPU (marked ``gpu``).

Each round is one launch and a stream synchronisation, timed by pytest-benchmark's clock;
the harness's own event timings are in ``harness bench``. Save a baseline, then compare:

    pytest tests/bench -m gpu --benchmark-enable --benchmark-autosave
    pytest tests/bench -m gpu --benchmark-enable --benchmark-compare \\
        --benchmark-compare-fail=median:10%

The second run fails when a stage's median is more than 10 % slower than the saved one
(pick the percentage above the run-to-run noise that ``--benchmark-compare`` shows).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.contract import registry

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


@pytest.mark.parametrize("name", STAGES)
def test_stage(benchmark, reg, gpu_runner, name: str) -> None:  # type: ignore[no-untyped-def]
    st = reg.get(name)
    v = st.variants[0]
    p = st.point(v, **POINTS.get(name, {"batch": 16384}))
    ins = st.make_inputs(np.random.default_rng(0), "normal", p)
    with gpu_runner.bound(st, v, ins, p) as launch:

        def once() -> None:
            launch()
            gpu_runner.stream.synchronize()

        benchmark.extra_info.update({"bytes": st.bytes_moved(p), "point": dict(p)})
        benchmark.pedantic(once, rounds=50, warmup_rounds=5, iterations=1)
