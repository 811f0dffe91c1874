"""What the CLI commands do, as library calls that return data (the CLI only prints).

Targets are stages and pipelines by name; validation yields one summary per stage variant
(or pipeline) ready for the ledger; a bench session picks the backend (GPU, or the NumPy
references where there is none), carries the provenance, and yields rows as they land.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract import kernel as compiler
from harness.contract import timing
from harness.contract.registry import Registry
from harness.contract.stage import Pipeline, Stage
from harness.engine import bench, pipeline, sweep, validate
from harness.engine import calibrate as cal
from harness.engine.validate import CaseResult
from harness.errors import BadInput, GpuUnavailable
from harness.results import ledger
from harness.results import provenance as meta
from harness.tools import ncu

#: Axis names of the ``--mode``, ``--k`` and ``--group-size`` options.
OPTION_AXES = ("mode", "k", "group_size")


@dataclass(frozen=True)
class Targets:
    """The stages and pipelines a command acts on."""

    stages: list[Stage]
    pipelines: list[Pipeline]


def targets(reg: Registry, names: Sequence[str] | None, with_pipelines: bool) -> Targets:
    """Named stages and pipelines; none named: every stage, and every pipeline if asked."""
    if not names:
        pipes = [reg.pipelines[n] for n in sorted(reg.pipelines)] if with_pipelines else []
        return Targets(reg.select(None), pipes)
    stages, pipes = [], []
    for n in names:
        if n in reg.pipelines:
            pipes.append(reg.pipelines[n])
        else:
            stages.append(reg.get(n))
    return Targets(stages, pipes)


def options(**values: Any) -> dict[str, str]:
    """The ``--mode/--k/--group-size`` values given (None means not given)."""
    return {k: str(v) for k, v in values.items() if v is not None}


@dataclass
class ValidationSummary:
    """All cases of one stage variant (or pipeline)."""

    name: str
    variant: str
    kernel_hash: str
    families: list[str]
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        """Cases that passed."""
        return sum(c.ok for c in self.cases)

    def ledger_row(self, info: Any, seeds: int) -> dict[str, Any]:
        """The ledger row of this validation on the device ``info``."""
        return {"stage": self.name, "variant": self.variant, "kernel_hash": self.kernel_hash,
                "status": "pass" if self.cases and self.passed == len(self.cases) else "fail",
                "gpu": info.name, "cc": f"{info.cc[0]}.{info.cc[1]}", "driver": info.driver,
                "cuda": info.cuda, "date": meta.now(), "cases": len(self.cases),
                "passed": self.passed, "worst_error": validate.worst_errors(self.cases),
                "families": ",".join(self.families), "seeds": seeds, "git_sha": meta.git_sha()}


def validation(reg: Registry, tg: Targets, runner: Any, variant: str,
               families: Sequence[str] | None, seeds: int, seed: int,
               opts: dict[str, str]) -> Iterator[ValidationSummary]:
    """Validate every target variant (``variant`` a name or ``all``) on the runner."""
    for st in tg.stages:
        chosen = bench.select_variants(st, ["all"] if variant == "all" else [variant], opts)
        for v in chosen:
            fams = list(families or st.families)
            over = _overrides(st.axes, opts, dict(v.pins))
            yield ValidationSummary(st.name, v.name, compiler.kernel_hash(st, v), fams, list(
                validate.validate(st, v, runner, fams, seeds, seed, over)))
    for pipe in tg.pipelines:
        fams = list(families or pipe.families)
        for v in pipe.variants:
            yield ValidationSummary(
                pipe.name, v.name, ledger.pipeline_hash(pipe, reg.stages), fams,
                list(pipeline.validate(pipe, reg.stages, runner, fams, seeds, seed, [v])))


def _overrides(axes: Sequence[Any], opts: dict[str, str],
               pins: dict[str, Any]) -> dict[str, Any]:
    """Option values for the axes a stage has (and its variant does not pin), parsed."""
    out = {}
    for a in axes:
        if a.name in opts and a.name not in pins:
            try:
                out[a.name] = a.parse(opts[a.name])
            except ValueError as exc:
                raise BadInput(str(exc)) from exc
    return out


def open_gpu(device: int) -> Any:
    """A GpuRunner on ``device`` (the context is created by harness.backends.pycuda.context)."""
    from harness.backends.pycuda.context import Device
    from harness.backends.pycuda.runner import GpuRunner

    return GpuRunner(Device(device))


@dataclass
class BenchSession:
    """The backend of a bench run and the provenance of its rows."""

    runner: Any
    meta: bench.RunMeta
    slug: str
    note: str = ""

    @property
    def on_gpu(self) -> bool:
        """Whether the runner is the GPU."""
        return self.runner.backend != "numpy"


def open_bench(backend: str, device: int) -> BenchSession:
    """The GPU when there is one (or ``--backend pycuda`` demands it), else the NumPy
    references; ``note`` says why the GPU is not used."""
    from harness.backends.numpy import NumpyRunner

    if backend not in ("auto", "pycuda", "numpy"):
        raise BadInput(f"unknown backend {backend!r} (known: auto, pycuda, numpy)")
    cpu_meta = bench.RunMeta(gpu="cpu", git_sha=meta.git_sha(), command=meta.command_line())
    if backend == "numpy":
        return BenchSession(NumpyRunner(), cpu_meta, "cpu", "backend numpy asked for")
    try:
        runner = open_gpu(device)
    except GpuUnavailable as exc:
        if backend == "pycuda":
            raise
        return BenchSession(NumpyRunner(), cpu_meta, "cpu", f"no GPU ({exc})")
    info = runner.device.info
    c = cal.load(info.slug)
    m = bench.RunMeta(info.name, info.driver, info.cuda, meta.git_sha(), meta.command_line(),
                      c["gbps"] if c else None)
    note = "" if c else f"no calibration for {info.name}: pct_peak left empty " \
                        "(run `harness calibrate`)"
    return BenchSession(runner, m, info.slug, note)


#: On the CPU fallback, the default sweep keeps points moving at most this many bytes.
CPU_BYTES = 1 << 26


def open_peers(s: BenchSession, which: str) -> list[Any]:
    """The peer runners asked for with ``--peers`` (none, torch, torch_compile, all)."""
    from harness.backends.torch import BACKENDS, TorchRunner

    names = {"none": (), "all": BACKENDS}.get(which, tuple(which.split(",")))
    for n in names:
        if n not in BACKENDS:
            raise BadInput(f"unknown peer {n!r} (known: none, all, {', '.join(BACKENDS)})")
    if names and not s.on_gpu:
        raise GpuUnavailable(f"the torch peers are timed on the GPU ({s.note})")
    return [TorchRunner(n, s.runner) for n in names]


def bench_jobs(s: BenchSession, tg: Targets, sweep_specs: Sequence[str],
               variants: Sequence[str] | None, opts: dict[str, str],
               defines: Sequence[str] = ()) -> list[bench.Job]:
    """The stage jobs of a bench run (small points only on the CPU's default sweep)."""
    if defines and tg.pipelines:
        raise BadInput("--define tunes a stage's kernel; a pipeline's steps keep their "
                       "declared variants")
    jobs = bench.plan(tg.stages, sweep_specs, variants, opts, defines)
    if not s.on_gpu and not sweep_specs:
        jobs = [j for j in jobs if j.stage.bytes_moved(j.point) <= CPU_BYTES]
    return jobs


def pipeline_points(pipe: Pipeline, sweep_specs: Sequence[str],
                    opts: dict[str, str]) -> list[dict[str, Any]]:
    """The points of a pipeline sweep."""
    names = {a.name for a in pipe.axes}
    fixed = {k: v for k, v in opts.items() if k in names}
    grid = sweep.parse(sweep_specs)
    out: list[dict[str, Any]] = []
    for v in pipe.variants:  # every variant, side by side (staged vs fused, say)
        keep = {k: val for k, val in fixed.items() if k not in dict(v.pins)}
        out += sweep.points(pipe, grid, keep, v)  # type: ignore[arg-type]
    return out


def bench_pipeline(s: BenchSession, reg: Registry, pipe: Pipeline,
                   points: list[dict[str, Any]], family: str, seed: int, budget: float,
                   hot: bool, out_dir: Path, append: bool) -> Iterator[dict[str, Any]]:
    """Rows of a pipeline sweep (GPU only)."""
    if not s.on_gpu:
        raise GpuUnavailable(f"{pipe.name} is a pipeline of GPU streams: it needs a GPU "
                             f"({s.note})")
    m = pipeline.PipelineMeta(s.meta, ledger.pipeline_hash(pipe, reg.stages), not hot)
    return pipeline.bench(pipe, reg.stages, s.runner, points, family, seed, budget, not hot,
                          m, out_dir, append)


def bench_config(family: str, seed: int, budget: float, hot: bool, verify: bool,
                 on_gpu: bool, graph: bool = False) -> bench.BenchConfig:
    """Sampling settings (the CPU fallback gets at most half a second a point)."""
    if graph and not on_gpu:
        raise BadInput("--graph times CUDA graph replays: it needs the pycuda backend")
    return bench.BenchConfig(family, seed, timing.TimingConfig(
        budget_s=budget if on_gpu else min(budget, 0.5), cold=not hot, graph=graph), verify)


def results_dir(out_dir: Path | None, slug: str) -> Path:
    """``--out``, or ``statistics/<gpu>/``."""
    return out_dir or paths.statistics_dir() / slug


#: Columns of ``statistics/ncu/<stage>.csv``; the first eight join with the timing rows.
NCU_COLUMNS = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params",
               "kernel", *ncu.DEFAULT_METRICS.values(), "gpu", "git_sha", "timestamp",
               "command")


