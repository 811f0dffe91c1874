"""The first validation cases of each side, declared once: the shapes every stage of that
side must get right before its own cases test its own paths.

A stage's cases are numbered in order and each number draws its own inputs, so a stage lists
these first and adds its own after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.spikes import spec

#: The activation side: one row at the model's width, six rows (one of each of the edge
#: family's row kinds), F not a multiple of 4 (the kernels' scalar path), a single column,
#: and a width that is neither a multiple of 4 nor of a warp.
ACTIVATION: tuple[dict[str, Any], ...] = (
    {"batch": 1, "in_f": 3584}, {"batch": 6, "in_f": 3584}, {"batch": 7, "in_f": 5},
    {"batch": 3, "in_f": 1}, {"batch": 13, "in_f": 130},
)

#: The weight side: the activation side's shapes as weight rows, a short last group (64 x
#: 1000 at G = 128), a group size that is not a multiple of 4 (G = 7), and G = 1.
WEIGHT: tuple[dict[str, Any], ...] = (
    {"out_f": 1, "in_f": 3584}, {"out_f": 6, "in_f": 3584}, {"out_f": 7, "in_f": 5},
    {"out_f": 3, "in_f": 1}, {"out_f": 13, "in_f": 130}, {"out_f": 64, "in_f": 1000},
    {"out_f": 12, "in_f": 300, "group_size": 7}, {"out_f": 5, "in_f": 64, "group_size": 1},
)

#: What compute-sanitizer watches on the weight side besides the harness's small and odd
#: shapes (whose groups are 128 wide): a group wider than 128 with a short last one, which
#: takes the warp-a-group vector path (G <= 512).
WEIGHT_SANITIZE: tuple[dict[str, Any], ...] = ({"out_f": 3, "in_f": 516, "group_size": 256},)


def per_mode(cases: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Every case in each encoding mode, mode by mode (for stages whose mode is an axis)."""
    cases = tuple(cases)
    return tuple({**c, "mode": m} for m in spec.MODES for c in cases)
