"""Measuring each point more than once (``harness bench --repeats R``).

One process's median can be off by more than its own noise says: on the H200 the same
build of one GEMM ran 1446 to 1515 µs in three processes of one call, each median with
0.03-0.3 % noise, and in three A/B sweeps the build measured first was the slowest. So a
difference of a few per cent between two variants measured one after the other is not
evidence.

With repeats, the rows of one point (its variants, ``--define`` builds and peers) are
measured R times, each round in a rotated order, so no unit is always first. Each unit's
row is then its **median repeat**, as measured (every column from one run; with an even R
the lower of the two middle ones), with two things added:

* ``noise_pct`` becomes at least the standard error of the median across the repeats
  (1.2533 standard deviations of the repeats' medians over the square root of R), so
  ``harness compare`` and the regress gate weigh the spread between repeats, not only the
  spread within one (a pipeline row: its total's, and each interval's own, those of the
  pipeline's own names in its ``intervals`` column too);
* the reason lists every repeat's median and their spread (max - min over the median).

Each round's buffers are allocated behind a different amount of held device memory
(:func:`spacer`), so the repeats sample where the buffers lie as well as when they run
(on the GPU; a torch peer's tensors come from torch's own pool and are not moved).

A unit with any repeat not ``ok`` is that repeat's row (the first such), its reason naming
which repeat it was: a failure is never averaged away. One not ``ok`` the same way every
time without a time (a peer that skips the point) is that row as it is; where every repeat
is a wrong answer that kept its time, the row is the median repeat's, named as such.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from harness.engine.measure import REASON_CHARS
from harness.results.rows import fit_reason

T = TypeVar("T")

#: The standard error of a median is about this many standard errors of a mean.
MEDIAN_SE = 1.2533

#: Device memory (MB) held before a round's buffers are allocated, by round: where a point's
#: buffers lie in physical memory can move a small launch's time by up to 5 % on the H200,
#: each placement repeatable (kernels/NOTES.md, "The stream kernel's modes are the weights'
#: placement", where 2 and 130 MB gave the slow one). Every unit of a round gets the same
#: one, so the units of a point are measured over the same placements.
SPACERS_MB = (0, 2, 6, 24, 64, 130)


def spacer(round_: int) -> int:
    """Bytes held before round ``round_``'s buffers (:data:`SPACERS_MB`, in turn)."""
    return SPACERS_MB[round_ % len(SPACERS_MB)] << 20

#: A stage row's time and noise columns, and a pipeline row's.
STAGE_COLUMNS = ("median_us", "noise_pct")
PIPELINE_COLUMNS = ("total_us", "total_noise_pct")


