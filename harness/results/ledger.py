"""The validation ledger: which kernel sources passed ``harness validate`` on which GPU.

``statistics/validation_ledger.csv`` gets one row per (stage, variant) each time
``harness validate --record`` runs on a GPU. ``harness ledger --check`` recomputes every
kernel's hash (source, headers, options; no GPU needed) and fails when a hash has no passing
GPU row: a kernel edited after its last GPU validation cannot slip through CI.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.kernel import kernel_hash
from harness.contract.stage import Pipeline, Stage
from harness.errors import BadInput
from harness.results import files
from harness.results.rows import CsvWriter

LEDGER_NAME = "validation_ledger.csv"
COLUMNS = ("stage", "variant", "kernel_hash", "status", "gpu", "cc", "driver", "cuda",
           "date", "cases", "passed", "worst_error", "families", "seeds", "git_sha")


def default_path() -> Path:
    """``statistics/validation_ledger.csv`` of the project."""
    return paths.statistics_dir() / LEDGER_NAME


#: The columns a ledger's rows are judged by: a file without them is no ledger.
NEEDED = ("stage", "variant", "kernel_hash", "status", "gpu", "date", "cases", "passed",
          "worst_error")


def read(path: Path | None = None) -> list[dict[str, str]]:
    """Every ledger row: an empty list when the default ledger does not exist yet;
    BadInput when a ledger named by ``path`` does not exist, or a ledger is not a CSV with
    the ``NEEDED`` columns (an empty file has no rows)."""
    p = path or default_path()
    if not p.is_file():
        if path is not None:
            raise BadInput(f"no such ledger: {p}")
        return []
    try:
        with p.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows, header = list(reader), reader.fieldnames
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise BadInput(f"{p} is not a ledger CSV ({type(exc).__name__})") from None
    lacking = [c for c in NEEDED if c not in (header or NEEDED)]
    if lacking:
        raise BadInput(f"{p} is not a ledger CSV: no {', '.join(lacking)} column(s)")
    for i, r in enumerate(rows):
        if None in r or None in r.values():  # more or fewer fields than the header
            raise BadInput(f"{p}: row {i + 1} has {'more' if None in r else 'fewer'} fields "
                           "than the header (a torn or mangled row)")
    return rows


#: Seconds an append waits for another run's append to the ledger. Validations run side by
#: side (one process a stage, or a GPU each) append their rows when they finish, in a moment;
#: two finishing together must both land, where a result file of bench refuses a second
#: writer at once (it is held for a whole sweep).
APPEND_WAIT = 60.0


def open_for_append(path: Path | None = None) -> CsvWriter:
    """The ledger open for appending rows (columns as ``COLUMNS``), by the result-file rules:
    locked (waiting up to ``APPEND_WAIT`` for another append), its header checked, a torn
    last row cut away (``repaired`` says so)."""
    return CsvWriter(path or default_path(), files.APPEND, COLUMNS, require_status=False,
                     wait=APPEND_WAIT)


def _in_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as the ledger writes it: ``COLUMNS``, empty where the row has none."""
    return {c: row.get(c, "") for c in COLUMNS}


def append(rows: Iterable[Mapping[str, Any]], path: Path | None = None) -> Path:
    """Append rows (columns as ``COLUMNS``), writing the header when the file is new."""
    with open_for_append(path) as w:
        for r in rows:
            w.write(_in_columns(r))
    return w.path


