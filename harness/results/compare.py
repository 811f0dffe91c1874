"""``harness compare``: two result CSVs row by row, a verdict and a reason for every row.

Both files must be whole results CSVs of one kind: stage rows (``median_us``, the samples'
``p10_us``/``p90_us`` and ``noise_pct``) or pipeline rows (the end-to-end ``total_us`` and
``total_noise_pct``). Rows are matched by their key (what ran, where, how it was launched);
a key written twice in a file (a ``--graph`` run whose peers fell back to stream launches,
say) is matched by its occurrence, the first with the first, as nvbench-compare-robust
pairs repeated states. A row only in NEW is ``new``, only in OLD ``gone``, not ``ok`` on
either side ``failed``; rows ok on both sides get the verdict of :mod:`.verdict`. The exit
status a gate takes counts as regressions the slower rows, the ambiguous ones slower by
their medians past ``--fail-unclear`` (10 %), the rows no longer ok, and our own rows gone
(:meth:`CompareReport.regressions`).

Anything that cannot be compared is a :class:`HarnessError` (exit status 2) naming the file
and line: what :mod:`.resultcsv` refuses in either file, or no row that matches. The verdict
rule itself is :mod:`.verdict`.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.results.resultcsv import POINT, Results, Schema, cell, read
from harness.results.rows import host_time
from harness.results.verdict import AMBIGUOUS, FASTER, PRESETS, SAME, SLOWER, Preset, Side, decide

NEW, GONE, FAILED = "new", "gone", "failed"
#: Every verdict a row can get, in the order the summary counts them.
VERDICTS = (FASTER, SAME, SLOWER, AMBIGUOUS, NEW, GONE, FAILED)
#: The backends whose rows are the harness's own kernels (on a GPU) or the references that
#: stand in for them (on the CPU): one of them gone from NEW is a regression, a peer's not.
OWN_BACKENDS = ("pycuda", "numpy")
#: The default of ``--fail-unclear``: an ambiguous row this much slower (%) fails the gate.
UNCLEAR_PCT = 10.0


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
    #: Ambiguous because the clock explains the change (:class:`.verdict.Decision`).
    throttled: bool = False
    #: The change in clock cycles of an ambiguous row with both clocks (else None).
    cycles_pct: float | None = None

    def weighed_pct(self) -> float | None:
        """The change a gate weighs: in clock cycles where both rows recorded the clock
        (a lower clock is not the kernel's slowdown), else in time."""
        return self.cycles_pct if self.cycles_pct is not None else self.change_pct

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
    #: Key columns the rows were matched without (``--ignore``: one kernel against
    #: another, where a row of one without its twin is no loss).
    ignored: tuple[str, ...] = ()
    #: How much slower (%) an ambiguous row may be before it fails the gate: the noise
    #: cannot clear it, and ambiguous differences of 2-4 % between processes on one GPU
    #: model are in the committed rows (kernels/NOTES.md), so it is wider than
    #: ``threshold_pct`` (and never below it).
    unclear_pct: float = UNCLEAR_PCT

    def counts(self) -> dict[str, int]:
        """How many rows got each verdict, every verdict named."""
        c = Counter(r.verdict for r in self.rows)
        return {v: c[v] for v in VERDICTS}

    def regressions(self) -> list[RowVerdict]:
        """Rows slower than before; ambiguous ones slower by ``unclear_pct`` or more (at
        least ``threshold_pct``; in clock cycles where both rows recorded the clock, else
        by their medians: the noise cannot clear them, so a gate does not pass them),
        unless the clock explains the change (the same cycles at a lower clock);
        rows ok before and not now; and rows of our own backends ok before and gone now (a
        peer's row gone is no regression: a run may time fewer peers; nor is any where
        rows were matched across kernels, ``ignored``)."""
        return [r for r in self.rows if r.verdict == SLOWER
                or (r.verdict == AMBIGUOUS and not r.throttled
                    and (w := r.weighed_pct()) is not None
                    and w >= max(self.threshold_pct, self.unclear_pct))
                or (r.old_status == "ok" and r.new_status not in ("ok", ""))
                or (r.verdict == GONE and r.old_status == "ok" and not self.ignored
                    and r.point.get("backend") in OWN_BACKENDS)]

    @property
    def exit_code(self) -> int:
        """1 when a row regressed, else 0 (input that cannot be compared never gets here)."""
        return 1 if self.regressions() else 0


def run(old: Path, new: Path, preset: str = "default", threshold_pct: float = 2.0,
        z: float | None = None, ignore: tuple[str, ...] = (),
        unclear_pct: float = UNCLEAR_PCT) -> CompareReport:
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
    if not math.isfinite(unclear_pct) or unclear_pct < 0:
        raise HarnessError(f"--fail-unclear {unclear_pct:g}: a percentage >= 0")
    report = CompareReport(old, new, a.schema.name, p, threshold_pct, tuple(rows),
                           tuple(ignore), unclear_pct)
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
        point = {**{c: row.get(c, "") for c in POINT if c not in point}, **point}
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
    ta, tb = (cell(r, schema.time) if r else None for r in (a, b))
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
                      100 * max(old.noise, new.noise), d.reason + said, held, d.throttled,
                      d.cycles_pct)


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
                cell(r, "clock_mhz_median"), cell(r, "clock_mhz_min"),
                int(float(throttled)) if throttled is not None else None)

