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
from harness.results.readback import read_stage_rows, results_folder
from harness.results.resultcsv import STAGE
from harness.results.rows import host_time


def _model(rows: Sequence[dict[str, str]], folder: Path) -> str:
    """The folder's GPU model, from its rows' ``gpu`` column (the folder's name if none)."""
    names = {r.get("gpu", "") for r in rows} - {""}
    return names.pop() if len(names) == 1 else folder.name


def side_by_side(folders: Sequence[Path], batches: Sequence[int],
                 stages: Sequence[str] | None = None) -> str:
    """A Markdown table: each ok row's point, and its median (µs) in every folder that has
    it (with what its reason says of it that no column shows: host time can be inside).
    ``batches`` keep the activation side's rows at those batches (the weight side's rows,
    which have none, are all kept)."""
    if len(folders) < 2:
        raise BadInput("side by side needs two results folders or more")
    models, medians = [], {}
    for folder in folders:
        rows = [r for r in read_stage_rows(results_folder(folder), stages)
                if r.get("status") == "ok"]
        name = _model(rows, Path(folder))
        if name in models:
            raise BadInput(f"{folder}: {name} is already a column (one folder a model)")
        models.append(name)
        for r in rows:
            if r.get("batch") and int(r["batch"]) not in batches:
                continue
            # Rows are the same point as compare matches them (a column that came later
            # read with the value rows had before it).
            key = tuple(r.get(c) or dict(STAGE.later).get(c, "") for c in STAGE.key)
            said = " (host time can be inside)" if host_time(r.get("reason")) else ""
            medians.setdefault(key, {})[name] = f"{float(r['median_us']):.2f}{said}"
    lines = ["| stage | backend | variant | point | " + " | ".join(
                 f"{m} µs" for m in models) + " |",
             "|---|---|---|---|" + "---|" * len(models)]
    for key, by in medians.items():
        k = dict(zip(STAGE.key, key, strict=True))
        point = " ".join(f"{n}={k[n]}" for n in ("batch", "in_f", "out_f") if k[n])
        lines.append(f"| {k['stage']} | {k['backend']} | {k['variant']} | {point} | "
                     + " | ".join(by.get(m, "-") for m in models)
                     + " |")
    return "\n".join(lines)
