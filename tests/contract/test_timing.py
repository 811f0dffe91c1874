"""The sampling loop and its statistics."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pytest

from harness.contract import timing
from harness.contract.timing import TimingConfig


def test_summary_statistics() -> None:
    t = timing.summarize(list(range(1, 101)))
    assert t.median_us == 50.5 and t.samples == 100
    assert abs(t.p10_us - 10.9) < 1e-9 and abs(t.p90_us - 90.1) < 1e-9


def test_noise_formula() -> None:
    """Spread samples: the IQR's standard error of the median, far above the quantisation
    floor of their finest gap."""
    a = np.random.default_rng(1).normal(10.0, 0.5, 100)
    q75, q25 = np.percentile(a, [75, 25])
    expect = 100 * 1.2533 * (q75 - q25) / 1.349 / np.sqrt(a.size) / np.median(a)
    assert 100 * timing.timer_step(a) / np.sqrt(12) / np.median(a) < expect
    assert abs(timing.noise_pct(a) - expect) < 1e-12


def test_noise_is_never_below_the_timers_step() -> None:
    """Event times in 32 ns steps, most of them on one step (a 3.84 µs kernel's): the IQR
    reads 0, the noise is the quantisation's, 32 ns / sqrt(12) of the median; every sample
    on one step takes the events' step; a step found in the samples wins over it."""
    step = 0.032
    a = np.array([120] * 16 + [119, 121, 122, 118]) * step
    q75, q25 = np.percentile(a, [75, 25])
    assert q75 == q25
    assert timing.timer_step(a) == pytest.approx(step)
    assert timing.noise_pct(a) == pytest.approx(100 * step / np.sqrt(12) / (120 * step))
    same = np.full(20, 3.84)
    assert timing.noise_pct(same) == pytest.approx(
        100 * timing.EVENT_STEP_US / np.sqrt(12) / 3.84)
    # One outlier far from the rest is spread, not the timer's step: the floor stays at
    # the events' step (a gap of 1.17 µs taken for the step read 10 % noise).
    outlier = np.array([3.328] * 99 + [4.5])
    assert timing.timer_step(outlier) == timing.EVENT_STEP_US
    assert timing.noise_pct(outlier) == pytest.approx(
        100 * timing.EVENT_STEP_US / np.sqrt(12) / 3.328)


def test_one_step_apart_is_not_a_change() -> None:
    """Two rows of a few-µs kernel one 32 ns step apart, each with its samples on one step:
    compare's default rule cannot call that slower (with a noise of 0 it would have: the
    intervals had no width)."""
    from harness.results import verdict

    step = 0.032
    old = timing.summarize(np.array([100] * 20) * step)
    new = timing.summarize(np.array([102] * 20) * step)  # 2 % slower: two steps
    d = verdict.decide(verdict.Side(old.median_us, old.noise_pct / 100),
                       verdict.Side(new.median_us, new.noise_pct / 100),
                       verdict.PRESETS["default"], 0.02)
    assert d.verdict != verdict.SLOWER
    zero = verdict.decide(verdict.Side(old.median_us, 0.0), verdict.Side(new.median_us, 0.0),
                          verdict.PRESETS["default"], 0.02)
    assert zero.verdict == verdict.SLOWER  # what a noise of 0 said


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


def test_noise_is_infinite_for_one_sample_or_a_zero_median() -> None:
    """One sample says nothing about its spread, and a zero median nothing relative: the
    noise is infinite (never converged), not zero or a division by zero."""
    assert timing.noise_pct(np.array([5.0])) == math.inf
    assert timing.noise_pct(np.zeros(10)) == math.inf
    assert not timing.summarize([5.0]).converged
    with pytest.raises(ValueError, match="no samples"):
        timing.summarize([])


def test_converged_means_strictly_under_the_target() -> None:
    """Noise equal to the target is not under it: a target of 0 never converges."""
    spread = np.random.default_rng(2).normal(10.0, 0.5, 40)
    t = timing.summarize(spread, target_noise_pct=1.0)
    assert t.converged
    assert not timing.summarize(spread, target_noise_pct=t.noise_pct).converged
    assert not timing.summarize([10.0] * 20, target_noise_pct=0.0).converged


def test_a_target_below_the_timers_floor_is_met_at_the_floor() -> None:
    """Samples on one step cannot get a noise under the quantisation's floor however many
    are taken: a target below it (a few-µs kernel at --max-noise 0.1) is met there, not
    sampled to the cap; a target of 0 still never converges."""
    same = [3.84] * 20
    floor = timing.noise_pct(np.array(same))
    assert floor > 0.1 and timing.at_floor(np.array(same))
    assert timing.summarize(same, target_noise_pct=0.1).converged
    t = timing.measure(lambda: 3.84, TimingConfig(target_noise_pct=0.1, max_samples=500,
                                                  budget_s=1e9))
    assert t.samples == TimingConfig().min_samples and t.converged
    spread = np.random.default_rng(3).normal(10.0, 1.0, 40)
    assert not timing.at_floor(spread)


def test_the_noise_is_looked_at_every_fifth_kept_sample() -> None:
    """Past ``min_samples`` the stopping rule is checked only at multiples of five kept
    samples: quiet samples with a minimum of 21 stop at 25."""
    t = timing.measure(lambda: 10.0, TimingConfig(min_samples=21))
    assert t.samples == 25 and t.converged


def test_the_budget_ends_only_once_exceeded() -> None:
    """A run whose clock stands exactly at the budget goes on (to the cap)."""
    ticks = itertools.chain([0.0], itertools.repeat(5.0))
    t = timing.measure(lambda: 10.0, TimingConfig(target_noise_pct=0.0, max_samples=40,
                                                  budget_s=5.0),
                       clock=lambda: next(ticks))
    assert t.samples == 40


def test_a_cap_below_the_minimum_is_not_a_failure_to_converge() -> None:
    """Where ``max_samples`` is under ``min_samples``, reaching the cap with every sample
    kept is judged by the noise alone."""
    t = timing.measure(lambda: 10.0, TimingConfig(max_samples=10))
    assert t.samples == 10 and t.converged


def test_ungated_samples_are_counted() -> None:
    """Samples timed without the gate (host time may be inside) are counted on the
    Timing."""
    flags = itertools.cycle([True, False, True, True])
    t = timing.measure(lambda: timing.Sample(10.0, NOMINAL, NOMINAL, gated=next(flags)),
                       TimingConfig())
    assert t.samples == 20 and t.ungated == 5


def test_what_a_drained_sample_took_off_is_kept_on_the_timing() -> None:
    t = timing.measure(lambda: timing.Sample(25.0, NOMINAL, NOMINAL, taken_off_us=70.5),
                       TimingConfig())
    assert t.median_us == 25.0 and t.taken_off_us == 70.5
    plain = timing.measure(lambda: timing.Sample(25.0, NOMINAL, NOMINAL), TimingConfig())
    assert plain.taken_off_us == 0.0


def test_a_note_without_a_lowest_clock_names_none() -> None:
    """Throttled samples whose lowest clock is unknown are reported without one."""
    c = timing.Clocks(1900.0, 1800.0, NOMINAL, throttled=2)
    assert c.note() == "2 sample(s) below 75 % of the 1980 MHz nominal clock, discarded"


def test_a_timing_holds_plain_python_numbers() -> None:
    """summarize gives Python floats and bools, not NumPy scalars: a Timing serialises as
    JSON and ``converged is False`` means what it says."""
    t = timing.summarize([10.0, 10.5, 11.0, 9.5, 10.2, 10.1])
    assert type(t.noise_pct) is float and type(t.converged) is bool
    json.dumps(dataclasses.asdict(t))
