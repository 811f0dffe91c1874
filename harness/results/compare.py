"""``harness compare``: two result CSVs row by row, a verdict and a reason for every row.

Both files must be whole results CSVs of one kind: stage rows (``median_us``, the samples'
``p10_us``/``p90_us`` and ``noise_pct``) or pipeline rows (the end-to-end ``total_us`` and
``total_noise_pct``). Rows are matched by their key (what ran, where, how it was launched);
a key written twice in a file (a ``--graph`` run whose peers fell back to stream launches,
say) is matched by its occurrence, the first with the first, as nvbench-compare-robust
pairs repeated states. A row only in NEW is ``new``, only in OLD ``gone``, not ``ok`` on
either side ``failed``; rows ok on both sides get the verdict of :mod:`.verdict`.

Anything that cannot be compared is a :class:`HarnessError` (exit status 2) naming the file
and line: a missing, unreadable, binary or empty file, a header without rows, another schema,
a torn row, a time that is NaN, infinite, zero or negative (a pipeline's other intervals, in
their columns or its ``intervals`` JSON, NaN, infinite or negative), or no row that matches.

Past 300 lines (about 400): the reading and checking of both files belongs with the
matching, and the row check is the one the report and merge read by too (the verdict rule
itself is :mod:`.verdict`); a module of its own for reading is the split when it grows.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.results.rows import STATUSES, host_time
from harness.results.verdict import AMBIGUOUS, FASTER, PRESETS, SAME, SLOWER, Preset, Side, decide

NEW, GONE, FAILED = "new", "gone", "failed"
#: Every verdict a row can get, in the order the summary counts them.
VERDICTS = (FASTER, SAME, SLOWER, AMBIGUOUS, NEW, GONE, FAILED)

_POINT = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params", "l2")
_CLOCKS = ("clock_mhz_median", "clock_mhz_min")


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


STAGE = Schema("stage", (*_POINT, "launch"), "median_us", "noise_pct", ("p10_us", "p90_us"),
               later=(("launch", "stream"),))
PIPELINE = Schema("pipeline", (*_POINT, "mode"), "total_us", "total_noise_pct", None,
                  later=(("variant", "default"),))


def run_of(row: Mapping[str, str]) -> tuple[str, str]:
    """The run a row came from: the commit and the command that measured it. Rows of one
    run are set against each other; rows of different processes differ by more than their
    noise (README, "How a time is measured")."""
    return row.get("git_sha", ""), row.get("command", "")


@dataclass(frozen=True)
class Results:
    """A results CSV read whole and checked: its kind, rows, and each row's line."""

    path: Path
    schema: Schema
    rows: tuple[dict[str, str], ...]
    lines: tuple[int, ...]


@dataclass(frozen=True)
class RowVerdict:
    """One key's comparison: both statuses ('' where the row is missing), the times (µs),
    the change and the larger noise (%), and why."""

    point: dict[str, str]
    occurrence: int
    verdict: str
    old_status: str
    new_status: str
    old_us: float | None
    new_us: float | None
    change_pct: float | None
    noise_pct: float | None
    reason: str
    #: Which of the two rows ("before", "now") say their time can hold host time.
    host_time: tuple[str, ...] = ()

    def label(self) -> str:
        """The point in a few words: ``batch=1 in_f=3584`` (and what is not the default)."""
        p = self.point
        words = [f"{k}={p[k]}" for k in ("batch", "in_f", "out_f", "mode") if p.get(k)]
        words += [f"{k}={p[k]}" for k, usual in (("family", "normal"), ("l2", "cold"))
                  if p.get(k) and p[k] != usual]
        return " ".join(words) + (f" #{self.occurrence}" if self.occurrence > 1 else "")


