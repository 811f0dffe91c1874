"""``harness sanitize``: compute-sanitizer over every chosen stage variant, one summary row
per (stage, variant, tool) in ``statistics/<gpu>/sanitizer.csv``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.registry import Registry
from harness.contract.stage import Stage, Variant
from harness.engine.devices import device_meta
from harness.engine.jobs import one_variant
from harness.engine.targets import check_families
from harness.errors import BadInput, HarnessError
from harness.results import files
from harness.results.provenance import RunMeta
from harness.results.rows import CsvWriter
from harness.tools import sanitize as tool

COLUMNS = ("stage", "variant", "tool", "points", "errors", "warnings", "returncode",
           "status", "gpu", "git_sha", "timestamp", "command")


def default_path(device: int) -> Path:
    """``statistics/<gpu>/sanitizer.csv`` for the device (``gpu`` when unnamed)."""
    from harness.backends.pycuda.context import gpu_slug, smi_query

    return paths.statistics_dir() / gpu_slug(smi_query(device, "name") or "gpu") / \
        "sanitizer.csv"


def row(o: tool.Outcome, meta: RunMeta) -> dict[str, Any]:
    """One summary row of a sanitizer outcome."""
    prov = meta.columns()
    return {"stage": o.stage, "variant": o.variant, "tool": o.tool, "points": o.points,
            "errors": o.errors, "warnings": o.warnings, "returncode": o.returncode,
            "status": "ok" if o.ok else "failed",
            **{k: prov[k] for k in ("gpu", "git_sha", "timestamp", "command")}}


@dataclass
class SanitizerRun:
    """A planned sanitizer run: iterate ``outcomes`` to run it (each row written as it
    lands)."""

    outcomes: Iterator[tool.Outcome]
    #: Child processes the run will start.
    total: int
    path: Path
    #: What was cut from the file before appending (a torn last row; '' when nothing).
    repaired: str = ""


def _run(jobs: Sequence[tuple[Stage, Variant, str]], family: str, device: int,
         w: CsvWriter) -> Iterator[tool.Outcome]:
    with w:
        for st, v, t in jobs:
            o = tool.run(t, st, v, family, device)
            w.write(row(o, device_meta(device)))
            yield o


def sanitize(reg: Registry, names: Sequence[str] | None, *,
             tools: Sequence[str] | None = None, family: str = "normal", device: int = 0,
             out_file: Path | None = None, append: bool = False,
             overwrite: bool = False, variant: str | None = None,
             defines: Sequence[str] = ()) -> SanitizerRun:
    """Plan the run: every variant of the named stages (default: all), or the one build that
    ``variant`` and ``defines`` (``NAME=V``, one value each, as ``bench --define`` compiles
    it) name in the one stage named, under every tool (default: all); every input error is
    raised here, before a child starts, the summary CSV's included (an existing one is
    added to with ``append``, replaced with ``overwrite``, else refused)."""
    existing = files.on_existing(append, overwrite)
    stages = reg.select(names)
    one = variant is not None or bool(defines)
    if one and len(stages) != 1:
        raise BadInput("sanitize --variant/--define looks at one build: name one stage")
    builds = {st.name: ([one_variant(st, variant, {}, defines)] if one else list(st.variants))
              for st in stages}
    check_families(stages, [family])
    chosen = list(tools or tool.TOOLS)
    for t in chosen:
        if t not in tool.TOOLS:
            raise HarnessError(f"unknown sanitizer tool {t!r} (known: "
                               f"{', '.join(tool.TOOLS)})")
    tool.find()
    jobs = [(st, v, t) for st in stages for v in builds[st.name] for t in chosen]
    dest = out_file or default_path(device)
    w = CsvWriter(dest, existing, COLUMNS, require_status=False)
    return SanitizerRun(_run(jobs, family, device, w), len(jobs), dest, w.repaired)
