"""The validation ledger: which kernel sources passed ``harness validate`` on which GPU.

``statistics/validation_ledger.csv`` gets one row per (stage, variant) each time
``harness validate --record`` runs on a GPU. ``harness ledger --check`` recomputes every
kernel's hash (source, headers, options; no GPU needed) and fails when a hash has no passing
GPU row: a kernel edited after its last GPU validation cannot slip through CI.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.kernel import kernel_hash
from harness.contract.stage import Pipeline, Stage

LEDGER_NAME = "validation_ledger.csv"
COLUMNS = ("stage", "variant", "kernel_hash", "status", "gpu", "cc", "driver", "cuda",
           "date", "cases", "passed", "worst_error", "families", "seeds", "git_sha")


def default_path() -> Path:
    """``statistics/validation_ledger.csv`` of the project."""
    return paths.statistics_dir() / LEDGER_NAME


def read(path: Path | None = None) -> list[dict[str, str]]:
    """Every ledger row (an empty list when there is no ledger yet)."""
    p = path or default_path()
    if not p.is_file():
        return []
    with p.open(newline="") as f:
        return list(csv.DictReader(f))


def append(rows: Iterable[Mapping[str, Any]], path: Path | None = None) -> Path:
    """Append rows (columns as ``COLUMNS``), writing the header when the file is new."""
    p = path or default_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    new = not p.is_file() or p.stat().st_size == 0
    with p.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="raise")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    return p


@dataclass(frozen=True)
class LedgerStatus:
    """Whether one (stage, variant) at its current source has a passing GPU record."""

    stage: str
    variant: str
    kernel_hash: str
    ok: bool
    record: dict[str, str] | None

    def describe(self) -> str:
        """One line for the terminal."""
        if self.ok and self.record:
            r = self.record
            return (f"{self.stage} [{self.variant}] {self.kernel_hash}: validated on "
                    f"{r['gpu']} {r['date']} ({r['passed']}/{r['cases']} cases, "
                    f"worst {r['worst_error']})")
        return (f"{self.stage} [{self.variant}] {self.kernel_hash}: NO passing GPU validation "
                "at this source (run `harness validate --record` on a GPU)")


def pipeline_hash(pipe: Pipeline, stages: Mapping[str, Stage]) -> str:
    """A pipeline's hash: over the kernel hashes of every variant of every step."""
    parts = [f"{s}:{v.name}={kernel_hash(stages[s], v)}" for s in pipe.steps
             for v in stages[s].variants]
    return hashlib.sha256(";".join(parts).encode()).hexdigest()[:16]


def check(stages: Iterable[Stage], rows: list[dict[str, str]],
          pipelines: Iterable[Pipeline] = (),
          by_name: Mapping[str, Stage] | None = None) -> list[LedgerStatus]:
    """The ledger status of every variant of every stage (and of every pipeline)."""
    stages = list(stages)
    names = dict(by_name or {s.name: s for s in stages})
    items = [(st.name, v.name, kernel_hash(st, v)) for st in stages for v in st.variants]
    items += [(p.name, v.name, pipeline_hash(p, names)) for p in pipelines for v in p.variants]
    out = []
    for name, vname, h in items:
        match = [r for r in rows
                 if r["stage"] == name and r["variant"] == vname
                 and r["kernel_hash"] == h and r["status"] == "pass"
                 and r["gpu"] not in ("", "cpu")]
        out.append(LedgerStatus(name, vname, h, bool(match), match[-1] if match else None))
    return out
