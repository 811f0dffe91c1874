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
