"""Repeats of a point: the rotated order, and one row from its repeats (the median repeat
as measured, its noise widened to the repeats' spread, a failure never averaged away)."""

from __future__ import annotations

import math
import statistics

import pytest

from harness.engine.repeats import MEDIAN_SE, SPACERS_MB, combine, schedule, spacer


def test_each_unit_takes_each_place_once_in_as_many_rounds() -> None:
    order = schedule(["a", "b", "c"], 3)
    assert [r for r, _ in order] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    rounds = [[u for r, u in order if r == k] for k in range(3)]
    assert rounds == [["c", "a", "b"], ["b", "c", "a"], ["a", "b", "c"]]
    for place in range(3):
        assert sorted(rnd[place] for rnd in rounds) == ["a", "b", "c"]
    assert schedule(["a", "b"], 1) == [(0, "b"), (0, "a")]
    # Fewer rounds than units: the starts spread over the list (7, 5, 2 of 8).
    starts = [u for r, u in schedule(list(range(8)), 3)][::8]
    assert starts == [7, 5, 2]


@pytest.mark.parametrize(("n", "repeats"), [(2, 3), (2, 5), (3, 4), (3, 5), (4, 7)])
def test_first_places_that_cannot_be_shared_go_to_the_end_of_the_list(n, repeats) -> None:  # type: ignore[no-untyped-def]
    """A point lists its peers, then its own kernel: where the rounds are no multiple of
    the units, the last unit (ours) is first at least as often as any other, every unit is
    first in some round, and no unit is first more than once more than another."""
    firsts = [u for r, u in schedule(list(range(n)), repeats)][::n]
    counts = [firsts.count(u) for u in range(n)]
    assert counts[-1] == max(counts) and min(counts) >= 1 and max(counts) - min(counts) <= 1
    assert counts[0] == min(counts)


def _row(median: float, noise: float = 0.1, **kw: object) -> dict[str, object]:
    return {"status": "ok", "reason": "", "median_us": median, "noise_pct": noise,
            "p10_us": median - 1, "gbps": 1e3 / median, **kw}


def test_the_median_repeat_is_kept_as_measured_its_noise_widened() -> None:
    rows = [_row(1515.0, samples=20), _row(1446.0, samples=21), _row(1450.0, samples=22)]
    got = combine(rows)
    assert got["median_us"] == 1450.0 and got["samples"] == 22  # one run's row, whole
    assert got["gbps"] == pytest.approx(1e3 / 1450.0) and got["p10_us"] == 1449.0
    between = MEDIAN_SE * statistics.stdev([1515.0, 1446.0, 1450.0]) / math.sqrt(3) / 1450 * 100
    assert got["noise_pct"] == pytest.approx(between) and got["noise_pct"] > 1.0
    assert got["reason"] == "median of 3 repeats (1515, 1446, 1450 µs; spread 4.8 %)"
    assert rows[2]["noise_pct"] == 0.1  # the measured rows are not changed


def test_an_even_count_keeps_the_lower_middle_and_a_larger_own_noise_stays() -> None:
    got = combine([_row(10.0, 5.0, reason="noise above target"), _row(12.0), _row(11.0),
                   _row(13.0)])
    assert got["median_us"] == 11.0
    got = combine([_row(10.0, 9.0), _row(10.1, 9.0)])
    assert got["median_us"] == 10.0 and got["noise_pct"] == 9.0  # within-run noise larger
    got = combine([_row(10.0, 5.0, reason="noise above target"), _row(10.2, 5.0,
                                                                       reason="x")])
    assert got["reason"].startswith("noise above target; median of 2 repeats")


def test_a_wide_spread_reads_in_whole_per_cent_and_a_zero_time_is_kept() -> None:
    got = combine([_row(10.0), _row(22.0), _row(12.0)])
    assert got["reason"].endswith("spread 100 %)")
    zero = combine([{"status": "ok", "reason": "", "median_us": 0.0, "noise_pct": 0.1}] * 3)
    assert zero["median_us"] == 0.0 and zero["noise_pct"] == 0.1


def test_a_failed_repeat_is_the_row_and_says_which() -> None:
    bad = {"status": "failed", "reason": "out: FAILED (abs error 1)", "median_us": 90.0}
    got = combine([_row(100.0), bad, _row(101.0)])
    assert got["status"] == "failed" and got["median_us"] == 90.0
    assert got["reason"] == "repeat 2 of 3: out: FAILED (abs error 1)"


def test_a_failed_repeat_keeps_its_time_notes_through_repeats_and_merge() -> None:
    """A failed row's notes on its time (host time inside, say) come last in its reason;
    the prefixes that repeats and merge put before it must not cut them off."""
    from harness.engine.measure import REASON_CHARS, _failed_reason
    from harness.results.rows import ungated_note

    note = ungated_note(20, 20)  # as measure writes it
    why = _failed_reason("scale: FAILED " + "example, " * 100, [note])
    failed = {**_row(64.1), "status": "failed", "reason": why}
    once = combine([_row(63.0), failed, _row(65.0)])  # one process's repeats
    assert once["reason"].startswith("repeat 2 of 3: scale: FAILED")
    assert once["reason"].endswith(note) and len(once["reason"]) <= REASON_CHARS
    merged = combine([_row(60.0), once], unit="process")  # harness merge's processes
    assert merged["reason"].startswith("process 2 of 2: repeat 2 of 3: scale: FAILED")
    assert merged["reason"].endswith(note) and len(merged["reason"]) <= REASON_CHARS


