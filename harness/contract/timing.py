"""Sampling and statistics of kernel times.

The sampling loop is independent of CUDA: it takes a function returning one sample (µs,
measured by CUDA events on the GPU, by ``perf_counter`` for the NumPy references) and stops
when the relative noise of the median falls under the target, the sample cap is reached, or
the time budget ends.

Noise is the estimated standard error of the median over the median:
``1.2533 * sigma / sqrt(n) / median``, with ``sigma`` estimated robustly as ``IQR / 1.349``
(both constants are the normal distribution's), so a few outliers do not inflate it; and at
least the timer's quantisation, ``step / sqrt(12) / median`` (events tick in 32 ns steps:
a few-µs kernel's samples mostly share one, so its IQR can read 0).

A sample may carry the SM clock measured beside it (:class:`Sample`). Then the rule of
nvbench's cold measurement applies (``record_measurements`` in
``nvbench/detail/measure_cold.cu`` with ``gpu_frequency::has_throttled``; the default
threshold, 0.75 of the device's default SM clock, is ``m_throttle_threshold`` in
``nvbench/benchmark_base.cuh``): a sample taken while the clock was below
``throttle_fraction`` of the device's nominal clock is *throttled* and discarded, and
sampling goes on. Unlike nvbench there is no recovery pause (the wall-clock
budget is the limit instead), and when every sample was throttled they are all kept, since a
time measured at a low clock says more than no time at all; the Timing says which happened.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TimingConfig:
    """How to sample one point."""

    warmup: int = 3
    min_samples: int = 20
    max_samples: int = 2000
    target_noise_pct: float = 1.0
    budget_s: float = 2.0
    #: Flush L2 before each sample (cold); False times with warm caches (``--hot``).
    cold: bool = True
    #: Cold, and the run's own written lines written back inside the sample (``--drain``):
    #: the L2 is flushed again before the end event, and the flush's own time (its median
    #: alone, measured when the sampler is made, after the warm-up) is taken off each
    #: sample. Without it a cold sample ends while the run's last writes are still dirty in
    #: L2 (up to ~9 µs of write-back on the H100), which a byte floor counts as written.
    drain: bool = False
    #: Capture the launches once as a CUDA graph and time its replay (``--graph``).
    graph: bool = False
    #: A sample whose SM clock is below this fraction of the nominal clock is throttled
    #: and discarded (nvbench's default); 0 keeps every sample.
    throttle_fraction: float = 0.75
    #: Device memory held (bytes), allocated just before the point's buffers and freed
    #: after them, so that they land on other physical pages: a small memory-bound launch's
    #: time can depend on where its buffers lie (up to 5 % on the H200, README "How a time
    #: is measured"). Repeats vary it by round, the same for every unit of a round
    #: (``harness.engine.repeats.spacer``). The PyCUDA backend honours it, for a stage and a
    #: pipeline; a torch peer's tensors come from torch's own pool and are not moved.
    spacer_bytes: int = 0

    def __post_init__(self) -> None:
        if self.drain and not self.cold:
            raise ValueError("a drained sample is a cold one: drain needs cold")

    @property
    def l2(self) -> str:
        """The row's ``l2`` word: ``hot``, ``cold`` or ``drained``."""
        return "hot" if not self.cold else "drained" if self.drain else "cold"


@dataclass(frozen=True)
class Sample:
    """One sample with the SM clock measured beside it (what the GPU samplers return)."""

    us: float
    #: The SM clock measured right after the sample, in MHz.
    clock_mhz: float
    #: The device's nominal SM clock (its ``CLOCK_RATE`` attribute), in MHz.
    nominal_mhz: float
    #: Whether the start waited for the host to have enqueued the whole run (the gate);
    #: False where the work synchronises inside its launch, so host time can be inside.
    gated: bool = True
    #: Time taken off the events' interval to make ``us`` (a drained sample's trailing
    #: flush, its median alone), in µs; 0 for a plain sample.
    taken_off_us: float = 0.0


@dataclass(frozen=True)
class Clocks:
    """The SM clock over a point's samples, and what the throttle rule did, in MHz."""

    #: Median and lowest clock over the samples the times are made of.
    median_mhz: float
    min_mhz: float
    #: The device's nominal clock the rule compares against.
    nominal_mhz: float
    #: Samples taken below ``fraction`` of the nominal clock, and the lowest clock among
    #: them (None when there were none).
    throttled: int = 0
    throttled_min_mhz: float | None = None
    fraction: float = 0.75
    #: Whether the throttled samples were discarded (False: every sample was throttled,
    #: and all were kept).
    discarded: bool = True

    def note(self) -> str:
        """What the throttle rule did, for a row's ``reason`` ('' when nothing was
        throttled)."""
        if not self.throttled:
            return ""
        low = "" if self.throttled_min_mhz is None else \
            f", lowest {self.throttled_min_mhz:.0f} MHz"
        what = "discarded" if self.discarded else "all kept (no sample was above it)"
        return (f"{self.throttled} sample(s) below {100 * self.fraction:.0f} % of the "
                f"{self.nominal_mhz:.0f} MHz nominal clock{low}, {what}")


@dataclass(frozen=True)
class Timing:
    """Summary of the samples of one point, in microseconds."""

    median_us: float
    p10_us: float
    p90_us: float
    noise_pct: float
    samples: int
    converged: bool
    #: How the work was launched: ``stream`` (one call per kernel) or ``graph`` (one
    #: CUDA graph replay).
    launch: str = "stream"
    #: The SM clock over the samples (None where the backend measures no clock).
    clocks: Clocks | None = None
    #: Samples timed without the gate (the work synchronised inside its launch): their
    #: events can hold host time.
    ungated: int = 0
    #: What each sample had taken off its events' interval (``Sample.taken_off_us``: a
    #: drained sample's flush), in µs; 0 where nothing was.
    taken_off_us: float = 0.0


