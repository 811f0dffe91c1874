"""``harness profile``: one stage launch under Nsight Compute, its metrics stored as rows.

A profile row carries the join columns of the timing row of the same point (stage,
backend, variant, batch, in_f, out_f, family, params), so the two can be read side by side.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.datasheet import TENSOR_CORE_RATES
from harness.contract.registry import Registry
from harness.contract.stage import Stage
from harness.engine import rows
from harness.engine.devices import device_meta, sm_count
from harness.engine.jobs import one_point
from harness.engine.targets import check_families, check_options
from harness.errors import HarnessError
from harness.results import files, provenance
from harness.results.rows import CsvWriter
from harness.tools import ncu
from harness.tools.ncu_source import SourcePage

_JOIN = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params",
         "kernel")
_PROVENANCE = ("gpu", "git_sha", "timestamp", "command")
#: Columns of ``statistics/ncu/<stage>.csv``; the first eight join with the timing rows.
#: ``metrics``: the metrics asked for with ``--metrics`` beyond the defaults, as JSON.
COLUMNS = (*_JOIN, *ncu.DEFAULT_METRICS.values(), "metrics", *_PROVENANCE)
#: The columns of files written before the L2 and tensor-pipe columns and ``metrics``: such
#: a file is added to in its own columns (what it has no column for is printed only).
EARLIER = (*_JOIN, "duration", "dram_pct_of_peak", "achieved_occupancy_pct",
           "registers_per_thread", "l2_hit_rate_pct", *_PROVENANCE)


@dataclass(frozen=True)
class Profile:
    """The profiled kernels' rows, and the CSV they were appended to."""

    rows: list[dict[str, Any]]
    path: Path
    #: What was cut from the file before appending (a torn last row; '' when nothing).
    repaired: str = ""
    #: Columns measured but not stored: the file has an earlier harness's columns.
    unstored: tuple[str, ...] = ()
    #: What the rows themselves say is wrong with the build profiled (a line each).
    notes: tuple[str, ...] = ()
    #: With ``--set``: the file holding every metric ncu measured, a row a kernel (None
    #: without a set: the rows hold everything asked for).
    table: Path | None = None
    #: With ``stalls``: each profiled kernel's source page (its SASS instructions and their
    #: warp-state samples), and the file keeping the page as ncu printed it.
    pages: tuple[SourcePage, ...] = ()
    source: Path | None = None


def profile(reg: Registry, stage: str, *, variant: str | None = None,
            family: str = "normal", metrics: Sequence[str] | None = None,
            section_set: str | None = None, options: Mapping[str, str] | None = None,
            sweep: Sequence[str] = (), device: int = 0,
            out_dir: Path | None = None, defines: Sequence[str] = (),
            stalls: bool = False) -> Profile:
    """Profile the stage at one point (its axes' defaults, changed by ``options`` and
    ``AXIS=V`` sweeps of one value) and append the rows to ``<out_dir>/<stage>.csv``
    (default ``statistics/ncu/``). ``defines`` (``NAME=V``, one value each) profile that
    tuning build, as ``harness bench --define`` compiles it; its rows name it
    (``variant[NAME=V]``). ``stalls`` also samples where the kernels' warps wait, a SASS
    instruction at a time: the pages are returned and kept, gzipped, in
    ``<out_dir>/<stage>.source/<timestamp>.csv.gz``."""
    st = reg.get(stage)
    check_families([st], [family])
    check_options([st], options or {})
    job = one_point(st, variant, options or {}, sweep, defines)
    ncu.find_ncu()  # its one line first, where neither ncu nor a driver is installed
    with contextlib.ExitStack() as scratch:  # the report's folder (--stalls), gone after
        report = None
        if stalls:
            made = scratch.enter_context(tempfile.TemporaryDirectory(prefix="harness-ncu-"))
            report = Path(made) / "profile.ncu-rep"
        cmd = ncu.command(st, job.variant, job.point, family, metrics, section_set, device,
                          sm_count=sm_count(device), report=report)
        folder = files.folder(Path(out_dir or paths.statistics_dir() / "ncu"), "--out")
        # Locked and checked before ncu runs, written after it; a file of the earlier
        # columns is added to in those.
        path = folder / f"{st.name}.csv"
        columns = EARLIER if _header(path) == EARLIER else COLUMNS
        w = CsvWriter(path, files.APPEND, columns, require_status=False, root=folder)
        with w:  # closed on every path, an error's too
            profs, pages, page_text = _measure(cmd, report, folder / f"{st.name}.source")
            # The columns that join with the timing rows, as a timing row of this point
            # has them.
            base = rows.base(job, "pycuda", family, "cold", device_meta(device))
            out = [_row(p, base, metrics) for p in profs]
            unstored = tuple(c for c in COLUMNS if c not in columns
                             and any(r[c] not in ("", None) for r in out))
            for r in out:
                w.write({c: r[c] for c in columns})
    table = None
    if section_set:  # a set measures hundreds of metrics: kept whole beside the rows
        table = write_table(folder / f"{st.name}.{section_set}", base["timestamp"], profs)
    source = None
    if report is not None:
        source = _fresh(folder / f"{st.name}.source", base["timestamp"], ".csv.gz")
        with gzip.open(source, "xt", encoding="utf-8") as f:
            f.write(page_text)
    return Profile(out, w.path, w.repaired, unstored, _idle_tensor_pipe(st, job.variant.name, out),
                   table, tuple(pages), source)


