"""Result CSVs read back for display: which files are stage or pipeline CSVs, and their rows
checked (every time and rate a finite number, an ok row's time positive, a size a positive
whole number, and what ``harness compare`` checks) before a plot or a table shows them."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.results import files, pipeline_rows, resultcsv
from harness.results import rows as results


def number(v: str) -> float | None:
    """``v`` as a float, or None (empty, or not a number)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _csvs(folder: Path) -> list[Path]:
    """The folder's ``*.csv`` entries, by name; HarnessError where the folder cannot be
    listed (a glob would read an unreadable folder as an empty one: no rows, so nothing to
    check, and a check that passes)."""
    try:
        names = os.listdir(folder)
    except OSError as exc:
        raise HarnessError(f"cannot read the folder {folder}: {exc.strerror or exc}") from None
    out = []
    for n in sorted(names):
        if not n.endswith(".csv"):
            continue
        p = Path(folder) / n
        if (why := files.not_regular(p)) is not None:
            raise HarnessError(why)
        out.append(p)
    return out



def _csvs_with(folder: Path, columns: set[str]) -> list[Path]:
    """The folder's CSVs whose header has every one of ``columns``; HarnessError naming a
    CSV that is not text, one with no header, and one that has the marks of these rows
    (``resultcsv.marked`` by the time column among ``columns``) but lacks others of
    ``columns``: a damaged file is said, never passed over as if it were another kind."""
    out = []
    time = columns & set(TIME)
    for p in _csvs(folder):
        try:
            with p.open(encoding="utf-8-sig") as f:  # a BOM is no part of the header
                header = f.readline()
        except (OSError, UnicodeDecodeError) as exc:
            raise HarnessError(f"{p}: not a readable CSV ({type(exc).__name__})") from None
        have = {c.strip().strip('"') for c in header.strip().split(",")} - {""}
        if not have:
            raise HarnessError(f"{p} is empty: no header, no rows")
        if columns <= have:
            out.append(p)
        elif time and resultcsv.marked(have, time):
            lacking = ", ".join(sorted(columns - have))
            raise HarnessError(f"{p} has the rows of a results CSV but lacks {lacking}: "
                               "damaged, or not written by the harness")
    return out


#: The column an ok row's time is in: a stage row's median, a pipeline row's total.
TIME = resultcsv.TIMES
#: The columns of a point's sizes, where a row has them: a plot's x axis, a table's point.
SIZES = resultcsv.SIZES
#: The rates a table or a plot shows (a time, ``*_us``, is checked as one too).
RATES = resultcsv.RATES


def results_folder(folder: Path) -> Path:
    """``folder``, a results folder that exists; HarnessError otherwise."""
    if not Path(folder).is_dir():
        raise HarnessError(f"no such folder: {folder}")
    return Path(folder)


def read_checked(path: Path) -> list[dict[str, str]]:
    """The rows of a results CSV, each time and rate in it a finite number, an ok row's
    time a positive one, each size a positive whole number, and each row as
    :func:`.resultcsv.check_row` takes it (a status, a noise >= 0); HarnessError naming the
    file and line otherwise (a NaN, a zero or a garbled cell would draw a wrong plot, or
    none)."""
    try:
        rows = results.read_rows(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise HarnessError(f"{path}: not a readable CSV ({type(exc).__name__})") from None
    for line, r in enumerate(rows, start=2):
        # csv's reader keeps a row of another field count: the fields past the header under
        # the key None, the missing ones as None values. Such a row is damage, not a point.
        extra: list[str] = r.pop(None, None) or []  # type: ignore[call-overload]
        missing = sum(v is None for v in r.values())
        if extra or missing:
            raise HarnessError(f"{path}, line {line}: {len(r) - missing + len(extra)} fields "
                               f"where the header has {len(r)}")
        for col, text in r.items():
            if not isinstance(col, str) or not (col.endswith("_us") or col in RATES) \
                    or text in ("", None):
                continue
            v = number(text)
            positive = not (r.get("status") == "ok" and col in TIME) or (v or 0) > 0
            if v is None or not math.isfinite(v) or not positive:
                raise HarnessError(f"{path}, line {line}: {col} is {text!r}, not a "
                                   f"{'positive' if col in TIME else 'finite'} number")
        if r.get("intervals"):  # a pipeline row's own intervals, which its table lists
            try:
                ok = isinstance(json.loads(r["intervals"]), dict)
            except ValueError:
                ok = False
            if not ok:
                raise HarnessError(f"{path}, line {line}: intervals is not a JSON object")
        kind = resultcsv.STAGE if "median_us" in r else resultcsv.PIPELINE
        resultcsv.check_row(r, kind, f"{path}, line {line}")
    for col in SIZES:  # a point's size is there in every row of a file, or in none
        given = [bool(r.get(col)) for r in rows]
        if any(given) and not all(given):
            raise HarnessError(f"{path}, line {given.index(False) + 2}: {col} is empty where "
                               "other rows have one")
    return rows


#: Stage columns added after the first results were committed: a CSV written before one
#: of them still counts as a stage CSV (its rows show '-' there).
LATER_COLUMNS = frozenset({
    "launch", "clock_mhz_median", "clock_mhz_min", "clock_mhz_nominal", "throttled_samples",
    "tops", "pct_datasheet_tops", "datasheet_tops"})


def stage_files(folder: Path) -> list[Path]:
    """The stage CSVs of the folder (an older one, without the later columns, included)."""
    return _csvs_with(folder, set(results.COLUMNS) - LATER_COLUMNS)


def read_stage_rows(folder: Path, stages: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Every row of the folder's stage CSVs (of ``stages`` only, when given), checked as the
    report reads them."""
    return [r for p in stage_files(Path(folder)) if not stages or p.stem in stages
            for r in read_checked(p)]


def pipeline_files(folder: Path) -> list[Path]:
    """The pipeline CSVs of the folder (their rows carry intervals and a ``total_us``)."""
    return _csvs_with(folder, {"total_us", "kernel_hashes"})  # ``variant`` came later


def intervals(rows: Sequence[dict[str, str]]) -> list[str]:
    """The intervals (``LABELS`` keys) that some row measured, total first."""
    keys = [k for k in pipeline_rows.LABELS if any(number(r.get(f"{k}_us", "")) is not None
                                              for r in rows)]
    return sorted(keys, key=lambda k: k != "total")


def own_intervals(row: dict[str, Any]) -> list[str]:
    """A pipeline row's intervals of its own names (the ``intervals`` JSON column:
    spike_linear's activation and gemm, say) as ``name median``, by name; none where the
    column is empty or not such an object."""
    try:
        got = json.loads(row.get("intervals") or "{}")
    except (TypeError, ValueError):
        return []
    if not isinstance(got, dict):
        return []
    return [f"{k} {float(v['median_us']):.1f}" for k, v in sorted(got.items())
            if isinstance(v, dict) and isinstance(v.get("median_us"), int | float)]


def x_axis(rows: Sequence[dict[str, str]]) -> str:
    """The rows' x axis: the batch, or out_f for the weight stages (no batch)."""
    return "batch" if any(r["batch"] for r in rows) else "out_f"
