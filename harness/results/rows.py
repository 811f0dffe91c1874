"""Benchmark results as CSV: one row per (stage, backend, variant, point), written as measured.

Each row is flushed and fsync'ed before the next point starts, so an interrupted or crashed
sweep leaves a valid CSV holding every finished row.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

COLUMNS: tuple[str, ...] = (
    "stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params",
    "status", "reason", "verified", "l2", "launch",
    "median_us", "p10_us", "p90_us", "noise_pct", "samples",
    "bytes", "flops", "gbps", "pct_peak", "peak_gbps", "speedup_vs_best_peer",
    "kernel_hash", "gpu", "driver", "cuda", "git_sha", "timestamp", "command",
)

#: Values ``status`` takes; anything but ``ok`` has a ``reason``.
STATUSES = ("ok", "failed", "skipped", "oom")


class CsvWriter:
    """Appends rows with the fixed columns to ``path``; the header is written once."""

    def __init__(self, path: Path, append: bool = False,
                 columns: tuple[str, ...] = COLUMNS, require_status: bool = True) -> None:
        self.path = Path(path)
        self.columns = columns
        self.require_status = require_status
        self.path.parent.mkdir(parents=True, exist_ok=True)
        exists = append and self.path.is_file() and self.path.stat().st_size > 0
        if exists:
            with self.path.open(newline="") as f:
                header = next(csv.reader(f), [])
            if tuple(header) != columns:
                raise HarnessError(f"{self.path} has other columns than this harness writes; "
                                   "write to a new file instead of appending")
        self._f = self.path.open("a" if exists else "w", newline="")
        self._w = csv.DictWriter(self._f, fieldnames=columns, extrasaction="raise")
        if not exists:
            self._w.writeheader()
            self._sync()

    def _sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())

    def write(self, row: Mapping[str, Any]) -> None:
        """Write one row now; missing columns are left empty, unknown ones are an error."""
        if self.require_status and row.get("status") not in STATUSES:
            raise ValueError(f"bad status {row.get('status')!r}")
        unknown = set(row) - set(self.columns)
        if unknown:
            raise ValueError(f"unknown columns: {', '.join(sorted(unknown))}")
        self._w.writerow({c: _fmt(row.get(c, "")) for c in self.columns})
        self._sync()

    def close(self) -> None:
        """Close the file (every row is already on disk)."""
        self._f.close()

    def __enter__(self) -> CsvWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


def read_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a results CSV as dicts of strings."""
    with Path(path).open(newline="") as f:
        return list(csv.DictReader(f))
