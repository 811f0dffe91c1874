"""The ``numpy`` backend: the stages' references, timed on the CPU.

What ``harness bench`` falls back to on a machine without a GPU, so that the sweep, the CSV
and the summary can be tried anywhere; its rows say ``backend=numpy`` and carry no GPU.
Its result *is* the reference, so the reference is checked here, by the check every
backend's reference goes through (``contract.handover.reference_problems``): a reference of
the wrong shape or dtype, or with a NaN, is a failed run, not an ``ok`` row.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.contract.backend import RunResult, no_pipelines
from harness.contract.handover import reference_problems
from harness.contract.stage import Pipeline, Point, Stage, Variant
from harness.contract.timing import Timing, TimingConfig, measure
from harness.errors import PluginError


class NumpyRunner:
    """Runs a stage's NumPy reference as if it were the kernel."""

    backend = "numpy"

    def run(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
            point: Point) -> RunResult:
        """The reference's outputs, cast to the declared output types; PluginError when the
        reference does not give what the stage declares."""
        ref = stage.expected(inputs, point, variant)
        problems = reference_problems(stage, point, ref)
        if problems:
            raise PluginError(f"plugin {stage.name}: {'; '.join(problems)}")
        specs = stage.outputs(point)
        return RunResult({k: np.asarray(ref[k]).astype(specs[k][1]) for k in specs},
                         {k: v for k, v in inputs.items()})

    def time(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
             point: Point, cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """Time the reference with ``perf_counter`` (warm-up calls outside the samples)."""
        result = self.run(stage, variant, inputs, point)
        for _ in range(cfg.warmup):
            stage.expected(inputs, point, variant)

        def sample() -> float:
            t0 = time.perf_counter()
            stage.expected(inputs, point, variant)
            return (time.perf_counter() - t0) * 1e6

        return result, measure(sample, cfg)

    def is_oom(self, exc: BaseException) -> bool:
        """Host memory exhaustion."""
        return isinstance(exc, MemoryError)

    def pipeline(self, pipe: Pipeline, stages: Mapping[str, Stage],
                 inputs: Mapping[str, np.ndarray], point: Point, repeats: int, cold: bool,
                 warmup: int = 1, spacer_bytes: int = 0,
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[float]]]:
        """Pipelines are streams of CUDA kernels: only the pycuda backend runs them."""
        raise no_pipelines(pipe, self.backend)