def profile_point(st: Stage, variant: str | None, opts: dict[str, str],
                  sweep_specs: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """The one (variant, point) ``harness profile`` looks at: the axes' defaults, changed by
    the options and ``AXIS=V`` sweeps of one value."""
    v = bench.select_variants(st, [variant] if variant else None, opts)[0]
    names = {a.name for a in st.axes}
    fixed = {k: val for k, val in opts.items() if k in names and k not in dict(v.pins)}
    pts = sweep.points(st, sweep.parse(sweep_specs), fixed, v, default_sweep=False)
    if len(pts) != 1:
        raise BadInput(f"harness profile takes one point; the options give {len(pts)}")
    return v, pts[0]


def profile(st: Stage, variant: Any, point: dict[str, Any], family: str,
            metrics: Sequence[str] | None, section_set: str | None, device: int,
            out_dir: Path) -> list[dict[str, Any]]:
    """Run the stage under ncu, write the parsed rows to ``<out_dir>/<stage>.csv``."""
    from harness.results.rows import CsvWriter

    cmd = ncu.command(st, variant, point, family, metrics, section_set, device)
    profs = ncu.run(cmd)
    # The columns that join with the timing rows, as a timing row of this point has them.
    base = bench.base_row(bench.Job(st, variant, point), "pycuda",
                          bench.BenchConfig(family=family), _provenance(device))
    rows = []
    for p in profs:
        r = {k: base[k] for k in (*NCU_COLUMNS[:8], "gpu", "git_sha", "timestamp", "command")}
        r["kernel"] = p.kernel
        for metric, short in ncu.DEFAULT_METRICS.items():
            v = p.duration_us() if metric == "gpu__time_duration.sum" else p.number(metric)
            r[short] = "" if v is None else v
        rows.append(r)
    with CsvWriter(Path(out_dir) / f"{st.name}.csv", append=True, columns=NCU_COLUMNS,
                   require_status=False) as w:
        for r in rows:
            w.write(r)
    return rows


SANITIZER_COLUMNS = ("stage", "variant", "tool", "points", "errors", "warnings", "returncode",
                     "status", "gpu", "git_sha", "timestamp", "command")


def sanitizer_path(device: int) -> Path:
    """``statistics/<gpu>/sanitizer.csv`` for the device (``gpu`` when unnamed)."""
    from harness.backends.pycuda.context import gpu_slug, smi_query

    return paths.statistics_dir() / gpu_slug(smi_query(device, "name") or "gpu") / \
        "sanitizer.csv"


def _provenance(device: int) -> bench.RunMeta:
    """The provenance of rows about a child process's run on ``device`` (profiles,
    sanitizer outcomes): the GPU's name, the commit, this command."""
    from harness.backends.pycuda.context import smi_query

    return bench.RunMeta(gpu=smi_query(device, "name"), git_sha=meta.git_sha(),
                         command=meta.command_line())


def sanitizer_row(o: Any, device: int) -> dict[str, Any]:
    """One summary row of a sanitizer outcome."""
    prov = _provenance(device).columns()
    return {"stage": o.stage, "variant": o.variant, "tool": o.tool, "points": o.points,
            "errors": o.errors, "warnings": o.warnings, "returncode": o.returncode,
            "status": "ok" if o.ok else "failed",
            **{k: prov[k] for k in ("gpu", "git_sha", "timestamp", "command")}}
