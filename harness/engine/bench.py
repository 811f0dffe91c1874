"""Benchmark sweeps (``harness bench``): one loop over the jobs of stages and pipelines.

Each job is measured (:mod:`harness.engine.measure`) and its row written to
``<out>/<target>.csv`` the moment it lands (see :mod:`harness.results.rows`), then yielded
so the caller can draw progress: an interrupted sweep keeps every finished row. With
``--repeats`` (:mod:`harness.engine.repeats`) a point's rows land together, after its last
repeat. Every file
is opened (locked, checked, a torn last row cut away) before the first point is measured,
by the rules of :mod:`harness.results.files`. A stage
with torch peers is measured on them first, and its own row gets the speedup over the best
of them (judged peers that passed: :func:`harness.engine.measure.speedup`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.backend import Backend
from harness.contract.registry import Registry
from harness.contract.stage import Stage
from harness.contract.timing import TimingConfig
from harness.engine import baseline, devices, rows
from harness.engine.jobs import Job, plan
from harness.engine.measure import BenchConfig, PointMemo, measure, point_key, with_speedup
from harness.engine.repeats import combine, schedule, spacer
from harness.engine.resume import pending
from harness.engine.sticky import context_lost, stop_if_lost, unrun
from harness.engine.targets import check_families, check_options, resolve
from harness.errors import BadInput, GpuUnavailable
from harness.results import files
from harness.results.pipeline_rows import PipelineCsv
from harness.results.provenance import RunMeta
from harness.results.rows import CsvWriter, read_rows

#: On the CPU fallback, the default sweep keeps points moving at most this many bytes.
CPU_BYTES = 1 << 26
#: On the CPU fallback, a point samples for at most this many seconds.
CPU_BUDGET_S = 0.5


@dataclass(frozen=True)
class Measured:
    """A row as it landed, and the job it measured."""

    job: Job
    row: dict[str, Any]


class Outputs:
    """The sweep's result files, ``<out_dir>/<target>.csv`` (a pipeline's with its seed
    summaries), every one opened, locked and checked before a point is measured: a file
    that exists (unless ``existing`` says to append or overwrite), another run's lock, a
    symlink out of the folder, a read-only place all stop the sweep before it starts."""

    def __init__(self, jobs: Sequence[Job], out_dir: Path,
                 existing: str = files.REFUSE) -> None:
        self.dir = files.folder(out_dir, "--out")
        self.writers: dict[str, CsvWriter | PipelineCsv] = {}
        try:
            for job in jobs:
                t = job.target
                if t.name not in self.writers:
                    self.writers[t.name] = PipelineCsv(self.dir, t.name, existing,
                                                       t.seed_summaries) \
                        if job.is_pipeline else CsvWriter(self.dir / f"{t.name}.csv",
                                                          existing, root=self.dir)
        except BaseException:
            self.close()
            raise

    @property
    def repaired(self) -> list[str]:
        """What was cut from the files before appending, a line per file."""
        return [w.repaired for w in self.writers.values() if w.repaired]

    @property
    def written(self) -> int:
        """Rows written so far: what an interrupted run keeps, counted by each file as a
        row lands (a count kept here, after the write returns, would miss a row that an
        interrupt caught between the two)."""
        return sum(w.written for w in self.writers.values())

    def write(self, job: Job, row: dict[str, Any]) -> None:
        """The row, whole, in its target's file now."""
        self.writers[job.target.name].write(row)

    def close(self) -> None:
        """Close every file and release its lock (again: nothing)."""
        for w in self.writers.values():
            w.close()


