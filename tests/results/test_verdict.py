"""The verdict on one point measured twice: each branch of the rule, the presets, the clocks."""

from __future__ import annotations

import random

import pytest

from harness.results.verdict import (
    AMBIGUOUS,
    FASTER,
    PRESETS,
    SAME,
    SLOWER,
    Side,
    decide,
)

DEFAULT = PRESETS["default"]


def side(t: float, noise_pct: float = 0.1, spread_pct: float | None = 2.0, **kw: float) -> Side:
    """A side at ``t`` µs with its noise and a p10-p90 spread of ±``spread_pct`` % (or none)."""
    half = None if spread_pct is None else t * spread_pct / 100
    spread = None if half is None else (t - half, t + half)
    return Side(t, noise_pct / 100, spread, **kw)  # type: ignore[arg-type]


def test_presets_are_nvbench_compare_robusts() -> None:
    """gap, center, overlap and ceiling as NVIDIA/nvbench's nvbench_compare_robust.py sets
    them (clear_gap_relative, same_center_relative, same_overlap_fraction,
    same_relative_dispersion_ceiling); z is ours."""
    got = {k: (p.gap, p.center, p.overlap, p.ceiling, p.z) for k, p in PRESETS.items()}
    assert got == {"default": (0.005, 0.005, 0.5, 0.02, 3.0),
                   "strict": (0.01, 0.0025, 0.75, 0.01, 4.0),
                   "permissive": (0.0025, 0.01, 0.25, 0.05, 2.0)}


@pytest.mark.parametrize("new, verdict, words", [
    (110.0, SLOWER, "slower by 10.0 %"),
    (90.0, FASTER, "faster by 10.0 %"),
    (101.0, SAME, "less than the 2 % threshold"),  # clear of the noise, but small
    (100.2, SAME, "within 0.5 %"),
])
def test_clear_changes_and_the_threshold(new: float, verdict: str, words: str) -> None:
    d = decide(side(100.0, 0.02), side(new, 0.02), DEFAULT, 0.02)  # intervals ±0.06 %
    assert d.verdict == verdict and words in d.reason, d
    assert d.change_pct == pytest.approx(new - 100.0)


