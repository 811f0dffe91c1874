"""Benchmark sweeps (``harness bench``): one loop over the jobs of stages and pipelines.

Each job is measured (:mod:`harness.engine.measure`) and its row written to
``<out>/<target>.csv`` the moment it lands (see :mod:`harness.results.rows`), then yielded
so the caller can draw progress: an interrupted sweep keeps every finished row. A stage
with a torch twin is measured on the peers first, and its own row gets the speedup over
the best of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.backend import Backend
from harness.contract.registry import Registry
from harness.contract.stage import Stage
from harness.contract.timing import TimingConfig
from harness.engine import devices
from harness.engine.jobs import Job, plan
from harness.engine.measure import BenchConfig, measure, speedup
from harness.engine.targets import check_families, resolve
from harness.errors import BadInput, GpuUnavailable
from harness.results.pipeline_rows import PipelineCsv
from harness.results.provenance import RunMeta
from harness.results.rows import CsvWriter

#: On the CPU fallback, the default sweep keeps points moving at most this many bytes.
CPU_BYTES = 1 << 26
#: On the CPU fallback, a point samples for at most this many seconds.
CPU_BUDGET_S = 0.5


@dataclass(frozen=True)
class Measured:
    """A row as it landed, and the job it measured."""

    job: Job
    row: dict[str, Any]


def _has_peers(job: Job) -> bool:
    return getattr(job.target, "torch_impl", None) is not None


def run(jobs: Sequence[Job], backend: Backend, cfg: BenchConfig, meta: RunMeta,
        out_dir: Path, append: bool = False, peers: Sequence[Backend] = (),
        stages: Mapping[str, Stage] | None = None) -> Iterator[Measured]:
    """Measure the jobs in order, a stage's point on the peers first (where it has a torch
    twin) and then on ``backend``, whose row gets ``speedup_vs_best_peer``. Each row is on
    disk in ``<out_dir>/<target>.csv`` before it is yielded."""
    writers: dict[str, CsvWriter | PipelineCsv] = {}
    try:
        for job in jobs:
            t = job.target
            if t.name not in writers:
                writers[t.name] = PipelineCsv(out_dir, t.name, append, t.seed_summaries) \
                    if job.is_pipeline else CsvWriter(Path(out_dir) / f"{t.name}.csv", append)
            peer_rows = []
            for peer in peers if _has_peers(job) else ():
                peer_rows.append(measure(job, peer, cfg, meta, stages))
                writers[t.name].write(peer_rows[-1])
                yield Measured(job, peer_rows[-1])
            row = measure(job, backend, cfg, meta, stages)
            if not job.is_pipeline:
                row["speedup_vs_best_peer"] = speedup(row, peer_rows)
            writers[t.name].write(row)
            yield Measured(job, row)
    finally:
        for w in writers.values():
            w.close()


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


def bench(reg: Registry, names: Sequence[str] | None, *, sweep: Sequence[str] = (),
          variants: Sequence[str] | None = None, defines: Sequence[str] = (),
          family: str = "normal", backend: str = "auto", peers: str = "none",
          hot: bool = False, graph: bool = False, budget: float = 2.0, verify: bool = True,
          seed: int = 0, options: Mapping[str, str] | None = None,
          out_dir: Path | None = None, append: bool = False, device: int = 0) -> BenchRun:
    """``harness bench``: plan the sweep of the named targets (default: every stage) and
    open its backend; every input error is raised here, before a row is measured. On the
    CPU fallback the default sweep keeps to points of at most ``CPU_BYTES``."""
    tg = resolve(reg, names, with_pipelines=False)
    check_families(tg.all, [family])
    chosen = devices.choose(backend, device)
    peer_backends = devices.peers(chosen, peers)
    jobs = plan(tg.all, sweep, variants, options or {}, defines)
    if not chosen.on_gpu and not sweep:
        jobs = [j for j in jobs if j.is_pipeline or j.target.bytes_moved(j.point) <= CPU_BYTES]
    if graph and not chosen.on_gpu:
        raise BadInput("--graph times CUDA graph replays: it needs the pycuda backend")
    if tg.pipelines and not chosen.on_gpu:
        raise GpuUnavailable(f"{tg.pipelines[0].name} is a pipeline of GPU streams: it needs "
                             f"a GPU ({chosen.note})")
    cfg = BenchConfig(family, seed, TimingConfig(
        budget_s=budget if chosen.on_gpu else min(budget, CPU_BUDGET_S), cold=not hot,
        graph=graph), verify)
    dest = out_dir or paths.statistics_dir() / chosen.slug
    total = sum(1 + len(peer_backends) * _has_peers(j) for j in jobs)
    return BenchRun(run(jobs, chosen.runner, cfg, chosen.meta, dest, append, peer_backends,
                        reg.stages), total, dest, chosen.on_gpu, chosen.note)
