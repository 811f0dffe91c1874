"""Benchmark results as CSV: one row per (stage, backend, variant, point), written as measured.

Each row is written whole and fsync'ed before the next point starts, under the file's lock
(the rules of :mod:`harness.results.files`), so an interrupted or crashed sweep leaves a
valid CSV holding every finished row.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.results import files

COLUMNS: tuple[str, ...] = (
    "stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params",
    "status", "reason", "verified", "l2", "launch",
    "median_us", "p10_us", "p90_us", "noise_pct", "samples",
    "clock_mhz_median", "clock_mhz_min", "clock_mhz_nominal", "throttled_samples",
    "bytes", "flops", "gbps", "pct_peak", "peak_gbps",
    "tops", "pct_datasheet_tops", "datasheet_tops", "speedup_vs_best_peer",
    "kernel_hash", "gpu", "driver", "cuda", "git_sha", "timestamp", "command",
)

#: Where a cluster run's row was measured: the columns that tell its worker processes apart
#: (absent from a plain run's CSV).
PROCESS_COLUMNS: tuple[str, ...] = ("host", "gpu_uuid", "worker")
#: A cluster run's stage rows (``--cluster``): the same, and where each was measured.
CLUSTER_COLUMNS: tuple[str, ...] = (*COLUMNS, *PROCESS_COLUMNS)

#: Values ``status`` takes; anything but ``ok`` has a ``reason``.
STATUSES = ("ok", "failed", "skipped", "oom")

#: Why an ok row's noise is above the target: its budget ended sampling.
NOT_CONVERGED = "noise above target when the budget ended"
#: The same where the samples' cap (``--max-samples``) ended it, not the budget.
NOT_CONVERGED_CAP = "noise above target when the sample cap was reached"
#: Why an ok row's noise is above a target it met: the target is below the timer's
#: quantisation floor, which more samples cannot lower (``contract.timing.at_floor``).
AT_FLOOR = "noise at the timer's 32 ns floor, above the target: more samples cannot lower it"


def gbps(nbytes: float, median_us: float) -> float:
    """A row's bandwidth: its bytes over its median, GB/s (0 where there is no time)."""
    return nbytes / (median_us * 1e-6) / 1e9 if median_us > 0 else 0.0


def tops(flops: float, median_us: float) -> float:
    """A row's compute rate: its flops over its median, tera-ops/s."""
    return flops / (median_us * 1e-6) / 1e12


def pct_peak(bandwidth: float, peak_gbps: float) -> float:
    """A bandwidth (GB/s) as a % of the calibrated peak."""
    return 100.0 * bandwidth / peak_gbps


def ungated_note(ungated: int, samples: int) -> str:
    """A row's note on a time some of whose samples were timed without the gate (the work
    synchronised inside its launch: the gate opened by itself)."""
    return (f"{ungated} of {samples} samples timed without the gate (the work synchronises "
            "inside its launch): host time can be inside")


def drained_note(taken_off_us: float) -> str:
    """A drained row's note: the flush time taken off each sample (``bench --drain``), so
    that the figure can be checked against the events' own intervals."""
    return f"drained: {taken_off_us:.2f} µs of L2 flush taken off each sample"


_UNGATED = re.compile(r"(\d+ of \d+ samples timed without the gate) \(the work "
                      r"synchronises inside its launch\): host time can be inside")


def host_time(reason: str | None) -> str:
    """``N of M samples timed without the gate`` where ``reason`` says its row's time can
    hold host time (:func:`ungated_note`), else ''."""
    m = _UNGATED.search(reason or "")
    return m.group(1) if m else ""


def peer_host_time(backend: str, said: str) -> str:
    """Our row's note on a speedup over a peer whose time can hold host time (``said``:
    :func:`host_time` of the peer's reason)."""
    return f"vs best peer: {backend}'s time can hold host time ({said})"


_PEER_HOST = re.compile(r"vs best peer: \S+'s time can hold host time")