def test_the_same_skip_every_time_is_the_row_as_it_is() -> None:
    skip = {"status": "skipped", "reason": "peer int_mm: needs M > 16"}
    assert combine([skip, dict(skip), dict(skip)]) == skip
    assert combine([_row(5.0)]) == _row(5.0)
    with pytest.raises(ValueError):
        combine([])


def test_a_pipeline_row_by_its_total() -> None:
    rows = [{"status": "ok", "reason": "", "total_us": t, "total_noise_pct": 0.2,
             "gemm_us": t / 2} for t in (30.0, 20.0, 25.0)]
    got = combine(rows, pipeline=True)
    assert got["total_us"] == 25.0 and got["gemm_us"] == 12.5
    assert got["total_noise_pct"] > 0.2 and "median of 3 repeats" in got["reason"]


def test_rounds_take_the_spacers_in_turn_the_first_holding_nothing() -> None:
    assert spacer(0) == 0
    assert [spacer(r) >> 20 for r in range(len(SPACERS_MB) + 2)] == [*SPACERS_MB, 0, 2]
    assert len(set(SPACERS_MB)) == len(SPACERS_MB)


def test_the_median_s_standard_error_is_1_2533_standard_deviations() -> None:
    """The module's docstring and the README: 1.2533 (sqrt(pi / 2)) standard deviations of
    the repeats' medians over the square root of R."""
    assert pytest.approx(math.sqrt(math.pi / 2), abs=1e-4) == MEDIAN_SE
    times = [100.0, 102.0, 104.0]
    got = combine([_row(t, noise=0.0) for t in times])
    assert got["noise_pct"] == pytest.approx(
        1.2533 * statistics.stdev(times) / math.sqrt(3) / 102.0 * 100, rel=1e-4)


def test_the_slow_placements_of_the_notes_are_among_the_spacers() -> None:
    """kernels/NOTES.md found 2 and 130 MB the slow placements; the README lists 0, 2, 6,
    24, 64 and 130 MB in turn."""
    assert SPACERS_MB == (0, 2, 6, 24, 64, 130)
    assert [spacer(r) for r in range(6)] == [mb << 20 for mb in (0, 2, 6, 24, 64, 130)]


def test_a_sub_microsecond_median_is_widened_too() -> None:
    """Any positive time is widened (a graph replay of a small launch can take under 1 µs)."""
    got = combine([_row(0.5, noise=0.0), _row(0.6, noise=0.0), _row(0.55, noise=0.0)])
    assert got["median_us"] == 0.55
    assert got["noise_pct"] == pytest.approx(
        MEDIAN_SE * statistics.stdev([0.5, 0.6, 0.55]) / math.sqrt(3) / 0.55 * 100)
    assert got["reason"] == "median of 3 repeats (0.5, 0.6, 0.55 µs; spread 18 %)"


def test_a_spread_under_ten_per_cent_reads_in_two_figures() -> None:
    """4.8, 30, 120: two significant figures below 10 %, whole per cent above."""
    got = combine([_row(100.0), _row(109.6), _row(105.0)])
    assert got["reason"].endswith("spread 9.1 %)")
    got = combine([_row(100.0), _row(109.9), _row(100.5)])
    assert got["reason"].endswith("spread 9.9 %)")


def test_a_row_without_its_own_noise_takes_the_spread_between_repeats() -> None:
    """A repeat whose noise column is empty (a CSV's ""): the noise is the standard error
    across the repeats, nothing more."""
    times = [10.0, 10.01, 10.02]
    got = combine([_row(t, noise="") for t in times])  # type: ignore[arg-type]
    assert got["noise_pct"] == pytest.approx(
        MEDIAN_SE * statistics.stdev(times) / math.sqrt(3) / 10.01 * 100)
    assert got["noise_pct"] < 0.2


def test_the_combined_reason_is_cut_to_reason_chars() -> None:
    from harness.engine.measure import REASON_CHARS

    long = "x" * (REASON_CHARS + 50)
    got = combine([_row(10.0, reason=long), _row(11.0, reason=long), _row(12.0)])
    assert got["reason"] == long[:REASON_CHARS]
    assert "reason" in combine([{"status": "ok", "median_us": 0.0, "noise_pct": 0.1}] * 2)


GATE = ("50 of 50 samples timed without the gate (the work synchronises inside its launch): "
        "host time can be inside")


