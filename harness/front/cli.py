"""The ``harness`` command line: thin typer commands over the library.

Every command turns a :class:`harness.errors.HarnessError` into one line on stderr and the
error's exit status; nothing below this module prints or exits.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness import paths
from harness.contract import kernel as compiler
from harness.contract import registry, timing
from harness.engine import bench as _bench
from harness.engine import calibrate as _cal
from harness.engine import pipeline, session, validate
from harness.errors import CompileError, HarnessError, ValidationFailed
from harness.results import compare, ledger, report
from harness.results import provenance as meta
from harness.results import rows as results
from harness.spikes import families
from harness.tools import sanitize

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Benchmark harness for spike-stream conversion kernels (PyCUDA).")
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)
for _c in (out, err):
    if not _c.is_terminal:  # logs and CI: wide enough that tables are not truncated
        _c.width = 160

F = TypeVar("F", bound=Callable[..., Any])

Stages = Annotated[list[str] | None, typer.Argument(help="Stages (default: all).")]
DeviceOpt = Annotated[int, typer.Option("--device", help="CUDA device index.")]


def cli_errors(fn: F) -> F:
    """Print library errors as one line (plus any detail) and exit with their status."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HarnessError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            if exc.detail:
                err.print(exc.detail, markup=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None

    return wrapper  # type: ignore[return-value]


def _progress() -> Progress:
    """The progress bar of long runs (on stderr, so stdout keeps only the results)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err)


def _registry() -> registry.Registry:
    reg = registry.discover()
    for p in reg.problems:
        err.print(f"[yellow]warning:[/] {escape(str(p))}", soft_wrap=True)
    return reg


@app.command("list")
@cli_errors
def list_cmd() -> None:
    """List the stages and pipelines found (plugins/ and the harness.stages entry points)."""
    reg = registry.discover()
    t = Table("name", "kind", "variants", "axes (defaults)", "kernel / steps")
    for name, st in sorted(reg.stages.items()):
        t.add_row(name, "stage", ", ".join(v.name for v in st.variants), _axes(st), st.kernel)
    for name, pipe in sorted(reg.pipelines.items()):
        t.add_row(name, "pipeline", ", ".join(v.name for v in pipe.variants), _axes(pipe),
                  " -> ".join(pipe.steps))
    out.print(t)
    for p in reg.problems:
        err.print(f"[red]broken:[/] {escape(str(p))}", soft_wrap=True)
    if reg.problems:
        raise typer.Exit(1)


def _axes(st: Any) -> str:
    return ", ".join(f"{a.name}={a.default}" for a in st.axes)


@app.command()
@cli_errors
def check(stages: Stages = None,
          arch: Annotated[str, typer.Option(help="nvcc target.")] = "sm_90") -> None:
    """Compile every kernel variant with nvcc (no GPU needed) and print its resources."""
    reg = _registry()
    t = Table("stage", "variant", "function", "regs", "smem B", "stack B", "spill st/ld B")
    failed = 0
    for st in reg.select(stages):
        for v in st.variants:
            try:
                res = compiler.nvcc_report(st, v, arch)
            except CompileError as exc:
                failed += 1
                err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
                err.print(exc.detail, markup=False, soft_wrap=True)
                continue
            for r in res:
                t.add_row(st.name, v.name, r.function, str(r.registers), str(r.smem_bytes),
                          str(r.stack_bytes), f"{r.spill_stores}/{r.spill_loads}")
    out.print(t)
    if failed:
        raise typer.Exit(1)


Mode = Annotated[str | None, typer.Option(help="Encoding mode, where a stage has one.")]
K = Annotated[float | None, typer.Option("--k", help="Threshold divisor k.")]
GroupSize = Annotated[int | None, typer.Option(help="Weight group size G.")]


@app.command("validate")
@cli_errors
def validate_cmd(
    stages: Stages = None,
    variant: Annotated[str, typer.Option(help="Variant name, or 'all'.")] = "all",
    family: Annotated[list[str] | None, typer.Option(help="Input family (repeat).")] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Fresh draws per case.")] = 3,
    seed: Annotated[int, typer.Option(help="Base random seed.")] = 0,
    record: Annotated[bool, typer.Option(help="Append the results to the ledger.")] = False,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    device: DeviceOpt = 0,
) -> None:
    """Validate kernels (and pipelines) on the GPU against their NumPy references.

    --mode picks the matching variants; --k and --group-size replace those axes in every
    validation case of the stages that have them."""
    for fam in family or []:
        families.check_family(fam)
    reg = _registry()
    tg = session.targets(reg, stages, with_pipelines=True)
    runner = session.open_gpu(device)
    t = Table("stage", "variant", "kernel hash", "cases", "passed", "worst error")
    rows, failures = [], []
    opts = session.options(mode=mode, k=k, group_size=group_size)
    for summ in session.validation(reg, tg, runner, variant, family, seeds, seed, opts):
        t.add_row(summ.name, summ.variant, summ.kernel_hash, str(len(summ.cases)),
                  str(summ.passed), escape(validate.worst_errors(summ.cases)))
        rows.append(summ.ledger_row(runner.device.info, seeds))
        failures += [c for c in summ.cases if not c.ok]
    out.print(t)
    for r in failures[:10]:
        err.print(r.describe(), markup=False, soft_wrap=True)
    if len(failures) > 10:
        err.print(f"... and {len(failures) - 10} more failed cases", markup=False)
    if record:
        out.print(f"recorded {len(rows)} rows in {ledger.append(rows)}", markup=False)
    if failures:
        raise ValidationFailed(f"{len(failures)} validation case(s) failed")


@app.command("bench")
@cli_errors
def bench_cmd(
    stages: Stages = None,
    sweep: Annotated[list[str] | None, typer.Option(
        help="AXIS=V1,V2 or AXIS=LO..HI (powers of two); repeat for more axes.")] = None,
    variant: Annotated[list[str] | None, typer.Option(
        help="Variant (repeat), or 'all'; default: each stage's default.")] = None,
    define: Annotated[list[str] | None, typer.Option(
        help="NAME=V1,V2: compile each variant once per value of the kernel's -D NAME (a "
             "tuning sweep; repeat for more names; rows name it, default[UNROLL=4]).")] = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "normal",
    backend: Annotated[str, typer.Option(help="pycuda, numpy, or auto.")] = "auto",
    peers: Annotated[str, typer.Option(
        help="PyTorch peers timed beside ours: none, torch, torch_compile, all.")] = "none",
    hot: Annotated[bool, typer.Option(help="Skip the L2 flush before each sample.")] = False,
    graph: Annotated[bool, typer.Option(
        help="Capture each point's launches once as a CUDA graph; time its replay.")] = False,
    budget: Annotated[float, typer.Option(min=0.01, help="Seconds of sampling per point.")]
    = 2.0,
    verify: Annotated[bool, typer.Option(help="Check each point against the reference.")]
    = True,
    seed: Annotated[int, typer.Option(help="Random seed of the inputs.")] = 0,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder for <stage>.csv (default statistics/<gpu>/).")] = None,
    append: Annotated[bool, typer.Option(help="Append to existing CSVs.")] = False,
    device: DeviceOpt = 0,
) -> None:
    """Time stages (or a named pipeline) over a sweep; one CSV row per point, written at once.
    """
    families.check_family(family)
    reg = _registry()
    tg = session.targets(reg, stages, with_pipelines=False)
    opts = session.options(mode=mode, k=k, group_size=group_size)
    ses = session.open_bench(backend, device)
    peer_runners = session.open_peers(ses, peers)
    jobs = session.bench_jobs(ses, tg, sweep or [], variant, opts, define or [])
    pipes = [(p, session.pipeline_points(p, sweep or [], opts)) for p in tg.pipelines]
    cfg = session.bench_config(family, seed, budget, hot, verify, ses.on_gpu, graph)
    dest = session.results_dir(out_dir, ses.slug)
    rows: list[dict[str, Any]] = []
    streams = [session.bench_pipeline(ses, reg, p, pts, family, seed, budget, hot, dest,
                                      append) for p, pts in pipes]
    if jobs:
        streams.insert(0, _bench.run(jobs, ses.runner, cfg, ses.meta, dest, append,
                                     peer_runners))
    if ses.note:
        err.print(f"[yellow]{escape(ses.note)}" + ("" if ses.on_gpu else
                  ": timing the NumPy references on the CPU instead (backend=numpy, no GPU "
                  "numbers).") + "[/]", soft_wrap=True)
    total = sum(1 + len(peer_runners) * (j.stage.torch_impl is not None) for j in jobs) + \
        sum(len(pts) for _, pts in pipes)
    try:
        with _progress() as prog:
            task = prog.add_task("bench", total=total)
            for stream in streams:
                for row in stream:
                    rows.append(row)
                    where = " ".join(f"{a}={row[a]}" for a in ("batch", "out_f") if row[a] != "")
                    prog.update(task, advance=1, description=f"{row['stage']} {where}")
    except KeyboardInterrupt:
        err.print(f"interrupted: {len(rows)} finished row(s) kept in {dest}/", markup=False)
        raise typer.Exit(130) from None
    finally:
        staged = [r for r in rows if "total_us" not in r and "planes" not in r]
        if staged or not rows:
            out.print(_summary(staged))
        if len(staged) < len(rows):
            out.print(_pipeline_summary([r for r in rows if r not in staged]))
    out.print(f"wrote {len(rows)} row(s) to {dest}/", markup=False)
    if any(r["status"] == "failed" for r in rows):
        raise typer.Exit(1)


def _summary(rows: list[dict[str, Any]]) -> Table:
    t = Table("stage", "backend", "variant", "batch", "in_f", "out_f", "median µs", "± noise",
              "GB/s", "% peak", "vs best peer", "status")
    for r in rows:
        ok = r["status"] == "ok"
        t.add_row(str(r["stage"]), str(r["backend"]), str(r["variant"]), str(r["batch"]),
                  str(r["in_f"]), str(r["out_f"]), f"{r['median_us']:.2f}" if ok else "-",
                  f"{r['noise_pct']:.2f}%" if ok else "-",
                  f"{r['gbps']:.0f}" if ok else "-",
                  f"{r['pct_peak']:.1f}" if ok and r["pct_peak"] != "" else "-",
                  f"{r['speedup_vs_best_peer']:.2f}x" if r.get("speedup_vs_best_peer")
                  else "-",
                  r["status"] if ok else escape(f"{r['status']}: {str(r['reason'])[:60]}"))
    return t


def _pipeline_summary(rows: list[dict[str, Any]]) -> Table:
    t = Table("pipeline", "batch", "out_f", "T", "total µs", "dyn µs", "enc kern µs",
              "enc total µs", "wq µs", "enc %", "wq %", "status")

    def f(r: dict[str, Any], k: str) -> str:
        v = r.get(k, "")
        return f"{v:.1f}" if isinstance(v, float) else "-"

    for r in rows:
        t.add_row(str(r["stage"]), str(r["batch"]), str(r["out_f"]), str(r.get("planes", "")),
                  f"{f(r, 'total_us')} ±{f(r, 'total_noise_pct')}%", f(r, "dynamic_spikes_us"),
                  f(r, "encoding_kernels_us"), f(r, "encoding_total_us"),
                  f(r, "weight_quant_us"), f(r, "encoding_share_pct"),
                  f(r, "weight_quant_share_pct"),
                  r["status"] if r["status"] == "ok" else escape(f"{r['status']}: "
                                                                 f"{str(r['reason'])[:50]}"))
    return t


@app.command("run")
@cli_errors
def run_cmd(
    name: Annotated[str, typer.Argument(help="Pipeline.")] = "spike_quant_gemm",
    repeats: Annotated[int, typer.Option(min=1, help="Timed repetitions.")] = 10,
    batch: Annotated[int, typer.Option(min=1, help="Rows B.")] = 1024,
    in_f: Annotated[int, typer.Option(min=1, help="Columns F.")] = 3584,
    out_f: Annotated[int, typer.Option(min=1, help="Weight rows O.")] = 3584,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "seed",
    with_gemm: Annotated[bool, typer.Option(help="Also decode, reverse and GEMM.")] = False,
    hot: Annotated[bool, typer.Option(help="Skip the L2 flush before each repetition.")]
    = False,
    device: DeviceOpt = 0,
) -> None:
    """Run a pipeline and print the seed's timing report (outputs are checked first).

    As the seed's `./spike_quant_gemm REPEATS BATCH` does."""
    families.check_family(family)
    reg = _registry()
    pipe = reg.pipeline(name)
    opts = session.options(mode=mode, k=k, group_size=group_size, batch=batch, in_f=in_f,
                           out_f=out_f, with_gemm=int(with_gemm))
    point = session.pipeline_points(pipe, [], opts)[0]
    ins = pipe.make_inputs(np.random.default_rng(0), family, point)
    if (bad := validate.nonfinite(ins)) is not None:
        raise HarnessError(bad)
    runner = session.open_gpu(device)
    outs, host, per_rep = runner.pipeline(pipe, reg.stages, ins, point, repeats, not hot, 2)
    checks = pipe.check(ins, point, outs, host)
    bad = [c.describe() for c in checks if not c.ok]
    if bad:
        raise ValidationFailed(f"{name}: output check failed: {bad[0]}")
    out.print(f"outputs checked against the chained references: ok ({len(checks)} checks)",
              markup=False)
    for line in pipeline.report(point, family, pipeline.PipelineTiming(per_rep,
                                                                       host["planes"])):
        out.print(line, markup=False)


@app.command()
@cli_errors
def calibrate(
    device: DeviceOpt = 0,
    nbytes: Annotated[int, typer.Option("--bytes", min=1 << 20, help="Bytes copied.")]
    = _cal.COPY_BYTES,
) -> None:
    """Measure the device-to-device copy bandwidth (read + write) and store it."""
    runner = session.open_gpu(device)
    t, gbps = runner.copy_bandwidth(nbytes, timing.TimingConfig(budget_s=3.0))
    info = runner.device.info
    rec = {"gpu": info.name, "device": info.as_dict(), "bytes_each_way": nbytes,
           "median_us": t.median_us, "p10_us": t.p10_us, "p90_us": t.p90_us,
           "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps,
           "method": "memcpy_dtod_async, L2 flushed, bytes read + written over median",
           "date": meta.now(), "git_sha": meta.git_sha()}
    p = _cal.save(rec, info.slug)
    out.print(f"{info.name}: copy bandwidth {gbps:.0f} GB/s (read + write; median "
              f"{t.median_us:.1f} µs ± {t.noise_pct:.2f}%, {t.samples} samples) -> {p}",
              markup=False)


@app.command("profile")
@cli_errors
def profile_cmd(
    stage: Annotated[str, typer.Argument(help="Stage to profile.")],
    batch: Annotated[int | None, typer.Option(min=1, help="Rows B.")] = None,
    variant: Annotated[str | None, typer.Option(help="Variant (default: the first).")] = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "normal",
    metrics: Annotated[str | None, typer.Option(help="Comma-separated ncu metrics.")] = None,
    section_set: Annotated[str | None, typer.Option("--set", help="ncu set: basic|full.")]
    = None,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    sweep: Annotated[list[str] | None, typer.Option(help="Other axes, AXIS=V.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for <stage>.csv.")]
    = None,
    device: DeviceOpt = 0,
) -> None:
    """Re-run one stage launch under Nsight Compute (ncu) and print and store its metrics."""
    families.check_family(family)
    st = _registry().get(stage)
    opts = session.options(mode=mode, k=k, group_size=group_size, batch=batch)
    v, point = session.profile_point(st, variant, opts, sweep or [])
    dest = out_dir or paths.statistics_dir() / "ncu"
    rows = session.profile(st, v, point, family, metrics.split(",") if metrics else None,
                           section_set, device, dest)
    t = Table("kernel", "duration µs", "DRAM % of peak", "achieved occupancy %",
              "registers/thread", "L2 hit %")
    for r in rows:
        t.add_row(escape(str(r["kernel"])), *(str(r[c]) for c in (
            "duration", "dram_pct_of_peak", "achieved_occupancy_pct", "registers_per_thread",
            "l2_hit_rate_pct")))
    out.print(t)
    out.print(f"wrote {len(rows)} row(s) to {dest}/{st.name}.csv", markup=False)


@app.command("_launch", hidden=True)
@cli_errors
def launch_cmd(
    stage: str,
    variant: Annotated[str, typer.Option()],
    family: Annotated[str, typer.Option()],
    point: Annotated[str, typer.Option(help="A point, or a list of points, as JSON.")],
    warmup: Annotated[int, typer.Option()] = 3,
    device: DeviceOpt = 0,
) -> None:
    """The process ncu and compute-sanitizer watch: warm-up launches, then the one kept."""
    st = _registry().get(stage)
    v = st.variant(variant)
    pts = json.loads(point)
    runner = session.open_gpu(device)
    for p in pts if isinstance(pts, list) else [pts]:
        ins = st.make_inputs(np.random.default_rng(0), family, p)
        runner.launches(st, v, ins, p, warmup + 1)


@app.command("sanitize")
@cli_errors
def sanitize_cmd(
    stages: Stages = None,
    tool: Annotated[list[str] | None, typer.Option(
        help="memcheck, racecheck, initcheck, synccheck (repeat; default all).")] = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "normal",
    out_file: Annotated[Path | None, typer.Option(
        "--out", help="Summary CSV (default statistics/<gpu>/sanitizer.csv).")] = None,
    device: DeviceOpt = 0,
) -> None:
    """Run compute-sanitizer over every stage and variant at batch 1, 3 and 9, in_f 1, 5, 130
    and 3584; exit 1 on any error."""
    families.check_family(family)
    reg = _registry()
    tools = tool or list(sanitize.TOOLS)
    for t in tools:
        if t not in sanitize.TOOLS:
            raise HarnessError(f"unknown sanitizer tool {t!r} (known: "
                               f"{', '.join(sanitize.TOOLS)})")
    sanitize.find()
    jobs = [(st, v, t) for st in reg.select(stages) for v in st.variants for t in tools]
    dest = out_file or session.sanitizer_path(device)
    outcomes = []
    with results.CsvWriter(dest, columns=session.SANITIZER_COLUMNS, require_status=False) as w, \
            _progress() as prog:
        task = prog.add_task("sanitize", total=len(jobs))
        for st, v, t in jobs:
            o = sanitize.run(t, st, v, family, device)
            outcomes.append(o)
            w.write(session.sanitizer_row(o, device))
            prog.update(task, advance=1, description=f"{st.name} [{v.name}] {t}")
    tab = Table("stage", "variant", "tool", "points", "errors", "warnings", "status")
    for o in outcomes:
        tab.add_row(o.stage, o.variant, o.tool, str(o.points), str(o.errors), str(o.warnings),
                    "ok" if o.ok else "FAILED")
    out.print(tab)
    for o in outcomes:
        if not o.ok:
            err.print(f"{o.stage} [{o.variant}] {o.tool}:\n{o.excerpt}", markup=False)
    out.print(f"wrote {dest}", markup=False)
    if any(not o.ok for o in outcomes):
        raise typer.Exit(1)


@app.command("report")
@cli_errors
def report_cmd(
    folder: Annotated[Path, typer.Argument(help="A results folder, e.g. statistics/h200.")],
    batch: Annotated[list[int] | None, typer.Option(
        help="Batch of the table's rows (repeat for more; default 16384).")] = None,
    out_f: Annotated[int | None, typer.Option(
        help="out_f of the weight stages' rows (default 18944; 0: every row).")] = None,
    stage: Annotated[list[str] | None, typer.Option(
        help="Only these stages' (or pipelines') rows (repeat).")] = None,
    readme: Annotated[Path | None, typer.Option(
        help="Write the table into this README's block.")] = None,
    block: Annotated[str, typer.Option(help="The README block: <!-- BLOCK:begin -->.")]
    = "results",
) -> None:
    """Draw the folder's plots (PNG, under <folder>/plots/) and print its results table."""
    for p in report.plots(folder):
        out.print(f"wrote {p}", markup=False)
    text = report.tables(folder, batch or [16384], None if out_f == 0 else out_f or 18944,
                         stage)
    out.print(text, markup=False)
    if readme is not None:
        report.update_readme(readme, text, block)
        out.print(f"updated {readme}", markup=False)


@app.command("compare")
@cli_errors
def compare_cmd(
    old: Annotated[Path, typer.Argument(help="Baseline CSV.")],
    new: Annotated[Path, typer.Argument(help="New CSV.")],
    threshold: Annotated[float, typer.Option(min=0.0, help="Smallest change that counts, %.")]
    = 2.0,
    z: Annotated[float, typer.Option(min=0.0, help="Standard errors a change must exceed.")]
    = 3.0,
) -> None:
    """Compare two result CSVs row by row; exit 1 when any row is slower (a CI gate)."""
    for p in (old, new):
        if not p.is_file():
            raise HarnessError(f"no such results file: {p}")
    verdicts = compare.compare(results.read_rows(old), results.read_rows(new), threshold, z)
    t = Table("stage", "backend", "variant", "batch", "in_f", "out_f", "launch", "old µs",
              "new µs", "change", "± noise", "verdict")

    def f(v: float | None, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    for v in verdicts:
        k = dict(zip(compare.KEY, v.key, strict=True))
        t.add_row(k["stage"], k["backend"], k["variant"], k["batch"], k["in_f"],
                  k["out_f"], k["launch"], f(v.old_us, ".2f"), f(v.new_us, ".2f"),
                  f(v.change_pct, "+.1f") + "%", f(v.sigma_pct, ".1f") + "%", v.verdict)
    out.print(t)
    counts = compare.summary(verdicts)
    out.print(", ".join(f"{n} {k}" for k, n in counts.items()), markup=False)
    if counts["slower"]:
        raise typer.Exit(1)


@app.command("ledger")
@cli_errors
def ledger_cmd(
    check_: Annotated[bool, typer.Option("--check", help="Fail when a kernel's current "
                                         "source has no passing GPU validation.")] = False,
    path: Annotated[Path | None, typer.Option(help="Ledger CSV.")] = None,
) -> None:
    """Show, for every kernel variant at its current source, its GPU validation record."""
    reg = _registry()
    status = ledger.check(reg.select(None), ledger.read(path),
                          [reg.pipelines[n] for n in sorted(reg.pipelines)], reg.stages)
    for s in status:
        out.print(("[green]ok[/]      " if s.ok else "[red]MISSING[/] ") + escape(s.describe()),
                  soft_wrap=True)
    missing = [s for s in status if not s.ok]
    if check_ and missing:
        raise HarnessError(f"{len(missing)} kernel variant(s) without a passing GPU "
                           "validation at their current source")
    if check_ and reg.problems:
        raise HarnessError(f"{len(reg.problems)} plugin(s) failed to load")


def main() -> None:
    """Entry point of the ``harness`` console script."""
    app()


if __name__ == "__main__":
    main()
