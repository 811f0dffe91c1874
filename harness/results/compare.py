"""Comparing two result CSVs row by row, accounting for both runs' noise.

A row's verdict: ``faster`` or ``slower`` when the medians differ by more than ``z`` times
their combined standard error AND by more than ``threshold_pct`` of the old time;
``same`` when the difference is within the noise or below the threshold; ``ambiguous`` when
it is above the threshold but within the noise (too noisy to tell), or when a row is not
``ok`` in either run or exists in only one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

KEY = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params", "l2",
       "launch")


def key_of(row: dict[str, str]) -> tuple[str, ...]:
    """A row's identity: what ran, where, and how it was launched (rows written before the
    ``launch`` column were stream launches)."""
    return tuple((row.get(k) or "stream") if k == "launch" else row.get(k, "") for k in KEY)


@dataclass(frozen=True)
class Verdict:
    """One row's comparison."""

    key: tuple[str, ...]
    old_us: float | None
    new_us: float | None
    change_pct: float | None
    sigma_pct: float | None
    verdict: str


def _num(r: dict[str, str] | None, col: str) -> float | None:
    try:
        return float(r[col]) if r and r.get(col, "") != "" else None
    except ValueError:
        return None


def compare(old: Sequence[dict[str, str]], new: Sequence[dict[str, str]],
            threshold_pct: float = 2.0, z: float = 3.0) -> list[Verdict]:
    """A verdict for every key present in either run (old order first)."""
    o = {key_of(r): r for r in old}
    n = {key_of(r): r for r in new}
    out = []
    for key in [*o, *(k for k in n if k not in o)]:
        a, b = o.get(key), n.get(key)
        ta, tb = _num(a, "median_us"), _num(b, "median_us")
        if a is None or b is None or a.get("status") != "ok" or b.get("status") != "ok" \
                or not ta or tb is None:
            out.append(Verdict(key, ta, tb, None, None, "ambiguous"))
            continue
        na, nb = _num(a, "noise_pct") or 0.0, _num(b, "noise_pct") or 0.0
        sigma = math.hypot(ta * na / 100, tb * nb / 100)
        d = tb - ta
        change = 100 * d / ta
        significant = abs(d) > z * sigma
        large = abs(change) > threshold_pct
        if significant and large:
            v = "slower" if d > 0 else "faster"
        elif large:
            v = "ambiguous"
        else:
            v = "same"
        out.append(Verdict(key, ta, tb, change, 100 * sigma / ta, v))
    return out


def summary(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How many rows got each verdict."""
    counts = dict.fromkeys(("faster", "same", "slower", "ambiguous"), 0)
    for v in verdicts:
        counts[v.verdict] += 1
    return counts
