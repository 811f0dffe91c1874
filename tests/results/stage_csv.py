"""A stage results CSV written from rows, for the tests of the commands that read one."""

from __future__ import annotations

import csv
from pathlib import Path

from harness.results.rows import COLUMNS


def stage_row(variant: str, median: float, sha: str = "aaa", cmd: str = "harness bench s",
              **kw: str) -> dict[str, str]:
    """An ok pycuda row of stage ``s`` at batch 8, in_f 64, its outputs checked (``kw``
    replaces any column)."""
    r = {c: "" for c in COLUMNS}
    r.update(stage="s", backend="pycuda", variant=variant, batch="8", in_f="64",
             family="normal", params="{}", status="ok", l2="cold", launch="stream",
             median_us=repr(median), p10_us=repr(median * 0.99), p90_us=repr(median * 1.01),
             noise_pct="0.1", verified="yes", git_sha=sha, command=cmd)
    r.update(kw)
    return r


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    """The rows under the stage header, at ``path``."""
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(COLUMNS))
        w.writeheader()
        w.writerows(rows)
    return path