#: The notes on a row's time that its ``reason`` ends with, each a ``; ``-separated part:
#: not converged, throttled samples (``Clocks.note``), samples timed without the gate
#: (:func:`ungated_note`), the flush a drained sample had taken off (:func:`drained_note`),
#: a cluster's later attempt (``harness.cluster.bench``), a speedup over a peer whose time
#: can hold host time (:func:`peer_host_time`).
TIME_NOTES = re.compile(
    rf"{re.escape(NOT_CONVERGED)}|{re.escape(NOT_CONVERGED_CAP)}|{re.escape(AT_FLOOR)}"
    r"|\d+ sample\(s\) below \d+ % of the \d+ MHz nominal clock.*"
    r"|\d+ of \d+ samples timed without the gate .*: host time can be inside"
    r"|drained: \d+\.\d+ µs of L2 flush taken off each sample"
    r"|measured on attempt \d+: .*"
    rf"|{_PEER_HOST.pattern} \(.*\)")


def caveats(reason: str | None) -> list[str]:
    """What a row's reason says of its numbers that no column shows, in a few words each:
    its time can hold host time, or its speedup's best peer's can."""
    out = []
    if host_time(reason):
        out.append("host time can be inside")
    if _PEER_HOST.search(reason or ""):
        out.append("its best peer's time can hold host time")
    return out


def fit_reason(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, the notes on the time it ends with
    (:data:`TIME_NOTES`) kept whole: what is cut is the text before them (a failure's list
    of examples), marked ``...``; a text without such notes is cut at its end."""
    if len(text) <= limit:
        return text
    parts = text.split("; ")
    k = len(parts)
    while k > 1 and TIME_NOTES.fullmatch(parts[k - 1]):
        k -= 1
    if k == len(parts):
        return text[:limit]
    return fit_notes("; ".join(parts[:k]), parts[k:], limit)


def fit_notes(head: str, notes: Sequence[str], limit: int, kept: int = 0) -> str:
    """``head``, then the ``notes`` on its time, in at most ``limit`` characters: the head's
    tail is cut first (marked ``...``); where the notes alone would crowd the head out, it
    keeps its first ``kept`` characters and the notes are cut at their end."""
    tail = "; ".join(notes)
    room = limit - len(tail) - 2
    keep = min(len(head), kept)
    if len(head) <= room:
        cut = head
    elif room >= keep:
        cut = head[:max(room - 3, 0)] + "..."
    else:
        cut = head if 0 < len(head) <= keep else head[:max(keep - 3, 0)] + "..."
    return f"{cut}; {tail}"[:limit]


class CsvWriter:
    """Writes rows with the fixed columns to ``path``, each whole as it comes.

    ``existing`` says what to do with a file that already holds rows (``files.REFUSE``,
    ``APPEND``: its header must match, a torn last row is cut away and ``repaired`` says
    so, a whole one without its line end refused; ``OVERWRITE``); ``root`` is the output
    folder no symlink may lead out of; ``choices``, what a refusal offers (the writing
    command's options); ``wait``, the seconds to wait for another writer's lock (0:
    refuse at once). The file stays locked against other writers until :meth:`close`.
    """

    def __init__(self, path: Path, existing: str = files.REFUSE,
                 columns: tuple[str, ...] = COLUMNS, require_status: bool = True,
                 root: Path | None = None, choices: str = files.BENCH_CHOICES,
                 wait: float = 0.0) -> None:
        self.path = Path(path)
        self.columns = columns
        self.require_status = require_status
        self._file = files.RowFile(self.path, columns, existing, root, choices, wait)

    @property
    def repaired(self) -> str:
        """What was cut from the file before appending ('' when nothing)."""
        return self._file.repaired

    @property
    def written(self) -> int:
        """Rows this writer has put in the file, counted by the file as each lands."""
        return self._file.written

    def write(self, row: Mapping[str, Any]) -> None:
        """Write one row now; missing columns are left empty, unknown ones are an error."""
        if self.require_status and row.get("status") not in STATUSES:
            raise ValueError(f"bad status {row.get('status')!r}")
        unknown = set(row) - set(self.columns)
        if unknown:
            raise ValueError(f"unknown columns: {', '.join(sorted(unknown))}")
        self._file.write([_fmt(row.get(c, "")) for c in self.columns])

    def close(self) -> None:
        """Close the file and release its lock (every row is already on disk)."""
        self._file.close()

    def __enter__(self) -> CsvWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


def read_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a results CSV as dicts of strings; HarnessError naming the file where csv
    cannot read a record whole (strictly: a quote left open where the data ends, a write
    cut short inside a quoted cell, is not read as a cell that runs to the end)."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as f:  # a BOM, as compare
            return list(csv.DictReader(f, strict=True))
    except csv.Error as exc:
        raise HarnessError(f"{path}: not a readable CSV ({exc})") from None
