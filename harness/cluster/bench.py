"""``harness bench --cluster``: the sweep of :func:`harness.engine.bench.bench`, its points
measured by the cluster's workers and its rows written by the driver alone.

The driver plans the jobs as a plain sweep does (the same targets, checks and plan), starts
or reaches the cluster, has every worker build its backend (and calibrate its GPU) once,
opens the result files of each GPU model before the first point, then hands the points
out (:mod:`harness.cluster.driver`) and writes each point's rows, with the worker's host,
GPU UUID and name, the moment they come back. What it returns is the plain sweep's
:class:`~harness.engine.bench.BenchRun`, so the CLI draws one progress bar over it and an
interrupted run keeps every finished row.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.backends.pycuda.context import gpu_slug
from harness.backends.torch import serves
from harness.cluster import connect
from harness.cluster.connect import Session
from harness.cluster.driver import check_joined, greet, hand_out, per_worker
from harness.cluster.options import WORKERS_S, ClusterSpec
from harness.cluster.outputs import ClusterOutputs, refuse_existing
from harness.cluster.worker import Identity, PointTask, Setup, run_point
from harness.contract import registry
from harness.contract.registry import Registry
from harness.engine import bench as plain
from harness.engine import devices, rows
from harness.engine.jobs import Job, plan
from harness.engine.measure import REASON_CHARS, BenchConfig
from harness.engine.targets import check_families, check_options, resolve
from harness.errors import BadInput, GpuUnavailable
from harness.results import files, provenance
from harness.results.provenance import RunMeta
from harness.results.rows import fit_reason


@dataclass
class ClusterRun(plain.BenchRun):
    """A sweep on a cluster; :meth:`close` also lets go of its files and its cluster."""

    files: ClusterOutputs | None = None
    session: Session | None = None

    def written(self) -> int | None:
        """Rows in the driver's files so far (see BenchRun.written)."""
        return self.files.written if self.files is not None else None

    def close(self) -> None:
        """Stop where it is: cancel the points out, close the files (their rows are
        kept) and the cluster started for the run."""
        super().close()
        if self.files is not None:
            self.files.close()
        if self.session is not None:
            self.session.close()


