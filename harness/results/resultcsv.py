"""The two kinds of results CSV (stage rows, pipeline rows) and one read whole and checked:
the columns that name a row's point and hold its time (:class:`Schema`), the file's rows
with their lines (:func:`read`), and the check every reader of a row's numbers shares
(:func:`check_row`: ``harness compare``, ``fit``, ``best``, ``merge`` and the report).

Anything a reader cannot take is a :class:`HarnessError` (exit status 2) naming the file and
line: a missing, unreadable, binary or empty file, a header without rows, another schema, a
torn row, a time that is NaN, infinite, zero or negative (a pipeline's other intervals, in
their columns or its ``intervals`` JSON, NaN, infinite or negative).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.results.rows import PROCESS_COLUMNS, STATUSES

#: The columns that name a row's point (with its kind's own: the launch, the mode).
POINT = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params", "l2")
_CLOCKS = ("clock_mhz_median", "clock_mhz_min")
#: The columns that mark a CSV as rows of the harness's, beside one of TIMES: one that has
#: them but lacks another needed column is a damaged results file, not another kind of CSV
#: (the seed's summaries, the sanitizer's lists and ncu's raw pages have no ``backend``).
MARKS = frozenset({"stage", "backend"})
#: The column an ok row's time is in: a stage row's median, a pipeline row's total.
TIMES = ("median_us", "total_us")


def marked(header: set[str], times: Iterable[str] = TIMES) -> bool:
    """Whether a CSV header has the marks of the harness's rows: MARKS and one of
    ``times`` (a kind's own time column, or either)."""
    return header >= MARKS and bool(header.intersection(times))
#: A point's sizes, where a row has them: positive whole numbers (a key that ``compare``
#: pairs rows by, and ``best`` and ``fit`` group them by: a mangled one re-pairs or drops
#: rows without a word).
SIZES = ("batch", "in_f", "out_f")
#: The rates a row derives from its time: numbers >= 0 where given.
RATES = ("gbps", "pct_peak", "peak_gbps", "tops", "pct_datasheet_tops", "datasheet_tops",
         "speedup_vs_best_peer")


@dataclass(frozen=True)
class Schema:
    """The columns that identify a row and hold its time, for one kind of results CSV."""

    name: str
    key: tuple[str, ...]
    time: str
    noise: str
    spread: tuple[str, str] | None
    #: Key columns that came later, with the value every row had before.
    later: tuple[tuple[str, str], ...] = ()

    def value(self, row: Mapping[str, str], column: str) -> str:
        """A key column's value in ``row``; for a column that came later, the value rows had
        before it, where the row has none."""
        return row.get(column) or dict(self.later).get(column, "")

    def required(self) -> tuple[str, ...]:
        """Columns a file of this kind must have."""
        timing = (self.time, self.noise, *(self.spread or ()))
        later = dict(self.later)
        return (*(k for k in self.key if k not in later), "status", *timing)


STAGE = Schema("stage", (*POINT, "launch"), "median_us", "noise_pct", ("p10_us", "p90_us"),
               later=(("launch", "stream"),))
PIPELINE = Schema("pipeline", (*POINT, "mode"), "total_us", "total_noise_pct", None,
                  later=(("variant", "default"),))


def run_of(row: Mapping[str, str]) -> tuple[str, str]:
    """The run a row came from: the commit and the command that measured it. Rows of one
    run are set against each other; rows of different processes differ by more than their
    noise (README, "How a time is measured")."""
    return row.get("git_sha", ""), row.get("command", "")


def process_of(row: Mapping[str, str]) -> tuple[str, ...]:
    """The run a row came from and the process within it: on a cluster, one command's rows
    are measured by several workers, each its own process (empty in a plain run)."""
    return (*run_of(row), *(row.get(c, "") for c in PROCESS_COLUMNS))


@dataclass(frozen=True)
class Results:
    """A results CSV read whole and checked: its kind, rows, and each row's line."""

    path: Path
    schema: Schema
    rows: tuple[dict[str, str], ...]
    lines: tuple[int, ...]


def cell(r: Mapping[str, str], col: str) -> float | None:
    """A cell's number, or None where it is empty."""
    v = r.get(col) or ""
    return float(v) if v.strip() else None


def read(path: Path) -> Results:
    """A results CSV, whole and checked; HarnessError (one line, naming the file and line)
    for anything :func:`compare` cannot take."""
    path = Path(path)
    if path.is_dir():
        raise HarnessError(f"{path} is a folder, not a results CSV")
    if not path.is_file():
        raise HarnessError(f"no such results file: {path}")
    table: list[tuple[int, list[str]]] = []  # each record with the line it starts on
    try:
        text = path.read_text(encoding="utf-8-sig")
        if "\0" in text:  # csv reads NUL bytes as text since Python 3.11
            raise HarnessError(f"{path} is not a results CSV: it holds NUL bytes (binary?)")
        # Strictly: a quote left open at the end (a write cut inside a quoted cell) is no
        # cell that runs to the end of the file.
        reader, start = csv.reader(io.StringIO(text, newline=""), strict=True), 1
        for cells in reader:
            if cells:  # a blank line is no record
                table.append((start, cells))
            start = reader.line_num + 1
    except UnicodeDecodeError:
        raise HarnessError(f"{path} is not a results CSV: not UTF-8 text (binary?)") from None
    except csv.Error as exc:
        raise HarnessError(f"{path} is not a results CSV: {exc} (line {reader.line_num}: a "
                           "torn or mangled row)") from None
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not table:
        raise HarnessError(f"{path} is empty: no header, no rows")
    header = table[0][1]
    schema = STAGE if "median_us" in header else PIPELINE if "total_us" in header else None
    missing = [c for c in (schema or STAGE).required() if c not in header]
    if schema is None or missing:
        raise HarnessError(
            f"{path} is not a stage or pipeline results CSV: it lacks "
            f"{', '.join(missing) if schema else 'median_us (stage) or total_us (pipeline)'}")
    if len(table) == 1:
        raise HarnessError(f"{path} has a header but no rows")
    rows, lines = [], []
    for n, cells in table[1:]:
        if len(cells) != len(header):
            raise HarnessError(f"{path}, line {n}: {len(cells)} fields where the header has "
                               f"{len(header)} (a torn or mangled row)")
        row = dict(zip(header, cells, strict=True))
        check_row(row, schema, f"{path}, line {n}")
        rows.append(row)
        lines.append(n)
    return Results(path, schema, tuple(rows), tuple(lines))


def check_row(row: Mapping[str, str], schema: Schema, where: str) -> None:
    """A row whose status and numbers a verdict can rest on; HarnessError saying what is
    wrong otherwise (also :mod:`.readback`'s rule for the rows a report shows, and what
    ``harness merge`` combines). Besides the row's time, every other interval it holds (a
    pipeline's ``*_us`` and ``*_noise_pct`` columns, and its ``intervals`` JSON) must be a
    number >= 0 where it is given: merge widens each interval's noise by its spread across
    the files, which a NaN or an infinity turns into a crash, and a report would show a
    negative one as a time. A size (SIZES) must be a positive whole number and a rate
    (RATES) a number >= 0 where given."""
    status = row.get("status") or ""
    if status not in STATUSES:
        raise HarnessError(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
    ok = status == "ok"
    times = (schema.time, *(schema.spread or ()))
    # (a column that is no string is csv's list of cells past the header: no interval)
    intervals = [c for c in row if isinstance(c, str) and c not in (*times, schema.noise)
                 and c.endswith(("_us", "_noise_pct"))]
    for col in (*times, schema.noise, *_CLOCKS, "throttled_samples", *intervals):
        v = (row.get(col) or "").strip()
        if not v:
            if ok and col in (*times, schema.noise):
                raise HarnessError(f"{where}: an ok row without {col}")
            continue
        try:
            x = float(v)
        except ValueError:
            raise HarnessError(f"{where}: {col} is {v!r}, not a number") from None
        positive = col in times or col in _CLOCKS
        if not math.isfinite(x) or x < 0 or (positive and x == 0):
            raise HarnessError(f"{where}: {col} is {v}; it must be a "
                               f"{'positive' if positive else 'non-negative'} number")
        if col == "throttled_samples" and x != int(x):
            raise HarnessError(f"{where}: throttled_samples is {v}, not a count")
    if ok and schema.spread is not None:
        lo, mid, hi = (float(row[c]) for c in (schema.spread[0], schema.time, schema.spread[1]))
        if not lo <= mid <= hi:
            raise HarnessError(f"{where}: {schema.spread[0]} <= {schema.time} <= "
                               f"{schema.spread[1]} does not hold ({lo}, {mid}, {hi})")
    for col in SIZES:
        text = (row.get(col) or "").strip()
        if text and not (text.isascii() and text.isdigit() and int(text) > 0):
            raise HarnessError(f"{where}: {col} is {text!r}, not a positive whole number")
    for col in RATES:
        text = (row.get(col) or "").strip()
        if not text:
            continue
        try:
            x = float(text)
        except ValueError:
            raise HarnessError(f"{where}: {col} is {text!r}, not a number") from None
        if not math.isfinite(x) or x < 0:
            raise HarnessError(f"{where}: {col} is {text}; it must be a finite number >= 0")
    _check_intervals(row.get("intervals") or "", where)


def _check_intervals(text: str, where: str) -> None:
    """HarnessError unless a pipeline row's ``intervals`` cell is empty or a JSON object of
    ``{name: {"median_us": ..., "noise_pct": ...}}``, each median a number >= 0 and each
    noise, where given, one too (JSON's NaN and Infinity are read as numbers, and refused
    here as the columns' are)."""
    if not text.strip():
        return
    try:
        got = json.loads(text)
    except ValueError:
        got = None
    if not isinstance(got, dict):
        raise HarnessError(f"{where}: intervals is not a JSON object")
    for name, iv in got.items():
        if not isinstance(iv, dict) or "median_us" not in iv:
            raise HarnessError(f"{where}: intervals' {name} is {json.dumps(iv)}, not an "
                               "object with a median_us")
        for key in ("median_us", "noise_pct"):
            if key not in iv:
                continue
            v = iv[key]
            if isinstance(v, bool) or not isinstance(v, int | float) or not _finite(v) \
                    or v < 0:
                raise HarnessError(f"{where}: intervals' {name} {key} is {json.dumps(v)}; it "
                                   "must be a non-negative number")


def _finite(v: int | float) -> bool:
    """Whether a JSON number is finite as a float: JSON allows an integer past float's
    range, which is no finite time either (``math.isfinite`` raises on it)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False
