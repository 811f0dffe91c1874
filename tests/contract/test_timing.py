"""The sampling loop and its statistics."""

from __future__ import annotations

import itertools

import numpy as np

from harness.contract import timing
from harness.contract.timing import TimingConfig


def test_summary_statistics() -> None:
    t = timing.summarize(list(range(1, 101)))
    assert t.median_us == 50.5 and t.samples == 100
    assert abs(t.p10_us - 10.9) < 1e-9 and abs(t.p90_us - 90.1) < 1e-9


def test_noise_formula() -> None:
    a = np.array([9.0, 10.0, 10.0, 11.0] * 25)
    q75, q25 = np.percentile(a, [75, 25])
    expect = 100 * 1.2533 * (q75 - q25) / 1.349 / np.sqrt(a.size) / np.median(a)
    assert abs(timing.noise_pct(a) - expect) < 1e-12


def test_stops_early_on_quiet_samples() -> None:
    calls = itertools.count()
    t = timing.measure(lambda: 10.0 + 0.001 * (next(calls) % 3), TimingConfig())
    assert t.samples == TimingConfig().min_samples and t.converged


def test_noisy_samples_run_to_the_cap_or_budget() -> None:
    rng = np.random.default_rng(0)
    cfg = TimingConfig(max_samples=200, budget_s=1e9)
    t = timing.measure(lambda: float(rng.lognormal(3, 1.0)), cfg)
    assert t.samples == 200 and not t.converged
    clock = itertools.count()  # each call advances a fake clock by 1 s
    t = timing.measure(lambda: float(rng.lognormal(3, 1.0)),
                       TimingConfig(budget_s=30), clock=lambda: float(next(clock)))
    assert t.samples < 200 and not t.converged
