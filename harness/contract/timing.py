"""Sampling and statistics of kernel times.

The sampling loop is independent of CUDA: it takes a function returning one sample (µs,
measured by CUDA events on the GPU, by ``perf_counter`` for the NumPy references) and stops
when the relative noise of the median falls under the target, the sample cap is reached, or
the time budget ends.

Noise is the estimated standard error of the median over the median:
``1.2533 * sigma / sqrt(n) / median``, with ``sigma`` estimated robustly as ``IQR / 1.349``
(both constants are the normal distribution's), so a few outliers do not inflate it.
"""

from __future__ import annotations

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
    #: Capture the launches once as a CUDA graph and time its replay (``--graph``).
    graph: bool = False


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


def noise_pct(samples: np.ndarray) -> float:
    """Relative standard error of the median, in percent (robust sigma from the IQR)."""
    n = samples.size
    med = float(np.median(samples))
    if n < 2 or med <= 0:
        return math.inf
    q75, q25 = np.percentile(samples, [75, 25])
    sigma = (q75 - q25) / 1.349
    return 100.0 * 1.2533 * sigma / math.sqrt(n) / med


def summarize(samples: list[float] | np.ndarray, target_noise_pct: float = 1.0) -> Timing:
    """Median, p10, p90 and noise of the samples."""
    a = np.asarray(samples, dtype=np.float64)
    if a.size == 0:
        raise ValueError("no samples")
    nz = noise_pct(a)
    return Timing(float(np.median(a)), float(np.percentile(a, 10)),
                  float(np.percentile(a, 90)), nz, int(a.size), nz < target_noise_pct)


def measure(sample: Callable[[], float], cfg: TimingConfig,
            clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Call ``sample`` until the median's noise is under target, or the cap or budget ends.

    Warm-up calls are the caller's job (they run outside the timed region).
    """
    samples: list[float] = []
    start = clock()
    while True:
        samples.append(float(sample()))
        n = len(samples)
        if n >= cfg.max_samples:
            break
        if n >= cfg.min_samples and n % 5 == 0:
            if noise_pct(np.asarray(samples)) < cfg.target_noise_pct:
                break
            if clock() - start > cfg.budget_s:
                break
    return summarize(samples, cfg.target_noise_pct)
