"""``harness profile``: one stage launch under Nsight Compute, its metrics stored as rows.

A profile row carries the join columns of the timing row of the same point (stage,
backend, variant, batch, in_f, out_f, family, params), so the two can be read side by side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.registry import Registry
from harness.engine import rows
from harness.engine.devices import device_meta
from harness.engine.jobs import one_point
from harness.engine.targets import check_families, check_options
from harness.results import files
from harness.results.rows import CsvWriter
from harness.tools import ncu

#: Columns of ``statistics/ncu/<stage>.csv``; the first eight join with the timing rows.
COLUMNS = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params",
           "kernel", *ncu.DEFAULT_METRICS.values(), "gpu", "git_sha", "timestamp",
           "command")


@dataclass(frozen=True)
class Profile:
    """The profiled kernels' rows, and the CSV they were appended to."""

    rows: list[dict[str, Any]]
    path: Path
    #: What was cut from the file before appending (a torn last row; '' when nothing).
    repaired: str = ""


def profile(reg: Registry, stage: str, *, variant: str | None = None,
            family: str = "normal", metrics: Sequence[str] | None = None,
            section_set: str | None = None, options: Mapping[str, str] | None = None,
            sweep: Sequence[str] = (), device: int = 0,
            out_dir: Path | None = None) -> Profile:
    """Profile the stage at one point (its axes' defaults, changed by ``options`` and
    ``AXIS=V`` sweeps of one value) and append the rows to ``<out_dir>/<stage>.csv``
    (default ``statistics/ncu/``)."""
    st = reg.get(stage)
    check_families([st], [family])
    check_options([st], options or {})
    job = one_point(st, variant, options or {}, sweep)
    cmd = ncu.command(st, job.variant, job.point, family, metrics, section_set, device)
    folder = files.folder(Path(out_dir or paths.statistics_dir() / "ncu"), "--out")
    # Locked and checked before ncu runs, written after it.
    w = CsvWriter(folder / f"{st.name}.csv", files.APPEND, COLUMNS, require_status=False,
                  root=folder)
    try:
        profs = ncu.run(cmd)
    except BaseException:
        w.close()
        raise
    # The columns that join with the timing rows, as a timing row of this point has them.
    base = rows.base(job, "pycuda", family, True, device_meta(device))
    out = []
    for p in profs:
        r = {k: base[k] for k in (*COLUMNS[:8], "gpu", "git_sha", "timestamp", "command")}
        r["kernel"] = p.kernel
        for metric, short in ncu.DEFAULT_METRICS.items():
            v = p.duration_us() if metric == "gpu__time_duration.sum" else p.number(metric)
            r[short] = "" if v is None else v
        out.append(r)
    with w:
        for r in out:
            w.write(r)
    return Profile(out, w.path, w.repaired)
