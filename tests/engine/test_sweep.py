"""--sweep parsing and the points it makes."""

from __future__ import annotations

import pytest

from harness.engine import sweep
from harness.errors import BadInput


def test_lists_and_ranges() -> None:
    assert sweep.parse(["batch=1..16", "in_f=5, 7"]) == {
        "batch": ["1", "2", "4", "8", "16"], "in_f": ["5", "7"]}
    assert sweep.parse(["batch=3..24;k=2.5"]) == {"batch": ["3", "6", "12", "24"],
                                                  "k": ["2.5"]}
    # A range that would stop short of its end is refused, not cut.
    with pytest.raises(BadInput, match=r"bad --sweep 'batch=3\.\.16': 16 is not 3 doubled a "
                                       r"whole number of times \(3, 6, 12, 24\)"):
        sweep.parse(["batch=3..16"])


@pytest.mark.parametrize("bad", ["batch", "batch=", "=3", "batch=0..4", "batch=8..2",
                                 "batch=1,,2", "2batch=1"])
def test_malformed(bad: str) -> None:
    with pytest.raises(BadInput, match="bad --sweep"):
        sweep.parse([bad])


def test_axis_given_twice() -> None:
    with pytest.raises(BadInput, match="twice"):
        sweep.parse(["batch=1", "batch=2"])


def test_points_product_and_defaults(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    pts = sweep.points(st, sweep.parse(["batch=1,2", "in_f=5,6,7"]))
    assert len(pts) == 6 and all(p["k"] == 3.0 for p in pts)
    assert {(p["batch"], p["in_f"]) for p in pts} == {(b, f) for b in (1, 2) for f in (5, 6, 7)}


def test_default_sweep_when_none_given(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    pts = sweep.points(st, {})
    assert [p["batch"] for p in pts] == [2**i for i in range(17)]


def test_unknown_axis_and_bad_values(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    with pytest.raises(BadInput, match="no axis 'out_f'"):
        sweep.points(st, {"out_f": ["1"]})
    with pytest.raises(BadInput, match="axis 'batch'"):
        sweep.points(st, {"batch": ["two"]})
    with pytest.raises(BadInput, match="in_f must be >= 1"):
        sweep.points(st, {"in_f": ["0"]})
    with pytest.raises(BadInput, match="k must be"):
        sweep.points(st, {"k": ["-1"]})


def test_a_range_of_one_value() -> None:
    """LO..HI needs 1 <= LO <= HI: LO == HI is that one value."""
    assert sweep.parse(["batch=4..4"]) == {"batch": ["4"]}
    assert sweep.parse(["batch=1..1"]) == {"batch": ["1"]}


def test_at_most_max_points_in_one_sweep(reg) -> None:  # type: ignore[no-untyped-def]
    """MAX_POINTS (100 000) points are a sweep; one more is refused before any is made."""
    st = reg.get("dynamic_spikes")
    assert sweep.MAX_POINTS == 100_000
    batches = [str(i) for i in range(1, 1001)]
    pts = sweep.points(st, {"batch": batches, "in_f": [str(i) for i in range(1, 101)]})
    assert len(pts) == sweep.MAX_POINTS
    with pytest.raises(BadInput, match=r"sweep of dynamic_spikes has 100001 points "
                                       r"\(more than 100000\)"):
        sweep.points(st, {"batch": [str(i) for i in range(1, 100_002)]})


def test_no_default_sweep_when_asked_not_to(reg) -> None:  # type: ignore[no-untyped-def]
    """``default_sweep=False`` and no sweep: the stage's one default point."""
    st = reg.get("dynamic_spikes")
    assert len(sweep.points(st, {}, default_sweep=False)) == 1
    assert [p["batch"] for p in sweep.points(st, {}, {"in_f": "5"})] == [2**i for i in range(17)]


@pytest.mark.parametrize("empty", ["", " ", ";", " ; "])
def test_an_empty_spec_is_refused_not_the_default_sweep(empty: str) -> None:
    with pytest.raises(BadInput, match="empty; expected AXIS=V1"):
        sweep.parse([empty])


def test_lenient_skips_an_axis_the_stage_has_not(reg) -> None:  # type: ignore[no-untyped-def]
    """A batch sweep over a weight-only stage, say: the axis it lacks is left out."""
    st = reg.get("dynamic_spikes")
    pts = sweep.points(st, {"batch": ["1", "2"], "out_f": ["7", "9"]}, lenient=True)
    assert [p["batch"] for p in pts] == [1, 2] and all("out_f" not in p for p in pts)