def bench(reg: Registry, names: Sequence[str] | None, *, cluster: ClusterSpec,
          sweep: Sequence[str] = (), variants: Sequence[str] | None = None,
          defines: Sequence[str] = (), family: str = "normal", backend: str = "auto",
          peers: str = "none", hot: bool = False, graph: bool = False, budget: float = 2.0,
          verify: bool = True, seed: int = 0, options: Mapping[str, str] | None = None,
          out_dir: Path | None = None, append: bool = False, overwrite: bool = False,
          drain: bool = False, session: Session | None = None, repeats: int = 1,
          against: str | None = None, resume: bool = False,
          restrict: Sequence[str] = (),
          sampling: plain.Sampling = plain.DEFAULT_SAMPLING) -> ClusterRun:
    """``harness bench --cluster``: as :func:`harness.engine.bench.bench`, each point on a
    worker of the cluster ``cluster`` names (or of ``session``, which the run then leaves
    open). Every input error is raised before a point is handed out."""
    existing = files.on_existing(append, overwrite)
    if against is not None:  # its point is one process; workers would split the pair
        raise BadInput("--against times two builds of a kernel in one process: not with "
                       "--cluster")
    plain.check_budget(budget)
    sampling.check()
    if resume:  # which worker measured what is the run's own record, not the files'
        raise BadInput("--resume continues one process's sweep from its files: not with "
                       "--cluster (a cluster run already hands a dead worker's points on)")
    if repeats != 1:  # a point's repeats would land on different workers: not comparable
        raise BadInput("--repeats measures a point's rows in one process, in rotated "
                       "order; a --cluster run hands points to workers one by one: leave "
                       "out one of the two")
    if backend not in devices.CHOICES:
        raise BadInput(f"unknown backend {backend!r} (known: {', '.join(devices.CHOICES)})")
    tg = resolve(reg, names, with_pipelines=False)
    check_families(tg.all, [family])
    check_options(tg.all, options or {})
    left_out: list[str] = []
    # Each build is a task of its own (PointTask is one job), and the worker that rebuilds
    # it times its peers (Job.times_peers' default; the plan's flag does not travel): a
    # point's builds may run on different workers, and a speedup is only ever against
    # peers its process timed. (One task a point's builds would leave GPUs idle, and take
    # every build down with one that poisons the context.)
    jobs = plan(tg.all, sweep, variants, options or {}, defines, restrict, left_out)
    setup = Setup(backend, peers, tuple(devices.named_peers(tg.all)),
                  provenance.command_line(), not registry.external_allowed())
    # A file the run would refuse is refused now, as a plain run refuses it before its first
    # point, not once the cluster's workers are up (Slurm jobs may queue for long).
    refuse_existing(jobs, _known_folders(cluster, backend, out_dir), existing)
    s = session or connect.open_session(cluster, backend)
    outputs = None
    try:
        idents = greet(s.client, setup, cluster.limit_s)
        on_gpu = any(i.backend != "numpy" for i in idents.values())
        if not on_gpu and not sweep:
            jobs = [j for j in jobs if j.is_pipeline
                    or j.target.bytes_moved(j.point) <= plain.CPU_BYTES]
        if graph and not on_gpu:
            raise BadInput("--graph times CUDA graph replays: it needs the pycuda backend")
        if tg.pipelines and not on_gpu:
            raise GpuUnavailable(f"{tg.pipelines[0].name} is a pipeline of GPU streams: it "
                                 "needs GPU workers")
        plain.check_drain(drain, hot, on_gpu, tg.pipelines)
        cfg = BenchConfig(family, seed, sampling.timing(budget, on_gpu, hot, graph, drain),
                          verify)
        slugs = sorted({i.slug for i in idents.values()})
        outputs = ClusterOutputs(jobs, out_dir or paths.statistics_dir(),
                                 out_dir is None or len(slugs) > 1, existing)
        for slug in slugs:
            outputs.folder(slug)
        for i in idents.values():
            if i.calibration is not None:
                outputs.calibration(i.slug, i.calibration)
        named = {p for i in idents.values() for p in i.peers}
        total = sum(1 + sum(serves(p, j.target) for p in named) for j in jobs)
        shown = outputs.folder(slugs[0]) if len(slugs) == 1 else outputs.root
        gen = _rows(s.client, setup, cfg, jobs, outputs, idents, cluster.retries, reg,
                    cluster.limit_s)
        return ClusterRun(gen, total, shown, on_gpu, _note(s, idents, on_gpu),
                          repaired=outputs.repaired, outputs=None, files=outputs,
                          session=s if session is None else None, left_out=left_out)
    except BaseException:
        if outputs is not None:
            outputs.close()
        if session is None:
            s.close()
        raise


def _known_folders(cluster: ClusterSpec, backend: str, out_dir: Path | None) -> list[Path]:
    """The folders the run will write its CSVs in, as far as they are known before its
    cluster starts (a folder is a GPU model's, and the models are the workers'). On this
    machine (``local``) they are: the NumPy references' ``cpu``, or the models nvidia-smi
    lists for the workers to start. A scheduler's or Slurm's models are known once their
    workers are greeted; with ``--out`` the folder is still known where the cluster has one
    model, the usual case, and taken to be that: an existing CSV in it is refused before
    the workers start even if they turn out to be of several models (whose files go under
    ``--out``'s subfolders instead). Without ``--out`` their CSVs are checked once the
    workers are up."""
    slugs: list[str] = []
    if cluster.kind == "local":
        gpus = [] if backend == "numpy" else connect.local_gpus()[:cluster.workers]
        if gpus:
            slugs = sorted({gpu_slug(g.name) for g in gpus})
        elif backend != "pycuda":  # (pycuda without a GPU: the workers refuse to start)
            slugs = ["cpu"]
    if out_dir is None:
        return [paths.statistics_dir() / slug for slug in slugs]
    if len(slugs) > 1:
        return [out_dir / slug for slug in slugs]
    return [out_dir]


