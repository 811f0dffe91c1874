"""The driver's result files: one folder per GPU model, each written only by the driver.

A stage's rows go to ``<folder>/<stage>.csv`` with the columns of a plain sweep and where
each row was measured (``results.rows.CLUSTER_COLUMNS``: host, GPU UUID, worker); a
pipeline's rows keep the pipeline columns (and its seed summaries). The folder of a GPU
model is ``statistics/<gpu>/`` (or under ``--out``: the folder itself when the cluster has
one model, ``<out>/<gpu>/`` for each model otherwise). The files of the models known when
the run starts are opened (locked, checked) before the first point, by the rules of
:mod:`harness.results.files`; a model that only joins later gets its files when its
first row lands. Each GPU's copy-bandwidth record, as its worker measured it, is kept as
``<folder>/calibration/<uuid>.json`` (a later record of the same GPU in the same run beside
it, see :meth:`ClusterOutputs.calibration`). A file the run would refuse is refused before
its cluster starts where its folder is known then (:func:`refuse_existing`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
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
        #: Calibration records kept by this run, by the file of a GPU's first one.
        self.records: Counter[Path] = Counter()

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
    def written(self) -> int:
        """Rows written so far: what an interrupted run keeps, counted by each file as a
        row lands (see ``harness.engine.bench.Outputs.written``)."""
        return sum(w.written for w in self.writers.values())

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

    def calibration(self, slug: str, record: dict[str, Any]) -> Path:
        """Keep a GPU's copy-bandwidth record, as its worker measured it, in
        ``calibration/<uuid>.json`` (a GPU whose UUID is unknown: its host's name); the
        path it went to.

        Every record of the run is kept, none over another: a worker that replaces a dead
        one on the same GPU measures it again, and the rows it measures refer to that
        record's peak while the rows measured before refer to the first one's (two GPUs of
        a host without UUIDs share a name too). So a name's first record of the run is
        ``<name>.json``, replacing an earlier run's as ``harness calibrate`` replaces its
        own, and its later ones go beside it as ``<name>.2.json``, ``<name>.3.json``... (a
        name holds no dot, so no other GPU's or host's file has that form). An earlier
        run's later records go with its first (left, they would read as this run's)."""
        name = _record_name(record)
        d = files.folder(self.folder(slug) / CALIBRATIONS)
        first = d / f"{name}.json"
        self.records[first] += 1
        n = self.records[first]
        if n == 1:  # an earlier run's later records of this GPU
            for stale in d.glob(f"{name}.*.json"):
                if stale.name[len(name) + 1:-len(".json")].isdigit():
                    stale.unlink(missing_ok=True)
        data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
        return files.replace(first if n == 1 else d / f"{name}.{n}.json", data, root=d)

    def close(self) -> None:
        """Close every file and release its lock (again: nothing)."""
        for w in self.writers.values():
            w.close()


def _record_name(record: dict[str, Any]) -> str:
    """The file name of a calibration record: its GPU's UUID, else its host's name (letters,
    digits, '-' and '_' only)."""
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in
                   record.get("gpu_uuid") or record.get("host", "gpu"))


def refuse_existing(jobs: Sequence[Job], folders: Iterable[Path], existing: str) -> None:
    """Before the cluster starts: refuse, as the run itself would once its workers are up,
    a result file in ``folders`` that holds rows where ``existing`` refuses such a file (no
    ``--append`` or ``--overwrite``), or that another run holds. The run's own writers do
    it (the plain run's check and its one line, ResultFileError): the files of each target
    whose CSV exists are opened as the run opens them and closed at once, the CSV
    untouched. A target without a CSV there is left to the run (no file is made for it
    here), and so are ``--append``'s checks (they cut a torn last row away, which the run
    reports when it opens the file)."""
    if existing != files.REFUSE:
        return
    for d in folders:
        there = [j for j in jobs if os.path.lexists(d / f"{j.target.name}.csv")]
        if there:
            # Not per model and no model's folder open yet: the first model asked for (any
            # name) writes into ``d`` itself.
            check = ClusterOutputs(there, d, per_model=False, existing=existing)
            try:
                check.folder("check")
            finally:
                check.close()