@dataclass(frozen=True)
class CompareReport:
    """Every row's verdict, and the exit status a CI gate takes from them."""

    old: Path
    new: Path
    schema: str
    preset: Preset
    threshold_pct: float
    rows: tuple[RowVerdict, ...]

    def counts(self) -> dict[str, int]:
        """How many rows got each verdict, every verdict named."""
        c = Counter(r.verdict for r in self.rows)
        return {v: c[v] for v in VERDICTS}

    def regressions(self) -> list[RowVerdict]:
        """Rows slower than before, or ok before and not now."""
        return [r for r in self.rows if r.verdict == SLOWER
                or (r.old_status == "ok" and r.new_status not in ("ok", ""))]

    @property
    def exit_code(self) -> int:
        """1 when a row regressed, else 0 (input that cannot be compared never gets here)."""
        return 1 if self.regressions() else 0


def run(old: Path, new: Path, preset: str = "default", threshold_pct: float = 2.0,
        z: float | None = None, ignore: tuple[str, ...] = ()) -> CompareReport:
    """Compare two results CSVs (``harness compare``): HarnessError for anything that
    cannot be compared; ``z`` replaces the preset's. ``ignore`` names key columns rows are
    matched without (``stage``, ``variant``, ``params``: one kernel against another at the
    same shapes)."""
    p = evidence(preset, threshold_pct, z)
    a, b = read(old), read(new)
    if a.schema is not b.schema:
        raise HarnessError(f"{old} holds {a.schema.name} rows and {new} {b.schema.name} "
                           "rows: nothing to compare")
    if ignore:
        unknown = sorted(set(ignore) - set(a.schema.key))
        if unknown:
            raise HarnessError(f"--ignore {', '.join(unknown)}: not a key column (key columns: "
                               f"{', '.join(a.schema.key)})")
        schema = dataclasses.replace(a.schema,
                                     key=tuple(c for c in a.schema.key if c not in ignore))
        for side in (a, b):  # rows the ignored columns told apart would pair by file order
            _one_row_a_key(side, a.schema, schema, ignore)
        a, b = dataclasses.replace(a, schema=schema), dataclasses.replace(b, schema=schema)
    rows = compare(a, b, p, threshold_pct / 100)
    if not any(r.verdict not in (NEW, GONE) for r in rows):
        raise HarnessError(f"no row of {new} matches a row of {old} (stages: "
                           f"{_stages(a)} vs {_stages(b)}): nothing to compare")
    report = CompareReport(old, new, a.schema.name, p, threshold_pct, tuple(rows))
    if not any(r.verdict not in (NEW, GONE, FAILED) for r in rows) and not report.exit_code:
        raise HarnessError(f"no row is ok in both {old} and {new}: nothing was timed twice")
    return report


def _one_row_a_key(side: Results, full: Schema, narrow: Schema,
                   ignore: tuple[str, ...]) -> None:
    """HarnessError where two rows of one file are one point only once the ``ignore``d
    columns are left out (a peer's row and ours, say, with ``--ignore backend``): matched by
    their order in the file, they would be set against the other file's rows at random."""
    seen: dict[tuple[str, ...], tuple[str, ...]] = {}
    for row, line in zip(side.rows, side.lines, strict=True):
        key = tuple(narrow.value(row, c) for c in narrow.key)
        whole = tuple(full.value(row, c) for c in full.key)
        if key in seen and seen[key] != whole:
            told = [c for c in ignore if row.get(c, "") != dict(zip(full.key, seen[key],
                                                                    strict=True)).get(c, "")]
            raise HarnessError(
                f"{side.path}, line {line}: with --ignore {', '.join(ignore)}, two rows are "
                f"one point (they differ in {', '.join(told) or 'an ignored column'} only): "
                "compare files that hold one row a point once those columns are left out")
        seen.setdefault(key, whole)


def evidence(preset: str, threshold_pct: float, z: float | None) -> Preset:
    """The named preset (``z`` replacing its own), after checking the options a verdict
    takes: HarnessError (one line) for an unknown preset or a threshold or z that is not
    a number >= 0."""
    if preset not in PRESETS:
        raise HarnessError(f"unknown preset {preset!r}: one of {', '.join(PRESETS)}")
    for v, what in ((threshold_pct, "--threshold"), (z, "--z")):
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise HarnessError(f"{what} must be a number >= 0, not {v}")
    p = PRESETS[preset]
    return p if z is None else Preset(p.name, z, p.gap, p.center, p.overlap, p.ceiling)


