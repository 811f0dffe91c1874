"""Timing pipelines (plugins that compose stages on two streams), and ``harness run``.

A backend's pipeline run gives the time of every named interval per repetition; here those
runs are sampled in chunks under the stages' own stopping rule (``contract.timing.measure``:
until the ``total`` interval's noise meets the target, or the sample cap or the budget
ends), and a run's timings become the seed's report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.contract.backend import Backend
from harness.contract.registry import Registry
from harness.contract.stage import Pipeline, Point, Stage
from harness.contract.timing import Timing, TimingConfig, measure, summarize
from harness.engine import sweep
from harness.engine.devices import open_gpu
from harness.engine.memory import GUARD
from harness.engine.targets import check_families, check_options, fixed_axes
from harness.engine.validate import nonfinite
from harness.errors import HarnessError, ValidationFailed
from harness.results.pipeline_rows import LABELS

#: The interval whose noise decides when a pipeline has been sampled enough.
TOTAL = "total"
#: Warm-up runs before a pipeline's first chunk; later chunks follow the checked run that
#: starts every chunk, and take one.
FIRST_WARMUP, LATER_WARMUP = 2, 1
#: The smallest chunk after the first (the stopping rule looks every 5 samples).
MIN_CHUNK = 5


@dataclass(frozen=True)
class PipelineTiming:
    """Per-interval timings of a pipeline's repetitions."""

    per_rep: dict[str, list[float]]
    #: T of the run (None where the host never learnt it: decided on the device).
    planes: int | None

    def summary(self) -> dict[str, Timing]:
        """Median, percentiles and noise of each interval."""
        return {k: summarize(v) for k, v in self.per_rep.items() if v}


@dataclass(frozen=True)
class PipelineRun:
    """A sampled pipeline: the first run's outputs and host values, and the timings."""

    outputs: dict[str, np.ndarray]
    host: dict[str, Any]
    timing: PipelineTiming
    #: The ``total`` interval's timing, as the stopping rule left it.
    total: Timing


class _Chunks:
    """Pipeline runs in chunks of repetitions, handed to ``measure`` one ``total`` sample
    at a time; each chunk is sized to what is left of the budget, at most doubling."""

    def __init__(self, run: Callable[[int, int], tuple[Any, Any, dict[str, list[float]]]],
                 cfg: TimingConfig, clock: Callable[[], float]) -> None:
        self.run, self.cfg, self.clock = run, cfg, clock
        self.per: dict[str, list[float]] = {}
        self.first: tuple[Any, Any] | None = None
        self.used = 0
        self.start = clock()

    def _size(self) -> int:
        n = self.used
        if n == 0:
            return self.cfg.min_samples
        per_rep_s = (self.clock() - self.start) / n
        left = int((self.cfg.budget_s - (self.clock() - self.start)) / max(per_rep_s, 1e-9))
        size = max(MIN_CHUNK, min(n, left))
        size = MIN_CHUNK * math.ceil(size / MIN_CHUNK)
        return max(1, min(size, self.cfg.max_samples - n))

    def sample(self) -> float:
        """The next ``total`` sample, running another chunk when the last one is used up."""
        if self.used == len(self.per.get(TOTAL, [])):
            warmup = FIRST_WARMUP if self.first is None else LATER_WARMUP
            outs, host, per = self.run(self._size(), warmup)
            if self.first is None:
                self.first = (outs, host)
            if not per.get(TOTAL):
                raise HarnessError(f"the pipeline measured no {TOTAL!r} interval")
            for k, v in per.items():
                self.per.setdefault(k, []).extend(v)
        self.used += 1
        return self.per[TOTAL][self.used - 1]


