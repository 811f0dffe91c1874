"""``harness fit``: how a build's time grows along one axis, as a fixed part and a part in
proportion to the axis, fitted to the rows one command measured.

A sweep of one axis (``bench --sweep in_f=1792,3584,7168``) measures ``t(x)`` at a few
values. Where the cost is a fixed part ``a`` (what every launch, tile or row pays whatever
x is) plus ``b`` per unit of x, the rows lie on the line ``t = a + b x``, and ``a / t(x)`` is
the share of the time that does not grow with x. The fit is ordinary least squares over the
medians; each point's residual says how well the line holds there. Only rows that one
command measured in one run are fitted together (the same ``command`` and ``git_sha``, as
``harness best`` groups them), one line per build (``backend`` and ``variant``) and per
value of the point's other key columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import BadInput
from harness.results import resultcsv
from harness.results.readback import number

#: The fewest distinct values of the axis a line is fitted to (two fix it exactly, with
#: nothing left to say whether it holds).
MIN_POINTS = 3


#: A fitted time at or below this (µs) is no time: a femtosecond, the rounding of a fit
#: that falls to 0 (``polyfit`` may land a hair either side of it).
NO_TIME_US = 1e-9


@dataclass(frozen=True)
class Sample:
    """One row on the line: the axis value, the median, and how far the line is from it."""

    x: float
    median_us: float
    fitted_us: float

    @property
    def residual_pct(self) -> float:
        """(median - fitted) / fitted, in %. Where the line puts no time at x, or less than
        none (a line that falls to 0 or below across the rows), no share of it measures
        the miss: an infinity of the miss's sign, which makes the line's worst residual say
        it does not hold (0 where the median is that time too)."""
        miss = self.median_us - self.fitted_us
        if self.fitted_us <= NO_TIME_US:
            return math.copysign(math.inf, miss) if miss else 0.0
        return 100.0 * miss / self.fitted_us


@dataclass(frozen=True)
class Line:
    """``t = fixed_us + per_unit_us x`` for one build at the rest of one point."""

    build: str
    rest: dict[str, str]
    git_sha: str
    fixed_us: float
    per_unit_us: float
    samples: tuple[Sample, ...]
    #: Bytes the rows' ``bytes`` column adds a unit of the axis (its own line), and the
    #: calibrated peak the rows were measured against (GB/s); None where the rows lack them.
    per_unit_bytes: float | None = None
    peak_gbps: float | None = None

    def where(self) -> str:
        """The rest of the point in a few words: ``int_gemm batch=8192 out_f=18944``."""
        return " ".join(f"{k}={v}" if k != "stage" else v for k, v in self.rest.items()
                        if k in ("stage", "batch", "in_f", "out_f"))

    def fixed_share_pct(self, x: float) -> float:
        """The fixed part's share of the fitted time at x, in %; NaN where the fitted time
        there is 0 or less (a line that falls to 0 or below at x), or the fixed part is
        less than none: no share of such a time means anything (:func:`share_text` shows
        it as ``-``)."""
        fitted = self.fixed_us + self.per_unit_us * x
        return 100.0 * self.fixed_us / fitted if fitted > NO_TIME_US and self.fixed_us >= 0 \
            else math.nan

    def worst_residual_pct(self) -> float:
        """The largest |residual| of the fitted rows, in %."""
        return max(abs(s.residual_pct) for s in self.samples)

    def marginal_gbps(self) -> float | None:
        """The bandwidth past the fixed part: the bytes a unit adds over the time it adds
        (GB/s); None without bytes, or where the time or the bytes do not grow (a rate of
        bytes that fall along the axis would be a negative one)."""
        if self.per_unit_bytes is None or self.per_unit_bytes <= 0 or self.per_unit_us <= 0:
            return None
        return self.per_unit_bytes / self.per_unit_us / 1e3


def run(path: Path, axis: str) -> list[Line]:
    """A line per build and rest-of-point of ``path``'s ok rows along ``axis``, where one
    command measured at least MIN_POINTS values of it; BadInput (one line) for a pipeline
    CSV, an axis that is not a numeric key column (its sizes are positive whole numbers:
    :func:`resultcsv.check_row`), a ``bytes`` or ``peak_gbps`` cell that is no count or
    rate (:func:`_check_cells`), or a file with no such sweep."""
    res = resultcsv.read(path)
    if res.schema is not resultcsv.STAGE:
        raise BadInput(f"{path} holds pipeline rows: harness fit takes a stage's rows")
    keys = [c for c in res.schema.key if c not in ("backend", "variant")]
    if axis not in keys:
        raise BadInput(f"--axis {axis}: not a key column of {path} (key columns: "
                       f"{', '.join(keys)})")
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for r, n in zip(res.rows, res.lines, strict=True):
        if r.get("status") != "ok" or not r.get(axis):
            continue
        # The numeric key columns are sizes, which resultcsv.read took only as positive
        # whole numbers; the others (family, l2) are words, no axis to fit along.
        if number(r[axis]) is None:
            raise BadInput(f"--axis {axis}: its values in {path} are not numbers")
        _check_cells(r, f"{path}, line {n}")
        rest = tuple(resultcsv.STAGE.value(r, c) for c in keys if c != axis)
        key = (r.get("backend", ""), r.get("variant", ""), *rest, *resultcsv.run_of(r))
        groups.setdefault(key, []).append(r)
    rest_cols = [c for c in keys if c != axis]
    lines = []
    for key, rows in groups.items():
        xs = np.array([float(r[axis]) for r in rows])
        if len(set(xs.tolist())) < MIN_POINTS:
            continue
        ts = np.array([float(r["median_us"]) for r in rows])
        per_unit, fixed = np.polyfit(xs, ts, 1)
        nbytes, peaks = _numbers(rows, "bytes"), _numbers(rows, "peak_gbps")
        order = np.argsort(xs, kind="stable")
        samples = tuple(Sample(float(xs[i]), float(ts[i]), float(fixed + per_unit * xs[i]))
                        for i in order)
        rest = {c: v for c, v in zip(rest_cols, key[2:2 + len(rest_cols)], strict=True) if v}
        lines.append(Line(f"{key[0]} {key[1]}", rest, key[-2], float(fixed), float(per_unit),
                          samples,
                          float(np.polyfit(xs, nbytes, 1)[0]) if nbytes is not None else None,
                          float(peaks[0]) if peaks is not None and len(set(peaks)) == 1
                          else None))
    if not lines:
        raise BadInput(f"no build in {path} has ok rows at {MIN_POINTS} or more values of "
                       f"{axis} that one command measured")
    return lines


#: Byte counts from here up are refused: no point's traffic comes near 2^63 bytes (8 EiB),
#: so such a count is a corrupt cell (1e308 bytes at one point of a line make its rate
#: past the fixed part 1e307 GB/s, or a negative one).
MAX_BYTES = 2**63


def _check_cells(row: dict[str, str], where: str) -> None:
    """BadInput (one line, naming ``where``) for a ``bytes`` or ``peak_gbps`` cell that is
    written but holds no count of bytes or no rate.

    Both columns are optional, and a cell that says "none" is treated as absent (the line
    then says nothing of its rate): an empty one (a GPU never calibrated has no peak) or a
    byte count of 0 (a stage that counts no traffic). Anything else is refused: bytes must
    be a whole number below :data:`MAX_BYTES`, the peak a finite number above 0 (an
    infinite peak would make any rate 0 % of it, a NaN count a NaN rate)."""
    text = (row.get("bytes") or "").strip()
    v = number(text)
    if text and not (v is not None and math.isfinite(v) and v.is_integer()
                     and 0 <= v < MAX_BYTES):
        raise BadInput(f"{where}: bytes is {text!r}; harness fit takes a count of bytes, a "
                       "whole number from 0 to 2^63 - 1 (0 or empty: none counted)")
    text = (row.get("peak_gbps") or "").strip()
    v = number(text)
    if text and not (v is not None and math.isfinite(v) and v > 0):
        raise BadInput(f"{where}: peak_gbps is {text!r}; harness fit takes a calibrated peak "
                       "that is a finite number above 0 (empty: not calibrated)")


def _numbers(rows: Sequence[dict[str, str]], column: str) -> np.ndarray | None:
    """A column's positive values, one a row; None where any row lacks one (its cells are
    checked first, :func:`_check_cells`: what is left is a number or none)."""
    try:
        vals = np.array([float(r.get(column) or "nan") for r in rows])
    except ValueError:
        return None
    return vals if bool(np.all(vals > 0)) else None


def summary(lines: Sequence[Line], axis: str) -> list[str]:
    """A line per fit: the build, the rest of its point, its line, and the fixed share at
    each value it was fitted to."""
    out = []
    for ln in lines:
        shares = ", ".join(f"{s.x:g}: {share_text(ln.fixed_share_pct(s.x), ' ')}"
                           for s in ln.samples)
        rate = ""
        if (gbps := ln.marginal_gbps()) is not None and ln.per_unit_bytes is not None:
            of_peak = f" ({100 * gbps / ln.peak_gbps:.1f} % of the calibrated peak)" \
                if ln.peak_gbps else ""
            rate = (f"; past the fixed part {ln.per_unit_bytes:.4g} bytes a unit of {axis} "
                    f"at {gbps:.4g} GB/s{of_peak}")
        out.append(f"{ln.build} at {ln.where()} ({ln.git_sha}): t = {ln.fixed_us:.4g} µs + "
                   f"{ln.per_unit_us:.4g} µs x {axis}; the fixed part's share by {axis}: "
                   f"{shares}; worst residual {ln.worst_residual_pct():.1f} %{rate}")
    return out


def share_text(pct: float, gap: str = "") -> str:
    """A fixed share for the terminal: ``16.7 %`` (``gap`` before the ``%``), or ``-`` where
    there is none (NaN: :meth:`Line.fixed_share_pct` at a fitted time of 0)."""
    return "-" if math.isnan(pct) else f"{pct:.1f}{gap}%"