def schedule(units: Sequence[T], repeats: int) -> list[tuple[int, T]]:
    """``(round, unit)`` in the order they are measured: ``repeats`` rounds over the
    ``n`` units, each a rotation of them, round r starting at unit ``n - 1 - r * n //
    repeats``. With ``repeats`` at least ``n`` every unit is first in some round, and with a
    multiple of ``n`` each takes each place equally often; with fewer rounds than units the
    starts are spread over the list, and some units are never first. Where the first places
    cannot be shared equally they fall to the end of the list first: a point lists its
    peers before its own kernel, and the unit measured first was the slow one where an
    order showed (README, "How a time is measured"), so what order effect remains weighs
    against the harness's kernel, not for it."""
    n = len(units)
    return [(r, units[(n - 1 - r * n // repeats + i) % n]) for r in range(repeats)
            for i in range(n)]


def combine(rows: Sequence[Mapping[str, Any]], pipeline: bool = False,
            unit: str = "repeat") -> dict[str, Any]:
    """One unit's row from its repeats (see the module's docstring); a single row is
    returned as it is. ``unit`` names what the rows are in the reason: one process's
    repeats, or the processes ``harness merge`` combines."""
    if not rows:
        raise ValueError("no repeats to combine")
    if len(rows) == 1:
        return dict(rows[0])
    n = len(rows)
    first = rows[0]
    time_col, noise_col = PIPELINE_COLUMNS if pipeline else STAGE_COLUMNS
    # The same verdict every time, with no time kept (a peer that skips the point): the row
    # as it is. A wrong answer keeps its time, each repeat's its own: said below, by repeat.
    if all(r.get("status") == first.get("status") != "ok" and
           r.get("reason") == first.get("reason") and r.get(time_col) in (None, "")
           for r in rows):
        return dict(first)
    if all(r.get("status") != "ok" and _time(r, time_col) is not None for r in rows):
        # Every repeat wrong, each timed: the median repeat's row, as for ok rows (the first
        # would be the one measured first in its round, what the rotation averages out).
        i = sorted(range(n), key=lambda k: _time(rows[k], time_col) or 0.0)[(n - 1) // 2]
        why = rows[i].get("reason") or "no reason given"
        said = f"{unit} {i + 1} of {n}, the median time of {n} that all failed: {why}"
        return {**rows[i], "reason": fit_reason(said, REASON_CHARS)}
    for i, r in enumerate(rows):
        if r.get("status") != "ok":
            why = r.get("reason") or "no reason given"
            # The notes on its kept time end the reason: the failure is cut, not them.
            return {**r, "reason": fit_reason(f"{unit} {i + 1} of {n}: {why}", REASON_CHARS)}
    times = [float(r[time_col]) for r in rows]
    pick = sorted(range(n), key=lambda i: times[i])[(n - 1) // 2]
    mid = times[pick]
    out = dict(rows[pick])
    if mid > 0:  # an ok row has a positive time; nothing to widen by otherwise
        out[noise_col] = _widened(out.get(noise_col), times, mid)
        spread = (max(times) - min(times)) / mid * 100
        pct = f"{spread:.2g}" if spread < 10 else f"{spread:.0f}"  # 4.8, 30, 120: no 1.2e+02
        plural = unit + ("es" if unit.endswith("s") else "s")
        said = f"median of {n} {plural} ({', '.join(f'{t:.4g}' for t in times)} µs; " \
               f"spread {pct} %)"
        out["reason"] = "; ".join(s for s in (out.get("reason") or "", said) if s)
    if pipeline:  # each interval's noise, as the total's: at least the repeats' spread
        for col in [c for c in out if c.endswith("_noise_pct") and c != noise_col]:
            _widen(out, rows, col.removesuffix("_noise_pct") + "_us", col)
        _widen_named(out, rows)
    out["reason"] = fit_reason(out.get("reason", ""), REASON_CHARS)
    return out


def _time(row: Mapping[str, Any], col: str) -> float | None:
    """The row's time in ``col``, or None where it kept none."""
    try:
        return float(row[col])
    except (KeyError, TypeError, ValueError):
        return None


def _widen_named(out: dict[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
    """The intervals of a pipeline's own names (the ``intervals`` JSON column: spike_linear's
    activation and gemm) widened as the named columns are: each one's noise at least the
    standard error of its median across the repeats, where every repeat measured it."""
    try:
        mine = json.loads(out.get("intervals") or "{}")
        theirs = [json.loads(r.get("intervals") or "{}") for r in rows]
    except (TypeError, ValueError):
        return
    if not isinstance(mine, dict) or not mine:
        return
    for name, iv in mine.items():
        try:
            times = [float(t[name]["median_us"]) for t in theirs]
            mid = float(iv["median_us"])
        except (KeyError, TypeError, ValueError):
            continue
        if mid > 0:
            iv["noise_pct"] = _widened(iv.get("noise_pct"), times, mid)
    out["intervals"] = json.dumps(mine, sort_keys=True)


def _widen(out: dict[str, Any], rows: Sequence[Mapping[str, Any]], time_col: str,
           noise_col: str) -> None:
    """``out[noise_col]`` at least the standard error of ``time_col``'s median across the
    repeats, over ``out``'s own (where every repeat measured it, and it is positive)."""
    try:
        times = [float(r[time_col]) for r in rows]
        mid = float(out[time_col])
    except (KeyError, TypeError, ValueError):
        return
    if mid > 0:
        out[noise_col] = _widened(out.get(noise_col), times, mid)


def _widened(noise: Any, times: Sequence[float], mid: float) -> float:
    """A noise (%) at least the standard error of the median ``mid`` across the repeats'
    ``times``: :data:`MEDIAN_SE` standard deviations over the square root of their count."""
    between = MEDIAN_SE * statistics.stdev(times) / math.sqrt(len(times)) / mid * 100
    return max(float(noise or 0.0), between)
