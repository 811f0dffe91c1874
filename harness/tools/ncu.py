"""Nsight Compute: re-run one stage under ``ncu`` and parse what it measured.

``harness profile STAGE`` runs ``ncu`` on the child of :mod:`harness.tools.child`, which
draws the inputs a sweep draws at the point (same seed, family and point) and does the
warm-up launches and then the launch to profile; ncu skips the warm-up by count and keeps
only the stage's own kernels by name. The clocks are left alone (``--clock-control none``).
The raw CSV page is parsed into one record per profiled kernel.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contract.launcher import RecordingLauncher
from harness.contract.stage import Stage, Variant
from harness.errors import HarnessError
from harness.tools import child, process
from harness.tools.ncu_source import SourcePage, parse_source_csv, quoted_rows

#: What ``harness profile`` prints by default: metric -> short name.
DEFAULT_METRICS = {
    "gpu__time_duration.sum": "duration",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct_of_peak",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "launch__registers_per_thread": "registers_per_thread",
    "lts__t_sector_hit_rate.pct": "l2_hit_rate_pct",
    # Where a kernel stands against the machine's other limits: the L2's throughput and
    # the tensor pipe's busy cycles (any MMA kind; 0 for kernels without MMAs).
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": "l2_pct_of_peak",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pct_of_peak",
}
SETS = ("basic", "full")
#: The sections that sample each SASS instruction's warp states (``--stalls``).
STALL_SECTIONS = ("--section", "SourceCounters", "--section", "WarpStateStats")
#: Launches made before the profiled one, outside the profile (module load, caches).
WARMUP = 3


@dataclass(frozen=True)
class KernelProfile:
    """One profiled kernel launch: its name and metric values (with units)."""

    kernel: str
    values: dict[str, str]
    units: dict[str, str]

    def number(self, metric: str) -> float | None:
        """The metric as a float (thousands separators dropped), or None."""
        v = self.values.get(metric, "").replace(",", "")
        try:
            return float(v)
        except ValueError:
            return None

    def duration_us(self) -> float | None:
        """``gpu__time_duration.sum`` in microseconds, whatever unit ncu chose."""
        v = self.number("gpu__time_duration.sum")
        scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3,
                 "msecond": 1e3, "s": 1e6, "second": 1e6}
        unit = self.units.get("gpu__time_duration.sum", "ns")
        return None if v is None else v * scale.get(unit, 1e-3)


def find_ncu() -> str:
    """The ncu executable; a one-line error when it is missing."""
    return process.executable("ncu", "(Nsight Compute) not found on PATH: install it or add "
                                     "it to PATH to profile")


def parse_raw_csv(text: str) -> list[KernelProfile]:
    """Parse ``ncu --csv --page raw`` output (``==PROF==`` lines and all)."""
    rows = quoted_rows(text)
    if not rows or rows[0][:1] != ["ID"]:
        raise HarnessError("ncu printed no profile table (no kernel matched, or it failed)")
    header = rows[0]
    units: dict[str, str] = {}
    body = rows[1:]
    if body and body[0][:1] == [""]:  # the units row
        units = {h: u for h, u in zip(header, body[0], strict=False) if u}
        body = body[1:]
    out = []
    for r in body:
        d = dict(zip(header, r, strict=False))
        out.append(KernelProfile(d.get("Kernel Name", ""), d, units))
    return out


def launched_kernels(stage: Stage, variant: Variant, point: dict[str, Any], *,
                     sm_count: int) -> list[str]:
    """The kernels one call of the stage's ``enqueue`` launches at this point on a device of
    ``sm_count`` SMs, in order (a stage may pick among its entry points by shape and by the
    grid the device holds at once): what ncu must skip and count."""
    record = RecordingLauncher(stage.block_for(variant), sm_count=sm_count)
    stage.enqueue(record, collections.defaultdict(int), point, variant)
    return record.names


def command(stage: Stage, variant: Variant, point: dict[str, Any], family: str,
            metrics: Sequence[str] | None, section_set: str | None, device: int, *,
            sm_count: int, seed: int = 0, python: str = sys.executable,
            report: Path | None = None) -> list[str]:
    """The ncu command line profiling one launch of the stage variant at the point, on the
    inputs a sweep of this family and seed draws there (``harness bench``'s seed is 0), on
    ``device``, which has ``sm_count`` SMs. With ``report`` (a path ending ``.ncu-rep``) it
    also samples the warps' stall reasons a SASS instruction (the SourceCounters and
    WarpStateStats sections) and writes the report there instead of printing its table:
    read it back with :func:`read_report` once :func:`collect` has run it."""
    launched = launched_kernels(stage, variant, point, sm_count=sm_count)
    kernels = "|".join(dict.fromkeys(launched))
    n = len(launched)
    cmd = [find_ncu(), "--clock-control", "none"]
    if report is None:
        cmd += ["--csv", "--page", "raw"]
    else:
        cmd += [*STALL_SECTIONS, "-o", str(report), "-f"]
    cmd += ["-k", f"regex:^({kernels})$", "--launch-skip", str(WARMUP * n),
            "--launch-count", str(n)]
    if section_set:
        if section_set not in SETS:
            raise HarnessError(f"unknown --set {section_set!r} (known: {', '.join(SETS)})")
        cmd += ["--set", section_set]
    # The defaults always, so that every row has them; asked-for metrics beside them.
    cmd += ["--metrics", ",".join(dict.fromkeys([*DEFAULT_METRICS, *(metrics or ())]))]
    job = child.launches(stage, variant, family, seed, [point], WARMUP, device)
    return [*cmd, *child.command(job, python)]


def _checked(cmd: list[str], timeout_s: float) -> str:
    """Run an ncu command line; its standard output, or clear one-line errors for the usual
    failures."""
    proc = process.run(cmd, "ncu", timeout_s)
    text = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in text:
        raise HarnessError("profiling is not permitted on this machine (ERR_NVGPUCTRPERM: "
                           "GPU performance counters are restricted to admin users)")
    if proc.returncode != 0:
        raise HarnessError(f"ncu failed (exit {proc.returncode})", detail=text[-4000:])
    return proc.stdout


def run(cmd: list[str], timeout_s: float = 600) -> list[KernelProfile]:
    """Run ncu and parse its table; clear one-line errors for the usual failures."""
    return parse_raw_csv(_checked(cmd, timeout_s))


def collect(cmd: list[str], timeout_s: float = 600) -> None:
    """Run a :func:`command` made with a report path: ncu writes the report, prints no
    table."""
    _checked(cmd, timeout_s)


def read_report(report: Path, timeout_s: float = 600
                ) -> tuple[list[KernelProfile], list[SourcePage], str]:
    """A report read back: its metrics table (as :func:`run` returns it), its source page
    parsed, and the page's CSV text as ncu printed it (to keep: every instruction and its
    samples)."""
    imported = [find_ncu(), "--import", str(report)]
    profs = parse_raw_csv(_checked([*imported, "--page", "raw", "--csv"], timeout_s))
    text = _checked([*imported, "--page", "source", "--csv", "--print-source", "sass"],
                    timeout_s)
    return profs, parse_source_csv(text), text