#: The step event times are quantised to: 32 ns, the finest step the H100's and H200's
#: events were seen to take (every committed H200 time is a multiple of it). In µs. The
#: quantisation floor never takes a coarser step than this: a gap between two sample values
#: larger than it is the samples' spread (an outlier), not the timer's step. (A GPU whose
#: events tick more coarsely would have its floor read low: the harness knows the H100's
#: and H200's alone.)
EVENT_STEP_US = 0.032


def timer_step(samples: np.ndarray) -> float:
    """The step the samples are quantised to, in their unit: the smallest gap between two
    distinct values, at most EVENT_STEP_US (which it is where every sample is the same, or
    where the values that differ lie far apart)."""
    values = np.unique(samples)
    if values.size < 2:
        return EVENT_STEP_US
    return min(float(np.diff(values).min()), EVENT_STEP_US)


def _noise(samples: np.ndarray) -> tuple[float, bool]:
    """The relative standard error of the median, in percent (:func:`noise_pct`), and
    whether it is the quantisation's floor alone (:func:`at_floor`), from one pass over
    the samples."""
    med = float(np.median(samples))
    if samples.size < 2 or med <= 0:
        return math.inf, False
    q75, q25 = np.percentile(samples, [75, 25])
    se = 1.2533 * (q75 - q25) / 1.349 / math.sqrt(samples.size)
    floor = timer_step(samples) / math.sqrt(12)  # a uniform error over one step
    return float(100.0 * max(se, floor) / med), se <= floor


def noise_pct(samples: np.ndarray) -> float:
    """Relative standard error of the median, in percent: robust sigma from the IQR, and
    never below the timer's quantisation: where most samples share one step the IQR reads
    0, yet the median is not known finer than that step."""
    return _noise(samples)[0]


def at_floor(samples: np.ndarray) -> bool:
    """Whether the noise is the quantisation's floor alone: more samples cannot lower it,
    so a target below it is met as well as the timer allows."""
    return _noise(samples)[1]


def _converged(samples: np.ndarray, target: float) -> tuple[float, bool]:
    """The samples' noise (%), and whether it is strictly under the target or (a target
    above 0) at the timer's floor."""
    nz, floor = _noise(samples)
    return nz, nz < target or (target > 0 and floor)


def summarize(samples: list[float] | np.ndarray, target_noise_pct: float = 1.0) -> Timing:
    """Median, p10, p90 and noise of the samples."""
    a = np.asarray(samples, dtype=np.float64)
    if a.size == 0:
        raise ValueError("no samples")
    nz, converged = _converged(a, target_noise_pct)
    return Timing(float(np.median(a)), float(np.percentile(a, 10)),
                  float(np.percentile(a, 90)), nz, int(a.size), bool(converged))


def throttled(s: Sample, fraction: float) -> bool:
    """Whether a sample ran below ``fraction`` of the nominal clock (nvbench's
    ``has_throttled``)."""
    return s.clock_mhz < fraction * s.nominal_mhz


def measure(sample: Callable[[], float | Sample], cfg: TimingConfig,
            clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Call ``sample`` until the median's noise is under target, or the cap or budget ends.

    Throttled samples (see the module's docstring) are set aside: they count against the
    sample cap and the budget, not towards the noise target or ``min_samples``.
    Warm-up calls are the caller's job (they run outside the timed region).
    """
    kept: list[float | Sample] = []
    low: list[Sample] = []
    start = clock()
    while True:
        s = sample()
        if isinstance(s, Sample) and throttled(s, cfg.throttle_fraction):
            low.append(s)
            if len(kept) + len(low) >= cfg.max_samples or clock() - start > cfg.budget_s:
                break
            continue
        kept.append(s)
        n = len(kept) + len(low)
        if n >= cfg.max_samples:
            break
        if len(kept) >= cfg.min_samples and len(kept) % 5 == 0:
            if _converged(np.asarray([_us(x) for x in kept]), cfg.target_noise_pct)[1]:
                break
            if clock() - start > cfg.budget_s:
                break
    return _summary(kept, low, cfg)


def _us(s: float | Sample) -> float:
    return s.us if isinstance(s, Sample) else float(s)


def _summary(kept: list[float | Sample], low: list[Sample], cfg: TimingConfig) -> Timing:
    """The Timing of the kept samples, with their clocks and what was set aside."""
    used = kept or list(low)  # every sample throttled: keep them all, and say so
    t = summarize([_us(x) for x in used], cfg.target_noise_pct)
    if len(used) < min(cfg.min_samples, cfg.max_samples):  # the budget ended among discards
        t = dataclasses.replace(t, converged=False)
    clocked = [x for x in used if isinstance(x, Sample)]
    if not clocked:
        return t
    t = dataclasses.replace(t, ungated=sum(not x.gated for x in clocked),
                            taken_off_us=max(x.taken_off_us for x in clocked))
    mhz = np.array([x.clock_mhz for x in clocked])
    return dataclasses.replace(t, clocks=Clocks(
        float(np.median(mhz)), float(mhz.min()), clocked[-1].nominal_mhz, len(low),
        min(x.clock_mhz for x in low) if low else None, cfg.throttle_fraction, bool(kept)))