def _row(p: ncu.KernelProfile, base: Mapping[str, Any], metrics: Sequence[str] | None
         ) -> dict[str, Any]:
    """A profiled kernel's row: the point's join columns and provenance, its metrics."""
    r: dict[str, Any] = {k: base[k] for k in (*_JOIN[:8], *_PROVENANCE)}
    r["kernel"] = p.kernel
    for metric, short in ncu.DEFAULT_METRICS.items():
        v = p.duration_us() if metric == "gpu__time_duration.sum" else p.number(metric)
        r[short] = "" if v is None else v
    extra = {m: p.number(m) for m in metrics or () if m not in ncu.DEFAULT_METRICS}
    r["metrics"] = json.dumps(extra, sort_keys=True) if extra else ""
    return r


def _measure(cmd: list[str], report: Path | None, keep: Path
             ) -> tuple[list[ncu.KernelProfile], list[SourcePage], str]:
    """Run the ncu command line: its kernels' metrics, and with a ``report``, the source
    pages read back from it and their text. Where that fails after ncu wrote the report
    (ncu's own late failure, or a report that does not read back), the report is moved
    into ``keep`` (the measurement is not lost; ``ncu --import`` opens it) and the error
    names it; where ncu wrote none, the error is ncu's alone."""
    if report is None:
        return ncu.run(cmd), [], ""
    try:
        ncu.collect(cmd)
        return ncu.read_report(report)
    except HarnessError as exc:
        if not report.exists():
            raise
        kept = _fresh(keep, provenance.now(), ".ncu-rep")
        shutil.move(report, kept)
        raise type(exc)(f"{exc} (the profile is kept in {kept})", detail=exc.detail) from exc


def _fresh(folder: Path, timestamp: str, suffix: str) -> Path:
    """A new file's path in ``folder`` (made if missing) named by the run's timestamp
    without its '-' and ':', numbered where a run in the same second took the name: an
    existing file is never replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = timestamp.replace(":", "").replace("-", "")
    path, n = folder / f"{stem}{suffix}", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}{suffix}"
    return path


def write_table(folder: Path, timestamp: str, profs: Sequence[ncu.KernelProfile]) -> Path:
    """Every metric of the profiled kernels as ncu reported them (its raw page: a column a
    metric, a row of units, then a row a kernel), in ``folder/<timestamp>.csv``, the
    timestamp without its '-' and ':'; the rows of the stage's CSV written by the same run
    carry that timestamp. An existing file is never replaced: a second run in the same
    second gets a numbered name."""
    path = _fresh(folder, timestamp, ".csv")
    header = list(dict.fromkeys(k for p in profs for k in p.values))
    units = {k: u for p in profs for k, u in p.units.items()}
    with path.open("x", newline="") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerow([units.get(k, "") for k in header])
        for p in profs:
            out.writerow([p.values.get(k, "") for k in header])
    return path


def _idle_tensor_pipe(st: Stage, variant: str, rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """A note when a stage whose arithmetic is tensor-core work profiled with the tensor
    pipe idle in every kernel: its MMAs did not run. ptxas drops an MMA whose results
    nothing reads, which a diagnostic build (a step left out) can do without a warning."""
    if st.compute_peak not in TENSOR_CORE_RATES or not rows or \
            any(r.get("tensor_pct_of_peak") != 0 for r in rows):
        return ()
    return (f"{st.name} {variant}: the tensor pipe was idle (0 %) in every kernel profiled, "
            f"though the stage's arithmetic is {st.compute_peak}: its MMAs did not run, so "
            "these times say nothing of its tensor work (ptxas drops MMAs whose results "
            "nothing reads)",)


def _header(path: Path) -> tuple[str, ...]:
    """The columns of an existing CSV's first line (() where there is none)."""
    try:
        with path.open(newline="") as f:
            return tuple(next(csv.reader(f), ()))
    except OSError:
        return ()
