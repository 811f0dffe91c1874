"""Several GPU models side by side: the same points of each model's results folder
(``statistics/<gpu>/``, one per model, as a cluster run of several models writes them), one
column of medians per model.

``harness report statistics/h200 statistics/h100`` prints it; a point one model has and
another has not shows ``-`` in the other's column.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.errors import BadInput
from harness.results.report import read_stage_rows

#: The columns that make two models' rows the same point.
KEY = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params", "l2",
       "launch")


def _model(rows: Sequence[dict[str, str]], folder: Path) -> str:
    """The folder's GPU model, from its rows' ``gpu`` column (the folder's name if none)."""
    names = {r.get("gpu", "") for r in rows} - {""}
    return names.pop() if len(names) == 1 else folder.name


def side_by_side(folders: Sequence[Path], batches: Sequence[int],
                 stages: Sequence[str] | None = None) -> str:
    """A Markdown table: each ok row's point, and its median (µs) in every folder that has
    it. ``batches`` keep the activation side's rows at those batches (the weight side's
    rows, which have none, are all kept)."""
    if len(folders) < 2:
        raise BadInput("side by side needs two results folders or more")
    models, medians = [], {}
    for folder in folders:
        rows = [r for r in read_stage_rows(Path(folder), stages) if r.get("status") == "ok"]
        name = _model(rows, Path(folder))
        if name in models:
            raise BadInput(f"{folder}: {name} is already a column (one folder a model)")
        models.append(name)
        for r in rows:
            if r.get("batch") and int(r["batch"]) not in batches:
                continue
            key = tuple(r.get(c) or ("stream" if c == "launch" else "") for c in KEY)
            medians.setdefault(key, {})[name] = r["median_us"]
    lines = ["| stage | backend | variant | point | " + " | ".join(
                 f"{m} µs" for m in models) + " |",
             "|---|---|---|---|" + "---|" * len(models)]
    for key, by in medians.items():
        st, be, va, b, fi, fo = key[:6]
        point = " ".join(f"{n}={v}" for n, v in (("batch", b), ("in_f", fi), ("out_f", fo))
                         if v)
        lines.append(f"| {st} | {be} | {va} | {point} | "
                     + " | ".join(f"{float(by[m]):.2f}" if m in by else "-" for m in models)
                     + " |")
    return "\n".join(lines)
