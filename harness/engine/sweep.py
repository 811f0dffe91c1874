"""Parsing ``--sweep`` specifications into the points of a stage.

``AXIS=V1,V2,...`` lists values; ``AXIS=LO..HI`` is LO doubled up to HI (LO a positive
integer, HI one of LO's doublings: a range that would stop short of HI is refused). Several axes are
given as several ``--sweep`` options or separated by ``;``; the points are their product,
every other axis at its default.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from harness.contract.stage import Stage, Variant
from harness.errors import BadInput

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S.*?)\s*$")
_RANGE = re.compile(r"^(\d+)\.\.(\d+)$")
#: More points than this in one sweep is almost certainly a typo.
MAX_POINTS = 100_000


def _values(spec: str, text: str) -> list[str]:
    if m := _RANGE.match(text):
        if max(len(m.group(1)), len(m.group(2))) > 18:  # past int64: no size, and int()
            # of thousands of digits is refused by Python itself
            shown = spec if len(spec) <= 40 else spec[:40] + "..."
            raise BadInput(f"bad --sweep {shown!r}: a range's bounds are sizes, at most 18 "
                           "digits")
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo < 1 or hi < lo:
            raise BadInput(f"bad --sweep {spec!r}: a range LO..HI needs 1 <= LO <= HI")
        out, v = [], lo
        while v <= hi:
            out.append(str(v))
            v *= 2
        if out[-1] != str(hi):  # 3..16 would time 3, 6, 12 and never the 16 asked for
            raise BadInput(f"bad --sweep {spec!r}: {hi} is not {lo} doubled a whole number of "
                           f"times ({', '.join(out)}, {v}): end the range at one of them, or "
                           "list the values")
        return out
    vals = [v.strip() for v in text.split(",")]
    if not all(vals):
        raise BadInput(f"bad --sweep {spec!r}: empty value in the list")
    return vals


def parse(specs: Sequence[str]) -> dict[str, list[str]]:
    """``["batch=1..4", "in_f=5,7"]`` -> ``{"batch": ["1","2","4"], "in_f": ["5","7"]}``."""
    out: dict[str, list[str]] = {}
    for raw in specs:
        if not raw.replace(";", "").strip():  # else the stage's default sweep would run
            raise BadInput(f"bad --sweep {raw!r}: empty; expected AXIS=V1,V2,... or "
                           "AXIS=LO..HI (LO doubled up to HI)")
        for spec in (s for s in raw.split(";") if s.strip()):
            m = _SPEC.match(spec)
            if not m:
                raise BadInput(f"bad --sweep {spec!r}: expected AXIS=V1,V2,... or "
                               "AXIS=LO..HI (LO doubled up to HI)")
            axis, text = m.group(1), m.group(2)
            if axis in out:
                raise BadInput(f"bad --sweep: axis {axis!r} given twice")
            out[axis] = _values(spec, text)
    return out


def points(stage: Stage, sweep: dict[str, list[str]], fixed: dict[str, str] | None = None,
           variant: Variant | None = None, lenient: bool = False,
           default_sweep: bool = True) -> list[dict[str, Any]]:
    """The stage's points: the sweep (or the stage's default sweep) times ``fixed`` values,
    with the variant's pinned axes applied (duplicates dropped). ``lenient`` skips swept
    axes the stage does not have (a batch sweep over a weight-only stage)."""
    axes = {a.name: a for a in stage.axes}
    grid: dict[str, list[Any]] = {}
    given = {**{k: list(v) for k, v in (sweep or {}).items()},
             **{k: [v] for k, v in (fixed or {}).items()}}
    for name, texts in given.items():
        if name not in axes:
            if lenient:  # the axis does not apply to this stage: one point fewer to vary
                continue
            raise BadInput(f"stage {stage.name} has no axis {name!r} "
                           f"(axes: {', '.join(axes)})")
        try:
            grid[name] = [axes[name].parse(t) for t in texts]
        except ValueError as exc:
            raise BadInput(f"bad value for {stage.name} axis {name!r}: {exc}") from exc
    if not sweep and default_sweep:
        for name, vals in stage.default_sweep.items():
            grid.setdefault(name, list(vals))
    names = list(grid)
    total = 1
    for v in grid.values():
        total *= len(v)
    if total > MAX_POINTS:
        raise BadInput(f"sweep of {stage.name} has {total} points (more than {MAX_POINTS})")
    out: dict[str, dict[str, Any]] = {}
    for combo in itertools.product(*(grid[n] for n in names)):
        p = stage.point(variant, **dict(zip(names, combo, strict=True)))
        out.setdefault(repr(sorted(p.items())), p)
    return list(out.values())
