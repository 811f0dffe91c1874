"""Which rows of a timed run are checked, and the run cut to them (the README's "How a
time is measured").

Every timed row's outputs are checked at the row's own size. Up to ``FULL_CHECK_LIMIT``
elements (inputs and outputs together) the whole run is judged against the full
reference. Above it, a target that declares its rows independent of one another
(``Stage.rows``, ``Pipeline.rows``) is judged on ``SAMPLE_ROWS`` of them: the first, the
last, and one drawn in each of the equal stretches between them, by a generator fixed by
the point, so that a point measured again checks the same rows. The reference is computed
on those rows alone (a float64 GEMM reference at M = 8192 then costs what it does at
M = 64), and a bug in the first or the last row, or over a run of rows that covers a whole
stretch (any run of twice a stretch's length: 2n/62 rows), cannot pass unseen. A target
that declares no rows is judged whole, however long its reference takes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.contract.stage import Pipeline, Point, Rows, Stage
from harness.contract.tolerance import Comparison

#: Up to this many elements in a run's inputs and outputs together, the whole run is checked.
FULL_CHECK_LIMIT = 1 << 26
#: Rows checked above ``FULL_CHECK_LIMIT`` (all of them where there are no more than this).
SAMPLE_ROWS = 64


def elements(*arrays: Mapping[str, Any]) -> int:
    """How many elements the arrays of these mappings hold together."""
    return sum(int(np.asarray(a).size) for group in arrays for a in group.values())


def pick_rows(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` of ``n`` rows, sorted (all of them when ``n <= k``): the first and the last,
    and one drawn uniformly in each of ``k - 2`` equal stretches of the rows between."""
    if n <= k:
        return np.arange(n)
    # k - 2 stretches [edges[i], edges[i + 1]) of 1..n-2, each at least one row long
    # (n > k makes the spacing (n - 2) / (k - 2) more than one).
    edges = np.linspace(1, n - 1, k - 1).astype(np.int64)
    inner = rng.integers(edges[:-1], edges[1:])
    return np.unique(np.concatenate(([0], inner, [n - 1])))


def chosen(target: Stage | Pipeline, point: Point, inputs: Mapping[str, Any],
           outputs: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray | None:
    """The rows to check of a run at ``point``; None: the whole run (a point of at most
    ``FULL_CHECK_LIMIT`` elements, a target without ``rows``, or no more rows than
    ``SAMPLE_ROWS``)."""
    rows = target.rows
    if rows is None or elements(inputs, outputs) <= FULL_CHECK_LIMIT:
        return None
    n = int(point[rows.axis])
    return None if n <= SAMPLE_ROWS else pick_rows(n, SAMPLE_ROWS, rng)


def label(rows: Rows | None, point: Point, idx: np.ndarray | None) -> str:
    """A checked row's ``verified``: ``yes`` (the whole run) or ``sampled:K/N`` (K of the
    N rows along the declared axis)."""
    if idx is None or rows is None:
        return "yes"
    return f"sampled:{len(idx)}/{int(point[rows.axis])}"


def _cut(arrays: Mapping[str, Any], dims: Mapping[str, int], idx: np.ndarray, n: int,
         axis: str, kind: str, every: bool) -> tuple[dict[str, Any], list[str]]:
    """``arrays`` with those ``dims`` names cut to the rows ``idx`` along their dimension,
    the others whole; what is wrong with the declaration instead (``every``: each array
    must be named)."""
    out: dict[str, Any] = {}
    problems = [f"rows names {kind} {name}, which the run has not" for name in dims
                if name not in arrays]
    for name, a in arrays.items():
        if name not in dims:
            if every:
                problems.append(f"rows names no dimension of rows for {kind} {name}")
            out[name] = a
            continue
        a, d = np.asarray(a), dims[name]
        if a.ndim <= d or a.shape[d] != n:
            problems.append(f"rows: {kind} {name} is {a.dtype}{list(a.shape)}, without {n} "
                            f"rows ({axis}) along dimension {d}")
            continue
        out[name] = np.take(a, idx, axis=d)
    return out, problems


@dataclasses.dataclass(frozen=True)
class Cut:
    """A run cut to its checked rows: the point with the rows' axis set to their number,
    the inputs and the outputs cut, and what is wrong with the declaration (then nothing
    else is to be trusted)."""

    point: dict[str, Any]
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    problems: list[str]


def cut(rows: Rows, point: Point, inputs: Mapping[str, Any], outputs: Mapping[str, Any],
        idx: np.ndarray, name: str) -> Cut:
    """The run of the target ``name`` at ``point`` cut to the rows ``idx``."""
    n = int(point[rows.axis])
    ins, p1 = _cut(inputs, rows.inputs, idx, n, rows.axis, "input", every=False)
    outs, p2 = _cut(outputs, rows.outputs, idx, n, rows.axis, "output", every=True)
    return Cut({**point, rows.axis: len(idx)}, ins, outs,
               [f"plugin {name}: {p}" for p in (*p1, *p2)])


def relocate(c: Comparison, rows: Rows, idx: np.ndarray, n: int) -> Comparison:
    """A comparison made on the checked rows, its listed elements indexed as in the whole
    output (where it is one of the declared outputs) and its note saying so."""
    d = rows.outputs.get(c.output)
    first = c.first
    if d is not None:
        first = tuple((tuple(int(idx[v]) if i == d else v for i, v in enumerate(ix)), g, r)
                      for ix, g, r in c.first)
    note = f"on {len(idx)} of {n} rows ({rows.axis})"
    return dataclasses.replace(c, first=first, note=f"{c.note} {note}".strip())