def run(jobs: Sequence[Job], backend: Backend, cfg: BenchConfig, meta: RunMeta,
        out: Path | Outputs, existing: str = files.REFUSE, peers: Sequence[Backend] = (),
        stages: Mapping[str, Stage] | None = None, repeats: int = 1,
        stop_when_lost: bool = True) -> Iterator[Measured]:
    """Measure the jobs in order, a stage's point on the peers first (those it has) and
    then on ``backend``, whose row gets ``speedup_vs_best_peer``. Each row is on
    disk in ``<out>/<target>.csv`` before it is yielded; ``out`` is the folder (its files
    opened as ``existing`` says when the first row is asked for) or the files opened.

    With ``repeats`` above 1 the jobs of one point (its variants and builds) and its peers
    are measured that many times in rotated orders (:mod:`harness.engine.repeats`), and
    their rows land together once the point's last repeat is done.

    ``stop_when_lost``: a row that failed on a sticky device error (:func:`context_lost`)
    ends the sweep there with ContextLost, once it is written; off for a cluster worker,
    which hands its rows back and is restarted by its nanny."""
    outputs = out if isinstance(out, Outputs) else Outputs(jobs, out, existing)
    try:
        if repeats > 1:
            yield from _repeated(jobs, backend, cfg, meta, outputs, peers, stages, repeats,
                                 stop_when_lost)
            return
        # The jobs of one point that follow each other (its peers, ours, an --against
        # twin, a --define sweep's builds) draw its inputs and compute its reference
        # once; what they kept goes before the next point, so a sweep holds one point's
        # at most.
        place = itertools.count()
        for _, group in itertools.groupby(jobs, key=point_key):
            together = [(job, _serving(peers, job), next(place)) for job in group]
            memo = PointMemo() if sum(1 + len(p) for _, p, _ in together) > 1 else None
            timed: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
            for job, serving, at in together:
                peer_rows = timed.setdefault(job.peer_key, []) if serving else []
                for peer in serving:
                    peer_rows.append(measure(job.as_peers_run_it(), peer, cfg, meta, stages,
                                             memo=memo))
                    outputs.write(job, peer_rows[-1])
                    yield Measured(job, peer_rows[-1])
                    # ours at this point among those not run
                    if stop_when_lost:
                        stop_if_lost(job, peer_rows[-1], unrun(len(jobs) - at, "this point's "
                                                                               "own included"))
                row = measure(job, backend, cfg, meta, stages, memo=memo)
                if not job.is_pipeline:
                    with_speedup(row, _against(job, peer_rows, timed))
                outputs.write(job, row)
                yield Measured(job, row)
                if stop_when_lost:
                    stop_if_lost(job, row, unrun(len(jobs) - at - 1))
            del memo  # the point's draw and reference go before the next point's
    finally:
        outputs.close()


def _serving(peers: Sequence[Backend], job: Job) -> list[Backend]:
    """The peers that run ``job``'s target (none for a twin of ``--against``, whose
    variant's job measures them, nor for a ``--define`` build after the first of its
    declared variant at a point: ``Job.times_peers``)."""
    if job.twin_of or not job.times_peers:
        return []
    return [p for p in peers if devices.serves(p, job.target)]


def _against(job: Job, own: list[dict[str, Any]],
             timed: Mapping[tuple[str, str, str], list[dict[str, Any]]]
             ) -> list[dict[str, Any]]:
    """The peer rows a job's speedup is against: those timed with it, or, for a build
    whose peers were timed with the first build of its declared variant at the point
    (``Job.times_peers`` False), those, timed in this process just before."""
    return own if job.times_peers else timed.get(job.peer_key, [])


def _repeated(jobs: Sequence[Job], backend: Backend, cfg: BenchConfig, meta: RunMeta,
              outputs: Outputs, peers: Sequence[Backend], stages: Mapping[str, Stage] | None,
              repeats: int, stop_when_lost: bool) -> Iterator[Measured]:
    """:func:`run` with ``repeats`` rounds a point: every (job, backend) of the point in
    each round, in rotated order; then each one's row, peers first, from its repeats."""
    groups = _points(jobs)
    for at, group in enumerate(groups):
        # A unit is a (job, backend) pair; its repeats are kept by its place in the list,
        # so two peers of one name (--peers torch,torch) stay two rows.
        units = [(j, b) for job in group for j, b in
                 [*((job.as_peers_run_it(), p) for p in _serving(peers, job)), (job, backend)]]
        got: list[list[dict[str, Any]]] = [[] for _ in units]
        memo = PointMemo()  # the point's inputs drawn once, its reference once
        for r, i in schedule(range(len(units)), repeats):
            job, b = units[i]
            placed = dataclasses.replace(cfg, timing=dataclasses.replace(
                cfg.timing, spacer_bytes=spacer(r)))
            got[i].append(measure(job, b, placed, meta, stages, memo=memo))
            if stop_when_lost and got[i][-1]["status"] == "failed" \
                    and context_lost(got[i][-1]["reason"]):
                # the point's repeats so far, each unit's from those it has (its reason
                # says how many), then the stop
                for (unit_job, _), kept in zip(units, got, strict=True):
                    if kept:
                        partial = combine(kept, unit_job.is_pipeline)
                        outputs.write(unit_job, partial)
                        yield Measured(unit_job, partial)
                left = len(jobs) - sum(len(g) for g in groups[:at])
                stop_if_lost(job, got[i][-1], unrun(left, "this point's included, whose "
                                                          "rows hold the repeats measured"))
        rows = iter(got)
        timed: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for job in group:
            serving = _serving(peers, job)
            peer_rows = timed.setdefault(job.peer_key, []) if serving else []
            for _ in serving:  # a pipeline's peer rows are pipeline rows
                peer_rows.append(combine(next(rows), job.is_pipeline))
                outputs.write(job, peer_rows[-1])
                yield Measured(job, peer_rows[-1])
            row = combine(next(rows), job.is_pipeline)
            if not job.is_pipeline:
                with_speedup(row, _against(job, peer_rows, timed))
            outputs.write(job, row)
            yield Measured(job, row)