def _stages(r: Results) -> str:
    return ", ".join(sorted({row["stage"] for row in r.rows}))


def compare(old: Results, new: Results, preset: Preset, threshold: float) -> list[RowVerdict]:
    """A verdict for every key in either file: OLD's order, then the rows only in NEW."""
    schema = old.schema
    a, b = _keyed(old), _keyed(new)
    out = []
    for key in [*a, *(k for k in b if k not in a)]:
        ra, rb = a.get(key), b.get(key)
        point = dict(zip(schema.key, key[0], strict=True))
        row = rb or ra or {}  # columns matched without (``ignore``): the new side's values
        point = {**{c: row.get(c, "") for c in _POINT if c not in point}, **point}
        out.append(_row(schema, point, key[1], ra, rb, preset, threshold))
    return out


def _keyed(r: Results) -> dict[tuple[tuple[str, ...], int], dict[str, str]]:
    seen: Counter[tuple[str, ...]] = Counter()
    out = {}
    for row in r.rows:
        k = tuple(r.schema.value(row, c) for c in r.schema.key)
        seen[k] += 1
        out[(k, seen[k])] = row
    return out


def _row(schema: Schema, point: dict[str, str], occurrence: int, a: dict[str, str] | None,
         b: dict[str, str] | None, preset: Preset, threshold: float) -> RowVerdict:
    ta, tb = (_num(r, schema.time) if r else None for r in (a, b))
    sa, sb = (r["status"] if r else "" for r in (a, b))
    held = tuple(when for when, r in (("before", a), ("now", b))
                 if r and host_time(r.get("reason")))
    if a is None or b is None:
        verdict, reason = (NEW, "only in NEW") if a is None else (GONE, "only in OLD")
        return RowVerdict(point, occurrence, verdict, sa, sb, ta, tb, None, None, reason,
                          held)
    if sa != "ok" or sb != "ok":
        wa, wb = _why(a), _why(b)
        if sa == "ok":
            reason = f"ok before, {wb} now"
        elif sb == "ok":
            reason = f"{wa} before, ok now"
        elif wa == wb:
            reason = f"not ok in either: {wa}"
        else:
            reason = f"not ok in either: {wa} before, {wb} now"
        return RowVerdict(point, occurrence, FAILED, sa, sb, ta, tb, None, None, reason, held)
    old, new = side(schema, a), side(schema, b)
    d = decide(old, new, preset, threshold)
    # What the rows say of their times that no column does: host time can be inside.
    said = "".join(f"; the time {when} can hold host time ({host_time(r.get('reason'))})"
                   for when, r in (("before", a), ("now", b)) if when in held)
    return RowVerdict(point, occurrence, d.verdict, sa, sb, ta, tb, d.change_pct,
                      100 * max(old.noise, new.noise), d.reason + said, held)


def _why(r: dict[str, str], most: int = 60) -> str:
    """A status with the start of its reason (a validation failure's reason runs long), and
    where the row kept a time that can hold host time, that (the notes on a failed row's
    time come after its failure, past the cut)."""
    why = r.get("reason") or "no reason given"
    cut = why if len(why) <= most else why[:most - 3] + "..."
    said = host_time(r.get("reason"))
    if said and "host time can be inside" not in cut:
        cut += f"; its time can hold host time ({said})"
    return f"{r['status']} ({cut})"


def side(schema: Schema, r: dict[str, str]) -> Side:
    """What an ok row of a ``schema`` file says about its point's time, for the verdict."""
    spread = None
    if schema.spread is not None:
        spread = (float(r[schema.spread[0]]), float(r[schema.spread[1]]))
    throttled = r.get("throttled_samples") or None
    return Side(float(r[schema.time]), float(r[schema.noise]) / 100, spread,
                _num(r, "clock_mhz_median"), _num(r, "clock_mhz_min"),
                int(float(throttled)) if throttled is not None else None)


def _num(r: dict[str, str], col: str) -> float | None:
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
    negative one as a time."""
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
