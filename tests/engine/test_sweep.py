"""--sweep parsing and the points it makes."""

from __future__ import annotations

import pytest

from harness.engine import sweep
from harness.errors import BadInput


def test_lists_and_ranges() -> None:
    assert sweep.parse(["batch=1..16", "in_f=5, 7"]) == {
        "batch": ["1", "2", "4", "8", "16"], "in_f": ["5", "7"]}
    assert sweep.parse(["batch=3..20;k=2.5"]) == {"batch": ["3", "6", "12"], "k": ["2.5"]}


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