class Recorder:
    """The ledger as ``validate --record`` writes it: checked when made (opened for
    appending: its header, a torn last row cut away; a problem is raised then, before any
    GPU work), then let go, each row appended under the lock as its validation ends (an
    interrupt keeps the rows written; validations side by side share the file). An append
    that fails (the lock still held past ``APPEND_WAIT``, say) is kept, not raised, so the
    run's report is still drawn: ``unrecorded`` names it and the rows not written."""

    def __init__(self, path: Path | None = None) -> None:
        with open_for_append(path) as w:
            self.path = w.path
            self._repaired = [w.repaired] if w.repaired else []
        #: Rows written.
        self.rows = 0
        self._error = ""
        self._missed: list[str] = []

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row now (after a failed append, only note it as not written)."""
        if not self._error:
            try:
                with open_for_append(self.path) as w:
                    if w.repaired:  # another run was cut short mid-row
                        self._repaired.append(w.repaired)
                    w.write(_in_columns(row))
                self.rows += 1
                return
            except files.ResultFileError as exc:
                self._error = str(exc)
        self._missed.append(f"{row.get('stage', '?')} [{row.get('variant', '?')}]")

    @property
    def repaired(self) -> str:
        """What was cut from the ledger before appending ('' when nothing)."""
        return "; ".join(self._repaired)

    @property
    def unrecorded(self) -> str:
        """'' where every row landed; else the failed append's line and the rows not
        written."""
        if not self._error:
            return ""
        return (f"{self._error}; not recorded in the ledger: {', '.join(self._missed)} "
                f"({self.rows} row(s) written before it)")


@dataclass(frozen=True)
class LedgerStatus:
    """Whether one (stage, variant) at its current source has a passing GPU record."""

    stage: str
    variant: str
    kernel_hash: str
    ok: bool
    record: dict[str, str] | None
    #: A failed validation of this source that no later full pass on its GPU answers.
    failed: dict[str, str] | None = None

    def describe(self) -> str:
        """One line for the terminal."""
        if self.ok and self.record:
            r = self.record
            return (f"{self.stage} [{self.variant}] {self.kernel_hash}: validated on "
                    f"{r['gpu']} {r['date']} ({r['passed']}/{r['cases']} cases, "
                    f"worst {r['worst_error']})")
        if self.failed:
            f = self.failed
            return (f"{self.stage} [{self.variant}] {self.kernel_hash}: its validation on "
                    f"{f['gpu']} {f['date']} FAILED ({f['passed']}/{f['cases']} cases), and "
                    "no full pass on that GPU came after it (run `harness validate --record` "
                    "there once it is mended)")
        return (f"{self.stage} [{self.variant}] {self.kernel_hash}: NO passing GPU validation "
                "at this source (run `harness validate --record` on a GPU)")


def pipeline_hash(pipe: Pipeline, stages: Mapping[str, Stage]) -> str:
    """A pipeline's hash: over the kernel hashes of every variant of every step."""
    parts = [f"{s}:{v.name}={kernel_hash(stages[s], v)}" for s in pipe.steps
             for v in stages[s].variants]
    return hashlib.sha256(";".join(parts).encode()).hexdigest()[:16]


#: The seeds a full validation runs (``harness validate``'s default): a record of fewer is
#: a narrowed run, kept in the ledger but not counted by the check.
FULL_SEEDS = 3


def full_pass(row: Mapping[str, str], families: Iterable[str]) -> bool:
    """Whether a ledger row records a whole validation that passed on a GPU: status pass,
    every case passed (at least one), every family of the target and the full seeds."""
    try:
        cases, passed, seeds = int(row["cases"]), int(row["passed"]), int(row["seeds"])
    except (KeyError, TypeError, ValueError):
        return False
    return (row["status"] == "pass" and row["gpu"] not in ("", "cpu")
            and 0 < cases == passed and seeds >= FULL_SEEDS
            and set(families) <= set((row.get("families") or "").split(",")))


def standing(rows: list[dict[str, str]], whole: Callable[[Mapping[str, str]], bool]
             ) -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """Of the ledger rows of one source (one stage, variant and hash, in the file's order):
    the last that ``whole`` takes for a full pass (:func:`full_pass` of the target's
    families, say), and the failed validation that revokes it, if any. A validation that
    failed on a GPU stands until a full pass on that GPU comes after it (by date, then the
    file's order): a pass on another GPU, or one before it, does not answer it. A partial
    run that passed (fewer cases) neither passes nor revokes."""
    order = {id(r): (r.get("date", ""), i) for i, r in enumerate(rows)}
    passes = [r for r in rows if whole(r)]
    for r in sorted((r for r in rows if r.get("status") != "pass"), key=lambda r: order[id(r)],
                    reverse=True):
        if not any(p["gpu"] == r["gpu"] and order[id(p)] > order[id(r)] for p in passes):
            return (passes[-1] if passes else None), r
    return (passes[-1] if passes else None), None


def check(stages: Iterable[Stage], rows: list[dict[str, str]],
          pipelines: Iterable[Pipeline] = (),
          by_name: Mapping[str, Stage] | None = None) -> list[LedgerStatus]:
    """The ledger status of every variant of every stage (and of every pipeline): ok where
    a row of its current hash records a full validation that passed (:func:`full_pass`) and
    no failed one stands against it (:func:`standing`)."""
    stages = list(stages)
    names = dict(by_name or {s.name: s for s in stages})
    items = [(st.name, v.name, kernel_hash(st, v), st.families)
             for st in stages for v in st.variants]
    items += [(p.name, v.name, pipeline_hash(p, names), p.families)
              for p in pipelines for v in p.variants]
    out = []
    for name, vname, h, fams in items:
        mine = [r for r in rows
                if r["stage"] == name and r["variant"] == vname and r["kernel_hash"] == h]
        last, failed = standing(mine, lambda r, fams=fams: full_pass(r, fams))
        out.append(LedgerStatus(name, vname, h, last is not None and failed is None, last,
                                failed))
    return out
