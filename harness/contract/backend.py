"""The backend contract: what the engine asks of a backend (pycuda, numpy, torch,
torch_compile), and what one run of a stage gives back.

One protocol for every backend and every kind of target: the engine validates and times
stages and pipelines through it, and knows nothing of how a backend runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from harness.contract.stage import Pipeline, Point, Stage, Variant
from harness.contract.timing import Timing, TimingConfig
from harness.errors import HarnessError


@dataclass(frozen=True)
class RunResult:
    """What one execution of a stage returned."""

    outputs: dict[str, np.ndarray]
    inputs_after: dict[str, np.ndarray] = field(default_factory=dict)
    #: Output -> how many bytes of the poisoned guard band past its end were overwritten.
    guard_damage: dict[str, int] = field(default_factory=dict)
    #: The outputs of the same run repeated on the same inputs under another poison (empty
    #: where the backend ran once): where an element differs from ``outputs``, the kernel
    #: left it unwritten (it held each run's poison) or is not deterministic.
    again: dict[str, np.ndarray] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """Runs and times stages on host inputs; ``backend`` is the name its CSV rows carry."""

    backend: str

    def run(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
            point: Point) -> RunResult:
        """One run of the stage (outputs poisoned before it where the backend can)."""

    def time(self, stage: Stage, variant: Variant, inputs: dict[str, np.ndarray],
             point: Point, cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """One checked run, then samples of the stage's time as ``cfg`` asks."""

    def is_oom(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the point did not fit in the backend's memory."""

    def pipeline(self, pipe: Pipeline, stages: Mapping[str, Stage],
                 inputs: Mapping[str, np.ndarray], point: Point, repeats: int, cold: bool,
                 warmup: int = 1, spacer_bytes: int = 0,
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[float]]]:
        """Run a pipeline ``warmup + 1 + repeats`` times: the first timed run's device
        outputs and host values, and each named interval's times over the repeats (µs).
        ``spacer_bytes`` of device memory are held while its buffers are allocated and used
        (:attr:`TimingConfig.spacer_bytes`). A backend that cannot run pipelines raises
        HarnessError saying so."""


def no_pipelines(pipe: Pipeline, backend: str) -> HarnessError:
    """The error of a backend that cannot run pipelines (streams of CUDA kernels)."""
    return HarnessError(f"{pipe.name} is a pipeline of GPU streams: only the pycuda backend "
                        f"runs it, not {backend}")