def _points(jobs: Sequence[Job]) -> list[list[Job]]:
    """The jobs grouped by target and point, in the order each point first appears: a
    point's variants and ``--define`` builds together, the axes a variant pins (a
    compiled-in mode or layout) left out of the point, so those variants rotate too."""
    groups: dict[tuple[str, str], list[Job]] = {}
    for job in jobs:
        pinned = dict(job.variant.pins)
        free = sorted((k, v) for k, v in job.point.items() if k not in pinned)
        groups.setdefault((job.target.name, repr(free)), []).append(job)
    return list(groups.values())


@dataclass(frozen=True)
class Sampling:
    """When a point's sampling stops, besides its budget (nvbench's stopping criterion):
    the noise of the median under ``max_noise_pct`` with at least ``min_samples`` kept, or
    ``max_samples`` taken (``--max-noise``, ``--min-samples``, ``--max-samples``)."""

    max_noise_pct: float = 1.0
    min_samples: int = 20
    max_samples: int = 2000

    def check(self) -> None:
        """BadInput for a target that is no positive finite percentage, or sample counts
        out of order."""
        if not (math.isfinite(self.max_noise_pct) and self.max_noise_pct > 0):
            raise BadInput(f"--max-noise must be a finite percentage above 0, not "
                           f"{self.max_noise_pct}")
        if not 1 <= self.min_samples <= self.max_samples:
            raise BadInput(f"--min-samples ({self.min_samples}) must be at least 1 and at "
                           f"most --max-samples ({self.max_samples})")

    def timing(self, budget: float, on_gpu: bool, hot: bool, graph: bool,
               drain: bool = False) -> TimingConfig:
        """The TimingConfig of a point sampled so, within ``budget`` seconds (on the CPU
        fallback at most :data:`CPU_BUDGET_S`), L2 flushed unless ``hot``, the run's writes
        drained inside the sample with ``drain`` (:func:`check_drain` first)."""
        return TimingConfig(budget_s=budget if on_gpu else min(budget, CPU_BUDGET_S),
                            cold=not hot, drain=drain, graph=graph,
                            target_noise_pct=self.max_noise_pct,
                            min_samples=self.min_samples, max_samples=self.max_samples)


#: nvbench's and the harness's defaults: 1 % noise, 20 to 2000 samples.
DEFAULT_SAMPLING = Sampling()


def check_drain(drain: bool, hot: bool, on_gpu: bool, pipelines: Sequence[Any]) -> None:
    """BadInput for ``--drain`` where it cannot be honoured: with ``--hot`` (a drained
    sample is a cold one), off the GPU, or over a pipeline (its steps' intervals end at
    their own events)."""
    if not drain:
        return
    if hot:
        raise BadInput("--drain and --hot exclude each other: a drained sample starts cold")
    if not on_gpu:
        raise BadInput("--drain times the GPU's write-back: it needs the pycuda backend")
    if pipelines:
        raise BadInput(f"--drain times stages and their peers, not the pipeline "
                       f"{pipelines[0].name}")


def check_budget(budget: float) -> None:
    """BadInput for a sampling budget that is not a finite number of seconds (``inf``
    passes the option's minimum; a sweep's chunks are sized by it)."""
    if not math.isfinite(budget):
        raise BadInput(f"--budget must be a finite number of seconds, not {budget}")


@dataclass
class BenchRun:
    """A planned sweep: iterate ``rows`` to measure it (each row written as it lands)."""

    rows: Iterator[Measured]
    #: Rows the sweep will write (peers included).
    total: int
    out_dir: Path
    #: Whether the backend is the GPU (else the NumPy references stand in).
    on_gpu: bool
    #: Why the GPU is not used, or that it is not calibrated ('' when neither).
    note: str
    #: What was cut from the files before appending (torn last rows), a line per file.
    repaired: list[str] = dataclasses.field(default_factory=list)
    #: The result files, open and locked until the rows are drawn or :meth:`close`.
    outputs: Outputs | None = None
    #: Points left as they were: measured already by this command (``--resume``).
    resumed: int = 0
    #: The ``--define`` builds a ``--restrict`` left out, "STAGE BUILD" each.
    left_out: list[str] = dataclasses.field(default_factory=list)
    #: Points of the default sweep past CPU_BYTES that the CPU fallback left out.
    past_cpu: int = 0

    def written(self) -> int | None:
        """Rows in the files so far (None where the run keeps no count). A row is written
        before it is handed out, so an interrupt can land between the two: this, not the
        rows drawn, is what the run keeps."""
        return self.outputs.written if self.outputs is not None else None

    def close(self) -> None:
        """Stop the sweep where it is and let go of its files (their rows are kept)."""
        self.rows.close()
        if self.outputs is not None:
            self.outputs.close()