def sample(backend: Backend, pipe: Pipeline, stages: Mapping[str, Stage],
           inputs: Mapping[str, np.ndarray], point: Point, cfg: TimingConfig,
           clock: Callable[[], float] = time.perf_counter) -> PipelineRun:
    """Run the pipeline in chunks until the ``total`` interval's noise is under
    ``cfg.target_noise_pct``, or ``cfg.max_samples`` or ``cfg.budget_s`` is reached (the
    rule stages are timed by); the samples of every interval are cut to the ones used."""

    def run(repeats: int, warmup: int) -> tuple[Any, Any, dict[str, list[float]]]:
        return backend.pipeline(pipe, stages, inputs, point, repeats=repeats, cold=cfg.cold,
                                warmup=warmup, spacer_bytes=cfg.spacer_bytes)

    chunks = _Chunks(run, cfg, clock)
    total = measure(chunks.sample, cfg, clock)
    assert chunks.first is not None  # measure takes at least one sample
    outs, host = chunks.first
    per = {k: v[: total.samples] for k, v in chunks.per.items()}
    planes = host.get("planes")
    return PipelineRun(dict(outs), dict(host),
                       PipelineTiming(per, None if planes is None else int(planes)), total)


def report(point: Point, family: str, timing: PipelineTiming) -> list[str]:
    """The seed's report (``./spike_quant_gemm REPEATS BATCH``), one line each."""
    s = timing.summary()
    n = len(timing.per_rep[TOTAL])
    known = "" if timing.planes is None else f" T={timing.planes}"
    lines = [" ".join(f"{k}={v}" for k, v in point.items())
             + f" family={family}{known} repetitions={n}"]
    # The seed's intervals first, under its labels; then any other, under its own name.
    for k in [*(k for k in LABELS if k in s), *(k for k in s if k not in LABELS)]:
        if k != TOTAL:
            t, label = s[k], LABELS.get(k, k)
            mean = float(np.mean(timing.per_rep[k]))
            lines.append(f"{label}: mean {mean:.2f} us, median {t.median_us:.2f} us "
                         f"(p10 {t.p10_us:.2f}, p90 {t.p90_us:.2f}, noise {t.noise_pct:.2f}%)")
    tot = timing.per_rep[TOTAL]
    lines.append(f"Average time per repetition: {np.mean(tot):.2f} us "
                 f"(median {s[TOTAL].median_us:.2f} us, noise {s[TOTAL].noise_pct:.2f}%)")
    lines.append(f"Total time for {n} repetitions: {np.sum(tot) / 1000:.3f} ms")
    return lines


@dataclass(frozen=True)
class RunReport:
    """What ``harness run`` found: how many output checks passed, and the seed's report."""

    checks: int
    lines: list[str]


def run(reg: Registry, name: str, options: Mapping[str, str], family: str, repeats: int,
        hot: bool = False, device: int = 0) -> RunReport:
    """``harness run``: the pipeline once at the point of ``options`` (the first variant;
    every other axis at its default), its outputs checked against the chained references,
    then ``repeats`` timed repetitions. The inputs are ``default_rng(0)``'s, as the seed
    program's run is one; they are built only once the GPU is open and the point's memory
    estimate fits."""
    pipe = reg.pipeline(name)
    check_families([pipe], [family])
    check_options([pipe], options)
    v = pipe.variants[0]
    point = sweep.points(pipe, {}, fixed_axes(pipe.axes, options, v), v,  # type: ignore[arg-type]
                         default_sweep=False)[0]
    gpu = open_gpu(device)  # first: without a GPU, nothing is built
    if (refused := GUARD.refusal(gpu, pipe, point)) is not None:
        raise HarnessError(f"{name} at {', '.join(f'{k}={x}' for k, x in point.items())}: "
                           f"{refused}")
    ins = pipe.make_inputs(np.random.default_rng(0), family, point)
    if (bad := nonfinite(ins)) is not None:
        raise HarnessError(bad)
    outs, host, per_rep = gpu.pipeline(pipe, reg.stages, ins, point, repeats, not hot, 2)
    checks = pipe.check(ins, point, outs, host)
    bad_checks: Sequence[str] = [c.describe() for c in checks if not c.ok]
    if bad_checks:
        raise ValidationFailed(f"{name}: output check failed: {bad_checks[0]}")
    planes = host.get("planes")  # None where T is decided on the device
    return RunReport(len(checks), report(point, family, PipelineTiming(
        per_rep, None if planes is None else int(planes))))
