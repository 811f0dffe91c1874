"""compute-sanitizer over every stage and variant at small and odd shapes.

Each (stage, variant, tool) is one child process (:mod:`harness.tools.child`) launching the
stage once at each of its points, on the inputs a sweep draws there, run under
``compute-sanitizer --tool T``. The report's summary lines give the error count; a non-zero
count, or a child that fails, is a failure.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.contract.stage import Stage, Variant
from harness.errors import HarnessError
from harness.tools import child, process

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
#: Small and odd shapes: batch 1 and 3; in_f 1, 5 and 130 (none a multiple of 4, so the
#: vector loads' tails run) and 3584; out_f like batch; and batches 3 and 9, past
#: activation_fused's batch-1 kernels, so that its two-pass kernels and workspace are watched
#: too.
SHAPES: tuple[dict[str, int], ...] = tuple(
    {"batch": b, "out_f": b, "in_f": f} for b in (1, 3, 9) for f in (1, 5, 130, 3584))

_ERRORS = re.compile(r"ERROR SUMMARY:\s*(\d+) errors?")
_RACE = re.compile(r"RACECHECK SUMMARY:\s*\d+ hazards? displayed \((\d+) errors?, "
                   r"(\d+) warnings?\)")


def find() -> str:
    """The compute-sanitizer executable; a one-line error when it is missing."""
    return process.executable("compute-sanitizer", "not found on PATH: install the CUDA "
                                                   "toolkit's sanitizer or add it to PATH")


def points(stage: Stage, variant: Variant) -> list[dict[str, Any]]:
    """The stage's points at every shape of SHAPES (only the axes it has) and at the
    stage's own ``sanitize_shapes``, no duplicates."""
    names = {a.name for a in stage.axes}
    out: dict[str, dict[str, Any]] = {}
    for shape in (*SHAPES, *stage.sanitize_shapes):
        p = stage.point(variant, **{k: v for k, v in shape.items() if k in names})
        out.setdefault(json.dumps(p, sort_keys=True, default=str), p)
    return list(out.values())


@dataclass(frozen=True)
class Outcome:
    """One tool's verdict on one stage variant."""

    stage: str
    variant: str
    tool: str
    points: int
    errors: int
    warnings: int
    returncode: int
    excerpt: str

    @property
    def ok(self) -> bool:
        """No error reported and the child succeeded."""
        return self.errors == 0 and self.returncode == 0


def parse(text: str) -> tuple[int, int] | None:
    """``(errors, warnings)`` from a report's summary lines, or None when there is none."""
    m = _RACE.search(text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = _ERRORS.search(text)
    return (int(m.group(1)), 0) if m else None


def command(tool: str, stage: Stage, variant: Variant, pts: Sequence[dict[str, Any]],
            family: str, device: int, *, seed: int = 0,
            python: str = sys.executable) -> list[str]:
    """The sanitizer command line for one stage variant over its points, on the inputs a
    sweep of this family and seed draws at each."""
    if tool not in TOOLS:
        raise HarnessError(f"unknown sanitizer tool {tool!r} (known: {', '.join(TOOLS)})")
    job = child.launches(stage, variant, family, seed, pts, 0, device)
    return [find(), "--tool", tool, "--error-exitcode", "3", *child.command(job, python)]


def run(tool: str, stage: Stage, variant: Variant, family: str = "normal", device: int = 0,
        timeout_s: float = 900, seed: int = 0) -> Outcome:
    """Run one tool over one stage variant and judge its report."""
    pts = points(stage, variant)
    cmd = command(tool, stage, variant, pts, family, device, seed=seed)
    proc = process.run(cmd, f"compute-sanitizer {tool} on {stage.name}", timeout_s)
    text = proc.stdout + proc.stderr
    counts = parse(text)
    errors, warnings = counts if counts is not None else (1, 0)
    lines = [ln for ln in text.splitlines() if ln.startswith("=========")]
    return Outcome(stage.name, variant.name, tool, len(pts), errors, warnings,
                   proc.returncode, "\n".join(lines[-12:]) if lines else text[-2000:])