def test_a_failed_repeat_keeps_the_notes_on_its_time() -> None:
    """A failed repeat keeps its time, and the notes on that time that measure put after the
    failure (cutting the failure to leave them room) stay whole after 'repeat i of n: ':
    what is cut is the failure's list of examples, not the end of the reason."""
    from harness.engine.measure import NOT_CONVERGED, REASON_CHARS

    notes = f"; {NOT_CONVERGED}; {GATE}"  # a failure cut to leave them room, as cf1668b does
    failure = ("q: FAILED (abs error 1) " + "[1, 2] kernel=3 ref=2, " * 40)
    why = failure[:REASON_CHARS - len(notes) - 3] + "..." + notes
    assert len(why) == REASON_CHARS
    bad = {"status": "failed", "reason": why, "median_us": 64.0}
    got = combine([_row(19.0), bad, _row(19.5)])
    assert got["status"] == "failed" and got["median_us"] == 64.0
    assert got["reason"].startswith("repeat 2 of 3: q: FAILED (abs error 1)")
    assert got["reason"].endswith(f"; {NOT_CONVERGED}; {GATE}")
    assert len(got["reason"]) <= REASON_CHARS
    # A short failure is said whole, as before.
    short = combine([_row(19.0), {**bad, "reason": f"q: FAILED; {GATE}"}])
    assert short["reason"] == f"repeat 2 of 2: q: FAILED; {GATE}"


def test_a_failure_the_same_every_time_says_which_repeat_its_time_is() -> None:
    """A wrong answer the same in every repeat (a peer off by one at the same elements)
    keeps a time, and each repeat timed it apart: the row is the median repeat's, as an ok
    row's is (not the first, measured first in its round), and says which. One that kept no
    time is the row as it is."""
    bad = [{"status": "failed", "reason": "q: FAILED (abs error 1)", "median_us": t}
           for t in (64.0, 19.4, 19.5)]
    got = combine(bad)
    assert got["status"] == "failed" and got["median_us"] == 19.5
    assert got["reason"] == ("repeat 3 of 3, the median time of 3 that all failed: "
                             "q: FAILED (abs error 1)")
    merged = combine([{**r, "median_us": str(r["median_us"])} for r in bad], unit="process")
    assert merged["reason"] == ("process 3 of 3, the median time of 3 that all failed: "
                                "q: FAILED (abs error 1)")
    # Failed alike but one kept no time: the first failed repeat's row, as before.
    mixed = combine([bad[0], {**bad[1], "median_us": ""}, bad[2]])
    assert mixed["median_us"] == 64.0 and mixed["reason"].startswith("repeat 1 of 3: ")
    untimed = {"status": "failed", "reason": "RuntimeError: boom", "median_us": ""}
    assert combine([untimed, dict(untimed)]) == untimed


def test_a_pipeline_row_s_intervals_take_their_own_spread_between_repeats() -> None:
    """Each interval of the median repeat (the seed's summaries write them with their
    noise) has its noise widened to the standard error across the repeats, as the total's
    is: the repeats' spread of an interval is not dropped for its within-run noise."""
    rows = [{"status": "ok", "reason": "", "total_us": t, "total_noise_pct": 0.2,
             "gemm_us": g, "gemm_noise_pct": 0.1, "dynamic_spikes_us": 5.0,
             "dynamic_spikes_noise_pct": 0.3}
            for t, g in ((30.0, 10.0), (20.0, 14.0), (25.0, 12.0))]
    got = combine(rows, pipeline=True)
    assert got["total_us"] == 25.0 and got["gemm_us"] == 12.0
    assert got["gemm_noise_pct"] == pytest.approx(
        MEDIAN_SE * statistics.stdev([10.0, 14.0, 12.0]) / math.sqrt(3) / 12.0 * 100)
    assert got["dynamic_spikes_noise_pct"] == 0.3  # no spread: its own noise stays
    partial = [dict(r) for r in rows]
    partial[0]["gemm_us"] = ""  # an interval a repeat did not measure: left as measured
    assert combine(partial, pipeline=True)["gemm_noise_pct"] == 0.1


def test_a_pipeline_s_own_named_intervals_take_their_spread_between_repeats() -> None:
    """The intervals of a pipeline's own names (spike_linear's activation and gemm, in the
    ``intervals`` JSON column) are widened to their spread between repeats, as the named
    columns are."""
    import json

    def rep(total: float, act: float) -> dict[str, object]:
        return {"status": "ok", "reason": "", "total_us": total, "total_noise_pct": 0.1,
                "intervals": json.dumps({"activation": {"median_us": act, "noise_pct": 0.1},
                                         "gemm": {"median_us": 20.0, "noise_pct": 0.1}})}

    got = combine([rep(30.0, 4.0), rep(31.0, 9.0), rep(32.0, 6.0)], pipeline=True)
    named = json.loads(got["intervals"])
    assert named["activation"]["median_us"] == 9.0  # the median repeat's, as measured
    spread = MEDIAN_SE * statistics.stdev([4.0, 9.0, 6.0]) / math.sqrt(3) / 9.0 * 100
    assert named["activation"]["noise_pct"] == pytest.approx(spread)
    assert named["gemm"]["noise_pct"] == 0.1  # the same in every repeat: its own noise