def test_a_change_inside_the_noise_is_ambiguous() -> None:
    """+10 % with 3 % noise a side: the intervals (±9 %) touch; nothing is claimed."""
    d = decide(side(100.0, 3.0), side(110.0, 3.0), DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "within the noise" in d.reason


def test_between_same_and_the_threshold_without_a_clear_gap_is_ambiguous() -> None:
    d = decide(side(100.0, 0.5), side(101.0, 0.5), DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "more than the 0.5 % that is the same" in d.reason


def test_too_noisy_to_call_the_same() -> None:
    """Identical medians, but 3 % noise: above the default 2 % ceiling, under permissive's 5 %."""
    old, new = side(100.0, 3.0, 50.0), side(100.0, 3.0, 50.0)
    d = decide(old, new, DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "above the 2 % ceiling" in d.reason
    assert decide(old, new, PRESETS["permissive"], 0.02).verdict == SAME


def test_spreads_that_hardly_overlap_are_not_the_same() -> None:
    """Medians 0.4 % apart but the p10-p90 spreads only 0.2 % wide: they overlap by nothing."""
    d = decide(side(100.0, 0.5, 0.1), side(100.4, 0.5, 0.1), DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "p10-p90 spreads overlap by 0 %" in d.reason
    # without spreads (pipeline rows) the intervals overlap, and that is the same
    d = decide(side(100.0, 0.5, None), side(100.4, 0.5, None), DEFAULT, 0.02)
    assert d.verdict == SAME and "intervals overlap" in d.reason


def test_strict_asks_for_more_evidence_than_permissive() -> None:
    """+4 % with 0.5 % noise a side: clear at 2 standard errors, not at 4."""
    old, new = side(100.0, 0.5), side(104.0, 0.5)
    got = {k: decide(old, new, p, 0.02).verdict for k, p in PRESETS.items()}
    assert got == {"permissive": SLOWER, "default": SLOWER, "strict": AMBIGUOUS}


def test_a_slowdown_the_clock_explains_is_throttled() -> None:
    """20 % slower in time at a clock 1/1.2 lower: the same cycles, so no change holds."""
    old = side(100.0, clock_mhz=1980.0)
    new = side(120.0, clock_mhz=1650.0, clock_min_mhz=1410.0, throttled=37)
    d = decide(old, new, DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and d.reason.startswith("throttled: ")
    assert "1980 MHz before, 1650 MHz now" in d.reason
    assert "(37 samples throttled now, lowest 1410 MHz)" in d.reason
    assert "throttled before" not in d.reason  # the old side's samples were not


def test_a_clear_slowdown_in_time_under_the_threshold_in_cycles_is_throttled() -> None:
    """100 µs at 1980 MHz, then 103 µs at 1940 MHz: +3 % in time and clear of the noise in
    cycles too, but only +0.9 % in cycles, under the 2 % threshold. A change must pass the
    threshold in cycles as well as in time, so this is throttled, not slower."""
    d = decide(side(100.0, 0.02, clock_mhz=1980.0), side(103.0, 0.02, clock_mhz=1940.0),
               DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and d.reason.startswith("throttled: "), d
    assert "slower by 3.0 % in time but +0.9 % in cycles" in d.reason

def test_a_slowdown_that_holds_in_cycles_is_slower() -> None:
    d = decide(side(100.0, clock_mhz=1980.0), side(120.0, clock_mhz=1980.0), DEFAULT, 0.02)
    assert d.verdict == SLOWER and "holds in clock cycles too (+20.0 %)" in d.reason
    # a partly throttled run whose slowdown still holds in cycles: slower
    d = decide(side(100.0, clock_mhz=1980.0), side(130.0, clock_mhz=1800.0), DEFAULT, 0.02)
    assert d.verdict == SLOWER and "holds in clock cycles" in d.reason


def test_clocks_on_one_side_only_leave_time_to_decide() -> None:
    d = decide(side(100.0), side(120.0, clock_mhz=1650.0), DEFAULT, 0.02)
    assert d.verdict == SLOWER and "only one row recorded the SM clock" in d.reason
    d = decide(side(100.0), side(120.0), DEFAULT, 0.02)
    assert d.verdict == SLOWER and "neither row recorded the SM clock" in d.reason


def test_the_rule_is_symmetric() -> None:
    """Swapping OLD and NEW swaps faster and slower, and keeps same and ambiguous."""
    rng = random.Random(7)
    mirror = {FASTER: SLOWER, SLOWER: FASTER, SAME: SAME, AMBIGUOUS: AMBIGUOUS}
    seen = set()
    for _ in range(500):
        a = side(100.0, rng.uniform(0, 3), rng.uniform(0.1, 20))
        b = side(100.0 * rng.uniform(0.9, 1.1), rng.uniform(0, 3), rng.uniform(0.1, 20))
        d, e = decide(a, b, DEFAULT, 0.02), decide(b, a, DEFAULT, 0.02)
        assert e.verdict == mirror[d.verdict], (a, b, d, e)
        seen.add(d.verdict)
    assert seen == {FASTER, SLOWER, SAME, AMBIGUOUS}  # every branch was exercised


@pytest.mark.parametrize("old, new, verdict, change, reason", [
    (side(100.0, 0.02), side(101.0, 0.02), SAME, 1.0,
     "changed by +1.00 %, clearly (intervals 0.88 % apart), but less than the 2 % threshold"),
    (side(100.0), side(120.0), SLOWER, 20.0,
     "slower by 20.0 %: the intervals (±3 standard errors) are 19 % apart, clear of the "
     "0.5 % gap; in time only (neither row recorded the SM clock)"),
    (side(100.0, clock_mhz=1900.0), side(80.0), FASTER, -20.0,
     "faster by 20.0 %: the intervals (±3 standard errors) are 24 % apart, clear of the "
     "0.5 % gap; in time only (only one row recorded the SM clock)"),
    (side(100.0, clock_mhz=1980.0), side(120.0, clock_mhz=1980.0), SLOWER, 20.0,
     "slower by 20.0 %: the intervals (±3 standard errors) are 19 % apart, clear of the "
     "0.5 % gap; it holds in clock cycles too (+20.0 %)"),
    (Side(100.0, 0.001, None, 1980.0, 1700.0, 5), Side(120.0, 0.001, None, 1600.0, None, 37),
     AMBIGUOUS, 20.0,
     "throttled: the SM clock was 1980 MHz before, 1600 MHz now (5 samples throttled before, "
     "lowest 1700 MHz) (37 samples throttled now); slower by 20.0 % in time but -3.0 % in "
     "cycles, which is not a change that holds"),
    (side(110.0, 3.0), side(100.0, 3.0), AMBIGUOUS, -100 / 11,
     "9.1 % faster, but within the noise: the intervals (±3 standard errors) are not 0.5 % "
     "apart"),
    (side(101.0, 0.5), side(100.0, 0.5), AMBIGUOUS, -100 / 101,
     "1.0 % faster: more than the 0.5 % that is the same, not clear of the noise"),
    (Side(100.0, 0.005, (99.0, 101.0)), Side(100.4, 0.005, (100.5, 102.5)), AMBIGUOUS, 0.4,
     "the p10-p90 spreads overlap by 25 % of the narrower, less than 50 %"),
    (side(100.0, 7.5, 50.0), side(100.0, 7.5, 50.0), AMBIGUOUS, 0.0,
     "too noisy to call the same: noise 7.5 %, above the 2 % ceiling"),
    (side(100.0, 0.02), side(100.2, 0.02), SAME, 0.2,
     "medians +0.20 % apart, within 0.5 %; p10-p90 spreads overlap by 95 %; noise 0.02 %"),
])
def test_each_branch_s_change_and_reason(old: Side, new: Side, verdict: str, change: float,
                                         reason: str) -> None:
    """The change of the medians in %, and a reason that says which test decided it."""
    d = decide(old, new, DEFAULT, 0.02)
    assert (d.verdict, d.reason) == (verdict, reason)
    assert d.change_pct == pytest.approx(change)


def test_each_bound_holds_at_its_value() -> None:
    """A clear gap of at least ``gap``, medians at least ``threshold`` apart (in time and in
    cycles), within ``center``, spreads overlapping by at least ``overlap`` and noise not
    above ``ceiling``: each bound itself passes."""
    # a gap of exactly 0.5 % between two exact medians, at a 0.5 % threshold
    assert decide(Side(100.0, 0.0), Side(100.5, 0.0), DEFAULT, 0.005).verdict == SLOWER
    assert decide(Side(100.5, 0.0), Side(100.0, 0.0), DEFAULT, 0.005).verdict == FASTER
    # medians exactly 2 % apart (over the faster one), clear: a change, in cycles too
    assert decide(side(100.0, 0.02), side(102.0, 0.02), DEFAULT, 0.02).verdict == SLOWER
    d = decide(side(100.0, 0.02, clock_mhz=1000.0), side(102.0, 0.02, clock_mhz=1000.0),
               DEFAULT, 0.02)
    assert d.verdict == SLOWER and "holds in clock cycles too (+2.0 %)" in d.reason
    assert decide(side(102.0, 0.02), side(100.0, 0.02), DEFAULT, 0.02).verdict == FASTER
    # exactly 2 % apart within the noise: past the threshold, so "within the noise"
    d = decide(side(100.0, 3.0), side(102.0, 3.0), DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "within the noise" in d.reason
    # medians exactly 0.5 % apart without a clear gap: within center
    assert decide(side(100.0, 0.5), side(100.5, 0.5), DEFAULT, 0.02).verdict == SAME
    # spreads overlapping by exactly half the narrower one
    d = decide(Side(100.0, 0.005, (99.0, 100.5)), Side(100.2, 0.005, (100.0, 101.0)),
               DEFAULT, 0.02)
    assert d.verdict == SAME and "spreads overlap by 50 %" in d.reason
    # noise exactly at the 2 % ceiling
    assert decide(side(100.0, 2.0, 50.0), side(100.0, 2.0, 50.0), DEFAULT, 0.02).verdict == SAME


def test_the_overlap_is_over_the_narrower_spread_and_the_noise_the_larger() -> None:
    """A narrow spread inside a wide one is covered whole; a spread of width 0 is covered
    or not; the noisier side decides the ceiling; a side without a spread leaves the
    intervals to compare."""
    d = decide(Side(100.0, 0.005, (98.0, 102.0)), Side(100.25, 0.005, (100.0, 100.5)),
               DEFAULT, 0.02)
    assert d.verdict == SAME and "spreads overlap by 100 %" in d.reason
    d = decide(Side(100.0, 0.005, (100.0, 100.0)), Side(100.2, 0.005, (99.0, 101.0)),
               DEFAULT, 0.02)
    assert d.verdict == SAME and "spreads overlap by 100 %" in d.reason
    d = decide(Side(100.0, 0.005, (100.0, 100.0)), Side(100.2, 0.005, (100.1, 101.0)),
               DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "spreads overlap by 0 %" in d.reason
    d = decide(side(100.0, 3.0, 50.0), side(100.0, 0.1, 50.0), DEFAULT, 0.02)
    assert d.verdict == AMBIGUOUS and "noise 3 %, above the 2 % ceiling" in d.reason
    d = decide(side(100.0, 0.5), side(100.2, 0.5, None), DEFAULT, 0.02)
    assert d.verdict == SAME and "; intervals overlap by" in d.reason


@pytest.mark.parametrize("old, new, preset, verdict, change, reason", [
    (side(100.0, 7.5, 50.0), side(100.2, 7.5, 50.0), "default", AMBIGUOUS, 0.2,
     "too noisy to call the same: noise 7.5 %, above the 2 % ceiling"),
    (side(100.0, 0.2), side(100.9, 0.2), "permissive", SAME, 0.9,
     "medians +0.90 % apart, within 1 %; p10-p90 spreads overlap by 78 %; noise 0.2 %"),
    (Side(120.0, 0.001, None, 1500.0), Side(100.0, 0.001, None, 1980.0), "default", AMBIGUOUS,
     -100 / 6, "throttled: the SM clock was 1500 MHz before, 1980 MHz now; faster by 16.7 % "
     "in time but +10.0 % in cycles, which is not a change that holds"),
    (side(100.0, 0.5), side(101.0, 0.5), "default", AMBIGUOUS, 1.0,
     "1.0 % slower: more than the 0.5 % that is the same, not clear of the noise"),
])
def test_more_changes_and_reasons(old: Side, new: Side, preset: str, verdict: str,
                                  change: float, reason: str) -> None:
    """A faster change that the clock explains, a slowdown short of a change, a change of a
    point within permissive's 1 %, each with its change in %."""
    d = decide(old, new, PRESETS[preset], 0.02)
    assert (d.verdict, d.reason) == (verdict, reason)
    assert d.change_pct == pytest.approx(change)
