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


# -- the SM clock and the throttle rule --------------------------------------------------
NOMINAL = 1980.0


def clocked(times: list[float], mhz: list[float]):  # type: ignore[no-untyped-def]
    """A sampler replaying ``(time, clock)`` pairs, cycling; counts its calls."""
    pairs = itertools.cycle(zip(times, mhz, strict=True))

    def sample() -> timing.Sample:
        sample.calls += 1  # type: ignore[attr-defined]
        us, c = next(pairs)
        return timing.Sample(us, c, NOMINAL)

    sample.calls = 0  # type: ignore[attr-defined]
    return sample


def test_plain_samples_carry_no_clock() -> None:
    t = timing.measure(lambda: 10.0, TimingConfig())
    assert t.clocks is None


def test_clocks_of_unthrottled_samples_are_summarised_and_nothing_is_set_aside() -> None:
    mhz = [1980.0, 1970.0, 1960.0, 1500.0] * 5  # 1500 is above 75 % of 1980 (1485)
    t = timing.measure(clocked([10.0] * 20, mhz), TimingConfig())
    assert t.samples == 20 and t.clocks is not None
    assert (t.clocks.median_mhz, t.clocks.min_mhz, t.clocks.nominal_mhz) == \
        (1965.0, 1500.0, NOMINAL)
    assert t.clocks.throttled == 0 and t.clocks.note() == ""


def test_throttled_samples_are_discarded_and_sampling_goes_on() -> None:
    """Every fourth sample below the threshold, and ten times slower: the times and clocks
    are those of the others, and twenty of those are still taken."""
    sample = clocked([10.0, 10.0, 10.0, 100.0], [1980.0, 1980.0, 1980.0, 1000.0])
    t = timing.measure(sample, TimingConfig())
    assert t.samples == 20 and sample.calls == 26  # 20 kept, 6 throttled on the way
    assert t.median_us == t.p90_us == 10.0 and t.converged
    assert t.clocks is not None and t.clocks.min_mhz == 1980.0
    assert (t.clocks.throttled, t.clocks.discarded, t.clocks.throttled_min_mhz) == \
        (6, True, 1000.0)
    assert t.clocks.note() == ("6 sample(s) below 75 % of the 1980 MHz nominal clock, "
                               "lowest 1000 MHz, discarded")


def test_the_threshold_is_strict_and_stated() -> None:
    at = 0.75 * NOMINAL
    t = timing.measure(clocked([10.0], [at]), TimingConfig())
    assert t.clocks is not None and t.clocks.throttled == 0  # at the threshold: kept
    t = timing.measure(clocked([10.0], [at - 1]), TimingConfig(throttle_fraction=0.5))
    assert t.clocks is not None and t.clocks.throttled == 0
    t = timing.measure(clocked([10.0, 10.0], [NOMINAL, 0.85 * NOMINAL]),
                       TimingConfig(throttle_fraction=0.9))
    assert t.clocks is not None and t.clocks.throttled == 19  # one between each kept two
    assert "below 90 % of the 1980 MHz" in t.clocks.note()


def test_a_fraction_of_zero_keeps_every_sample() -> None:
    t = timing.measure(clocked([10.0], [1.0]), TimingConfig(throttle_fraction=0.0))
    assert t.samples == 20 and t.clocks is not None
    assert t.clocks.throttled == 0 and t.clocks.min_mhz == 1.0


def test_when_every_sample_is_throttled_all_are_kept_and_the_cap_still_holds() -> None:
    sample = clocked([20.0, 21.0], [900.0, 800.0])
    t = timing.measure(sample, TimingConfig(max_samples=30, budget_s=1e9))
    assert sample.calls == 30 and t.samples == 30 and t.median_us == 20.5
    assert t.clocks is not None and not t.clocks.discarded and t.clocks.throttled == 30
    assert (t.clocks.median_mhz, t.clocks.min_mhz) == (850.0, 800.0)
    assert t.clocks.note() == ("30 sample(s) below 75 % of the 1980 MHz nominal clock, "
                               "lowest 800 MHz, all kept (no sample was above it)")


def test_throttled_samples_count_against_the_cap_and_the_budget() -> None:
    sample = clocked([10.0, 10.0], [NOMINAL, 900.0])  # every other sample throttled
    t = timing.measure(sample, TimingConfig(max_samples=25, target_noise_pct=0.0,
                                            budget_s=1e9))
    assert sample.calls == 25 and t.samples == 13 and t.clocks is not None
    assert t.clocks.throttled == 12
    clock = itertools.count()  # each call advances a fake clock by 1 s
    sample = clocked([10.0], [900.0])
    t = timing.measure(sample, TimingConfig(budget_s=5), clock=lambda: float(next(clock)))
    assert sample.calls < 10 and t.samples == sample.calls and not t.converged