def bench(reg: Registry, names: Sequence[str] | None, *, sweep: Sequence[str] = (),
          variants: Sequence[str] | None = None, defines: Sequence[str] = (),
          family: str = "normal", backend: str = "auto", peers: str = "none",
          hot: bool = False, graph: bool = False, budget: float = 2.0, verify: bool = True,
          seed: int = 0, options: Mapping[str, str] | None = None,
          out_dir: Path | None = None, append: bool = False, overwrite: bool = False,
          device: int = 0, repeats: int = 1, against: str | None = None,
          resume: bool = False, restrict: Sequence[str] = (), drain: bool = False,
          sampling: Sampling = DEFAULT_SAMPLING) -> BenchRun:
    """``harness bench``: plan the sweep of the named targets (default: every stage), open
    its backend and its result files (an existing one is added to with ``append``, replaced
    with ``overwrite``, else refused); every input error is raised here, before a row is
    measured. On the CPU fallback the default sweep keeps to points of at most
    ``CPU_BYTES``. ``repeats``: each point measured that many times (see :func:`run`).
    ``against``: a folder holding another revision's ``kernels/`` tree, or a git revision;
    each stage job gets a twin built from it, measured beside it
    (:mod:`harness.engine.baseline`). ``resume``: the points this command has measured
    already (:mod:`harness.engine.resume`) are left as they are, the rest appended.
    ``restrict``: conditions on a ``--define`` sweep's builds; those that fail one are left
    out (named in ``left_out``). ``sampling``: when a point's sampling stops, besides the
    budget. ``drain``: each sample holds the run's write-back (``TimingConfig.drain``)."""
    if repeats < 1:
        raise BadInput(f"--repeats must be at least 1, not {repeats}")
    check_budget(budget)
    sampling.check()
    if resume and overwrite:
        raise BadInput("--resume and --overwrite exclude each other: keep the rows measured "
                       "so far, or replace them")
    existing = files.on_existing(append or resume, overwrite)
    tg = resolve(reg, names, with_pipelines=False)
    check_families(tg.all, [family])
    check_options(tg.all, options or {})
    chosen = devices.choose(backend, device)
    peer_backends = devices.peers(chosen, peers, devices.named_peers(tg.all))
    left_out: list[str] = []
    jobs = plan(tg.all, sweep, variants, options or {}, defines, restrict, left_out)
    past_cpu = 0
    if not chosen.on_gpu and not sweep:
        kept = [j for j in jobs if j.is_pipeline or j.target.bytes_moved(j.point) <= CPU_BYTES]
        past_cpu, jobs = len(jobs) - len(kept), kept
    if against is not None:
        earlier = baseline.kernels_from(against, paths.project_root())
        if not chosen.on_gpu:
            raise BadInput("--against times kernel builds: it needs the pycuda backend")
        jobs = baseline.with_twins(jobs, *earlier)
    if graph and not chosen.on_gpu:
        raise BadInput("--graph times CUDA graph replays: it needs the pycuda backend")
    if tg.pipelines and not chosen.on_gpu:
        raise GpuUnavailable(f"{tg.pipelines[0].name} is a pipeline of GPU streams: it needs "
                             f"a GPU ({chosen.note})")
    check_drain(drain, hot, chosen.on_gpu, tg.pipelines)
    cfg = BenchConfig(family, seed, sampling.timing(budget, chosen.on_gpu, hot, graph, drain),
                      verify)
    dest = out_dir or paths.statistics_dir() / chosen.slug
    outputs = Outputs(jobs, dest, existing)
    done = 0
    if resume:  # read once the files are locked and a torn last row is cut away
        def expected(job: Job) -> list[dict[str, Any]]:
            return [rows.base(job.as_peers_run_it(), b.backend, family, cfg.timing.l2,
                              chosen.meta, reg.stages, graph)
                    for b in _serving(peer_backends, job)] + \
                [rows.base(job, chosen.runner.backend, family, cfg.timing.l2, chosen.meta,
                           reg.stages, graph)]

        def existing_rows(job: Job) -> list[dict[str, str]]:
            path = outputs.dir / f"{job.target.name}.csv"
            return read_rows(path) if path.is_file() else []

        jobs, done = pending(_points(jobs), expected, existing_rows)
    total = sum(1 + len(_serving(peer_backends, j)) for j in jobs)
    note = chosen.note
    if defines and not chosen.on_gpu:  # the rows' names say builds the reference lacks
        note += ("; --define names kernel builds, which the NumPy reference does not have: "
                 "its rows of each build time the same reference, and say so")
    return BenchRun(run(jobs, chosen.runner, cfg, chosen.meta, outputs, peers=peer_backends,
                        stages=reg.stages, repeats=repeats), total, dest, chosen.on_gpu,
                    note, outputs.repaired, outputs, resumed=done, left_out=left_out,
                    past_cpu=past_cpu)