def _note(s: Session, idents: Mapping[str, Identity], on_gpu: bool) -> str:
    """The cluster in a line: its workers, their GPUs and calibrated bandwidth."""
    parts = []
    for i in idents.values():
        where = f"{i.worker}@{i.host}"
        if i.calibration is not None:
            where += f" {i.gpu} {i.gpu_uuid} {i.calibration['gbps']:.0f} GB/s"
        parts.append(where)
    why = next((i.note for i in idents.values() if i.note), "")
    return f"{s.what} ({'; '.join(parts)})" + ("" if on_gpu else f", {why}")


def _rows(client: Any, setup: Setup, cfg: BenchConfig, jobs: Sequence[Job],
          outputs: ClusterOutputs, idents: dict[str, Identity], retries: int,
          reg: Registry, wait_s: float = WORKERS_S) -> Iterator[plain.Measured]:
    """Hand the points out and write each one's rows as they land, then yield them."""
    tasks = [PointTask(n, j.target.name, j.variant, j.point) for n, j in enumerate(jobs)]
    first = next(iter(idents.values()))
    try:
        for out in hand_out(client, run_point, (setup, cfg), tasks, retries,
                            per_worker(client), wait_s):
            job = jobs[out.task.index]
            if out.done is None:
                ran = idents.get(out.died_on)  # None: which worker ran it is not known
                got = [_failed(job, out.error, ran, setup, cfg, reg, first)]
                ident = ran or first  # the file of its model, else of the first model
            else:
                ident = out.done.ident
                if ident.address not in idents:  # a worker that joined, or replaced one
                    check_joined(client, idents, ident)
                    if ident.calibration is not None:
                        outputs.calibration(ident.slug, ident.calibration)
                got = [_retried(r, out.attempts) | ident.columns() for r in out.done.rows]
            for row in got:  # every row of the point in its file before any is handed on:
                outputs.write(ident.slug, job, row)  # an interrupt at a yield loses none
            for row in got:
                yield plain.Measured(job, row)
    finally:
        with contextlib.suppress(Exception):
            outputs.close()


def _retried(row: dict[str, Any], attempts: int) -> dict[str, Any]:
    """The row, saying so when its point was handed out again after a worker died."""
    if attempts == 1:
        return row
    note = f"measured on attempt {attempts}: the worker that ran it before died"
    said = "; ".join(r for r in (row.get("reason"), note) if r)
    return {**row, "reason": fit_reason(said, REASON_CHARS)}


def _failed(job: Job, why: str, ident: Identity | None, setup: Setup, cfg: BenchConfig,
            reg: Registry, first: Identity) -> dict[str, Any]:
    """The ``failed`` row of a point that got no result: the engine's row with the reason,
    on the worker ``ident`` that ran it (the one it last died on), its GPU model and its
    columns. Where that worker is not known (a task that failed without a result, or died
    on a worker never met: a replacement that died before its first point came back), the
    row's ``gpu`` and the worker columns are left empty rather than borrowed from another
    worker; it is on the run's backend (``first``'s) and goes in the first model's file."""
    meta = RunMeta(gpu=ident.gpu if ident is not None else "", git_sha=provenance.git_sha(),
                   command=setup.command)
    row = rows.base(job, (ident or first).backend, cfg.family, cfg.timing.l2, meta,
                    reg.stages, cfg.timing.graph)
    return {**row, "status": "failed", "reason": why[:REASON_CHARS],
            **(ident.columns() if ident is not None else {})}
