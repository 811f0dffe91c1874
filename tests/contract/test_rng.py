"""The generator of a sweep point's inputs: fixed by its arguments, and by each of them."""

from __future__ import annotations

import numpy as np

from harness.contract.rng import point_rng

POINT = {"batch": 3, "in_f": 130, "k": 3.0, "vth_max": float("inf")}


def _draw(*args) -> np.ndarray:  # type: ignore[no-untyped-def]
    return point_rng(*args).integers(0, 2**62, size=4)


def test_same_arguments_same_stream_whatever_the_key_order() -> None:
    again = dict(reversed(list(POINT.items())))
    assert np.array_equal(_draw(0, "s", "normal", POINT), _draw(0, "s", "normal", again))


def test_every_argument_changes_the_stream() -> None:
    base = _draw(0, "s", "normal", POINT)
    for args in ((1, "s", "normal", POINT), (0, "t", "normal", POINT),
                 (0, "s", "llm", POINT), (0, "s", "normal", {**POINT, "batch": 4}),
                 (0, "s", "normal", {**POINT, "k": 4.0})):
        assert not np.array_equal(base, _draw(*args)), args
