"""The edge family's rows by kind, for the tests that need one kind's row."""

from __future__ import annotations

import numpy as np

from harness.spikes import families


def row_kinds(x: np.ndarray) -> list[str]:
    """Each row's kind in an edge draw of six rows, its rotation found by its one all-zero
    row."""
    zero = [r for r in range(x.shape[0]) if not x[r].any()]
    assert len(zero) == 1, "one all-zero row in a cycle of six rows"
    n = len(families.EDGE_ROWS)
    return [families.EDGE_ROWS[(r - zero[0]) % n] for r in range(x.shape[0])]


def edge_kinds(x: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of an edge draw of six rows by kind."""
    return dict(zip(row_kinds(x), x, strict=True))
