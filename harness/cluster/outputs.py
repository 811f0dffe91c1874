"""The driver's result files: one folder per GPU model, each written only by the driver.

A stage's rows go to ``<folder>/<stage>.csv`` with the columns of a plain sweep and where
each row was measured (``results.rows.CLUSTER_COLUMNS``: host, GPU UUID, worker); a
pipeline's rows keep the pipeline columns (and its seed summaries). The folder of a GPU
model is ``statistics/<gpu>/`` (or under ``--out``: the folder itself when the cluster has
one model, ``<out>/<gpu>/`` for each model otherwise). The files of the models known when
the run starts are opened (locked, checked) before the first point, by the rules of
:mod:`harness.results.files`; a model that only joins later gets its files when its
first row lands. Each GPU's copy-bandwidth record, as its worker measured it, is kept as
``<folder>/calibration/<uuid>.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.engine.jobs import Job
from harness.results import files
from harness.results.pipeline_rows import PipelineCsv
from harness.results.rows import CLUSTER_COLUMNS, CsvWriter

#: The folder, beside a model's CSVs, of each GPU's calibration record.
CALIBRATIONS = "calibration"


class ClusterOutputs:
    """Every result file of a cluster run, keyed by GPU model (``slug``) and target."""

    def __init__(self, jobs: Sequence[Job], root: Path, per_model: bool,
                 existing: str = files.REFUSE) -> None:
        self.jobs = list(jobs)
        self.root = root
        #: Whether every model has a folder of its own under ``root`` (else the first
        #: model writes into ``root`` itself, and any other model under it).
        self.per_model = per_model
        self.existing = existing
        self.folders: dict[str, Path] = {}
        self.writers: dict[tuple[str, str], CsvWriter | PipelineCsv] = {}
        #: Rows written so far: what an interrupted run keeps, counted where they land.
        self.written = 0

    def folder(self, slug: str) -> Path:
        """The model's folder (its files opened the first time it is asked for)."""
        if slug not in self.folders:
            flat = not self.per_model and not self.folders
            d = files.folder(self.root if flat else self.root / slug, "--out")
            try:
                for job in self.jobs:
                    t = job.target
                    if (slug, t.name) not in self.writers:
                        self.writers[(slug, t.name)] = PipelineCsv(
                            d, t.name, self.existing, t.seed_summaries) if job.is_pipeline \
                            else CsvWriter(d / f"{t.name}.csv", self.existing,
                                           CLUSTER_COLUMNS, root=d)
            except BaseException:
                self.close()
                raise
            self.folders[slug] = d
        return self.folders[slug]

    @property
    def repaired(self) -> list[str]:
        """What was cut from the files before appending, a line per file."""
        return [w.repaired for w in self.writers.values() if w.repaired]

    def write(self, slug: str, job: Job, row: dict[str, Any]) -> None:
        """The row, whole, in its model's file of its target now (a pipeline row without
        the cluster columns: its file has none)."""
        self.folder(slug)
        w = self.writers[(slug, job.target.name)]
        if isinstance(w, PipelineCsv):
            row = {k: v for k, v in row.items() if k in w.main.columns}
        w.write(row)
        self.written += 1

    def calibration(self, slug: str, record: dict[str, Any]) -> Path:
        """Keep a GPU's copy-bandwidth record, as its worker measured it."""
        name = "".join(c if c.isalnum() or c in "-_" else "-" for c in
                       record.get("gpu_uuid") or record.get("host", "gpu"))
        d = files.folder(self.folder(slug) / CALIBRATIONS)
        data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
        return files.replace(d / f"{name}.json", data, root=d)

    def close(self) -> None:
        """Close every file and release its lock (again: nothing)."""
        for w in self.writers.values():
            w.close()
