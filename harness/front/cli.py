"""The ``harness`` command line: thin typer commands over the library.

Each command parses its options, calls one library function (which returns data and never
prints), and renders what came back (:mod:`harness.front.render`). A
:class:`harness.errors.HarnessError` becomes one line on stderr and the error's exit status.

The module runs past 300 lines only by typer's option declarations (``bench`` alone has
twenty options, each with its help text): every command's body is a few lines.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

import harness
from harness.cluster import bench as cluster_bench
from harness.cluster import connect as clusters
from harness.cluster import validate as cluster_validate
from harness.contract import registry
from harness.engine import bench as benches
from harness.engine import calibrate as calibration
from harness.engine import kernels, merge, pipeline, profile, sanitize, sass, targets, validate
from harness.errors import BadInput, CheckFailed, HarnessError, ValidationFailed
from harness.front import render, signals, terminal
from harness.results import best, compare, fit, models, report
from harness.tools import where

app = typer.Typer(add_completion=False, no_args_is_help=True, cls=terminal.OneLineErrors,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Benchmark harness for spike-stream conversion kernels (PyCUDA).")
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)
for _c in (out, err):
    # Logs and CI: wide enough that tables are not truncated, unless COLUMNS says how wide.
    if not _c.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        _c.width = 160

F = TypeVar("F", bound=Callable[..., Any])


def given_path(text: str) -> Path:
    """A path option's or argument's value; an empty one is refused, where ``Path("")``
    would quietly be the current folder."""
    if not text.strip():
        raise typer.BadParameter("an empty path names no file or folder")
    return Path(text)


Stages = Annotated[list[str] | None, typer.Argument(help="Stages (default: all).")]
DeviceOpt = Annotated[int, typer.Option("--device", min=0, help="CUDA device index.")]
Mode = Annotated[str | None, typer.Option(help="Encoding mode, where a stage has one.")]
K = Annotated[float | None, typer.Option("--k", help="Threshold divisor k.")]
GroupSize = Annotated[int | None, typer.Option(help="Weight group size G.")]
#: One build's ``-D`` values, as ``bench --define`` compiles them (profile, sass, sanitize).
BuildDefine = Annotated[list[str] | None, typer.Option(
    "--define", help="NAME=V: the build with this -D value, as bench --define compiles it "
                     "(repeat for more macros; one value each).")]
# The evidence a verdict needs (compare, best).
Preset = Annotated[str, typer.Option(help="Evidence a verdict needs: default, strict, "
                                     "permissive (nvbench-compare-robust's).")]
Threshold = Annotated[float, typer.Option(min=0.0, help="Smallest change that counts, %.")]
Z = Annotated[float | None, typer.Option(min=0.0, help="Standard errors on each side of a "
                                         "median (default: the preset's).")]
ClusterOpt = Annotated[str | None, typer.Option(
    "--cluster", help="Run on a Dask cluster (the cluster extra): local (every GPU of this "
    "machine, a worker each), a running scheduler's tcp://HOST:PORT, or slurm.")]
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", min=1, help="--cluster local: workers (default one per GPU; without a GPU, "
    "2 on the CPU); slurm: jobs (default 1).")]
RetriesOpt = Annotated[int, typer.Option(
    "--retries", min=0, help="--cluster: times a point whose worker died is handed out "
    "again before it is a failed row.")]
SlurmOpt = Annotated[list[str] | None, typer.Option(
    "--slurm", help="--cluster slurm: KEY=VALUE, KEY one of queue, account, walltime, "
    "memory, gres, interface, python (repeat).")]


def _cluster(where: str | None, workers: int | None, retries: int, slurm: list[str] | None,
             device: int) -> clusters.ClusterSpec | None:
    """The cluster asked for (None: none); BadInput for cluster options without it."""
    if where is None:
        if workers is not None or slurm:
            raise BadInput("--workers and --slurm set up a cluster: give --cluster too")
        return None
    if device != 0:
        raise BadInput("--device picks one GPU; --cluster runs on every GPU of the cluster")
    return clusters.spec(where, workers, retries, slurm or [])


def cli_errors(fn: F) -> F:
    """Print library errors as one line (plus any detail) and exit with their status; an
    interruption (Ctrl-C, or SIGTERM, handled alike) is one line and exit 130 or 143."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with signals.sigterm_interrupts():
            try:
                return fn(*args, **kwargs)
            except HarnessError as exc:
                _error(exc)
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt as exc:
                err.print(f"interrupted ({signals.name(exc)}): stopped; every file written "
                          "so far is whole", markup=False)
                raise typer.Exit(signals.exit_code(exc)) from None

    return wrapper  # type: ignore[return-value]


def _notes(lines: list[str]) -> None:
    """Warnings the library returned (a torn last row cut from a file, say)."""
    for line in lines:
        err.print(f"[yellow]warning:[/] {escape(line)}", soft_wrap=True)


def _error(exc: HarnessError) -> None:
    err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
    if exc.detail:
        err.print(exc.detail, markup=False, soft_wrap=True)


def _registry() -> registry.Registry:
    """The plugins found; each one that failed to load is a warning line."""
    reg = registry.discover()
    for p in reg.problems:
        err.print(f"[yellow]warning:[/] {escape(str(p))}", soft_wrap=True)
    return reg


def _line(text: str) -> None:
    out.print(text, markup=False)


def _version(value: bool) -> None:
    if value:
        _line(f"harness {harness.__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")]
    = False,
    no_external_plugins: Annotated[bool, typer.Option(
        "--no-external-plugins", help="Import only the built-in plugins, none from "
        "$HARNESS_PLUGIN_PATH or installed packages (also HARNESS_NO_EXTERNAL_PLUGINS=1).")]
    = False,
) -> None:
    """Benchmark harness for spike-stream conversion kernels (PyCUDA)."""
    if no_external_plugins:  # for this process and the profiler's and sanitizer's children
        os.environ[registry.NO_EXTERNAL_ENV] = "1"


@app.command("list")
@cli_errors
def list_cmd(verbose: Annotated[bool, typer.Option(
        "--verbose", help="Also each one's description and its variants' and axes' help.")]
        = False) -> None:
    """List the stages and pipelines found (plugins/ and the harness.stages entry points)."""
    reg = registry.discover()
    out.print(render.catalog(reg))
    if verbose:
        _line(reg.describe())
    for p in reg.problems:
        err.print(f"[red]broken:[/] {escape(str(p))}", soft_wrap=True)
    if reg.problems:
        raise typer.Exit(1)


@app.command()
@cli_errors
def check(stages: Stages = None,
          arch: Annotated[str, typer.Option(help="nvcc target.")] = "sm_90",
          no_cache: Annotated[bool, typer.Option(
              "--no-cache", help="Compile every variant, even one already checked at its "
              "kernel hash by this nvcc (the cache: $XDG_CACHE_HOME/spike-harness).")] = False,
          ) -> None:
    """Compile every kernel variant with nvcc (no GPU needed) and print its resources."""
    run = kernels.check_run(_registry(), stages, arch,
                            None if no_cache else kernels.cache_dir())
    compiled: list[kernels.Compiled] = []
    with render.progress(err) as prog:
        task = prog.add_task("check", total=run.total)
        for c in run.results:
            compiled.append(c)
            prog.update(task, advance=1, description=escape(f"{c.stage} [{c.variant}]"))
    for c in compiled:
        if c.error is not None:
            _error(c.error)
    out.print(render.resources(compiled))
    if hits := sum(c.cached for c in compiled):
        err.print(f"{hits} of {len(compiled)} variant(s) from the cache, unchanged since "
                  "nvcc last checked them (--no-cache compiles them all)", markup=False)
    if any(c.error is not None for c in compiled):
        raise typer.Exit(1)


@app.command("validate")
@cli_errors
def validate_cmd(
    stages: Stages = None,
    variant: Annotated[str, typer.Option(help="Variant name, or 'all'.")] = "all",
    family: Annotated[list[str] | None, typer.Option(help="Input family (repeat).")] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Fresh draws per case.")] = 3,
    seed: Annotated[int, typer.Option(min=0, help="Base random seed.")] = 0,
    record: Annotated[bool, typer.Option(help="Append the results to the ledger.")] = False,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    device: DeviceOpt = 0,
    cluster: ClusterOpt = None,
    workers: WorkersOpt = None,
    retries: RetriesOpt = 2,
    slurm: SlurmOpt = None,
) -> None:
    """Validate kernels (and pipelines) on the GPU against their NumPy references.

    --mode picks the matching variants; --k and --group-size replace those axes in every
    validation case of the stages that have them."""
    spec = _cluster(cluster, workers, retries, slurm, device)
    kw: dict[str, Any] = dict(
        variant=variant, families=family, seeds=seeds, seed=seed, record=record,
        options=targets.options(mode=mode, k=k, group_size=group_size))
    rep = cluster_validate.validate_targets(_registry(), stages, cluster=spec, **kw) if spec \
        else validate.validate_targets(_registry(), stages, device=device, **kw)
    out.print(render.validation(rep.summaries))
    for c in rep.failures[:10]:
        err.print(c.describe(), markup=False, soft_wrap=True)
    if len(rep.failures) > 10:
        err.print(f"... and {len(rep.failures) - 10} more failed cases", markup=False)
    if rep.recorded is not None:
        _notes([rep.repaired] if rep.repaired else [])
        _line(f"recorded {len(rep.summaries)} rows in {rep.recorded}")
    if rep.failure:
        raise ValidationFailed(rep.failure)


@app.command("bench")
@cli_errors
def bench_cmd(
    stages: Stages = None,
    sweep: Annotated[list[str] | None, typer.Option(
        help="AXIS=V1,V2 or AXIS=LO..HI (powers of two); repeat for more axes.")] = None,
    variant: Annotated[list[str] | None, typer.Option(
        help="Variant (repeat), or 'all'; default: each stage's default, every variant of a "
             "pipeline.")] = None,
    define: Annotated[list[str] | None, typer.Option(
        help="NAME=V1,V2: compile each variant once per value of the kernel's -D NAME (a "
             "tuning sweep; repeat for more names; rows name it, default[LANES=4]).")] = None,
    against: Annotated[str | None, typer.Option(
        help="A git revision, or a folder holding another revision's kernels/ tree: each "
             "variant is also built from it and timed beside the current build in this "
             "process (rows name it, default@REV); every entry point must take the same "
             "parameters in both.")] = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "normal",
    backend: Annotated[str, typer.Option(help="pycuda, numpy, or auto.")] = "auto",
    peers: Annotated[str, typer.Option(
        help="PyTorch peers timed beside ours: none, all, or names among torch, "
             "torch_compile and the peers a stage names (harness list --verbose).")] = "none",
    hot: Annotated[bool, typer.Option(help="Skip the L2 flush before each sample.")] = False,
    graph: Annotated[bool, typer.Option(
        help="Capture each point's launches once as a CUDA graph; time its replay.")] = False,
    budget: Annotated[float, typer.Option(min=0.01, help="Seconds of sampling per point.")]
    = 2.0,
    verify: Annotated[bool, typer.Option(help="Check each point against the reference.")]
    = True,
    repeats: Annotated[int, typer.Option(
        min=1, help="Measure each point this many times, its variants, builds and peers in "
                    "a rotated order each round; a row is its median repeat, its noise at "
                    "least the repeats' standard error, its reason every repeat's time.")]
    = 1,
    seed: Annotated[int, typer.Option(min=0, help="Random seed of the inputs.")] = 0,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", parser=given_path,
        help="Folder for <stage>.csv (default statistics/<gpu>/).")] = None,
    append: Annotated[bool, typer.Option(help="Append to existing CSVs.")] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace existing CSVs (else an existing one is an error).")]
    = False,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Measure only the points this command has not measured yet at "
                         "this commit and source (a point whose every row, builds and "
                         "peers, is in the --out files and ok); appends.")] = False,
    device: DeviceOpt = 0,
    cluster: ClusterOpt = None,
    workers: WorkersOpt = None,
    retries: RetriesOpt = 2,
    slurm: SlurmOpt = None,
) -> None:
    """Time stages (or a named pipeline) over a sweep; one CSV row per point, written at once.
    """
    spec = _cluster(cluster, workers, retries, slurm, device)
    kw: dict[str, Any] = dict(
        sweep=sweep or [], variants=variant, defines=define or [],
        family=family, backend=backend, peers=peers, hot=hot, graph=graph, budget=budget,
        verify=verify, seed=seed, options=targets.options(mode=mode, k=k,
                                                          group_size=group_size),
        out_dir=out_dir, append=append, overwrite=overwrite, repeats=repeats,
        against=against, resume=resume)
    run = cluster_bench.bench(_registry(), stages, cluster=spec, **kw) if spec \
        else benches.bench(_registry(), stages, device=device, **kw)
    _notes(run.repaired)
    if getattr(run, "resumed", 0):
        _line(f"resumed: {run.resumed} point(s) measured already by this command at this "
              "commit and source, left as they are")
    if run.note:
        err.print(f"[yellow]{escape(run.note)}" + ("" if run.on_gpu else
                  ": timing the NumPy references on the CPU instead (backend=numpy, no GPU "
                  "numbers).") + "[/]", soft_wrap=True)
    _show_sweep(run)


def _show_sweep(run: benches.BenchRun) -> None:
    """Draw the sweep's progress as its rows land, then its tables (also when it is
    interrupted: exit 130, or 143 for SIGTERM, every finished row kept); exit 1 when a row
    failed."""
    got: list[benches.Measured] = []
    try:
        with render.progress(err) as prog:
            task = prog.add_task("bench", total=run.total)
            for m in run.rows:
                got.append(m)
                prog.update(task, advance=1, description=render.where(m.row))
    except KeyboardInterrupt as exc:
        kept = run.written()
        err.print(f"interrupted: {len(got) if kept is None else kept} finished row(s) kept "
                  f"in {run.out_dir}/", markup=False)
        raise typer.Exit(signals.exit_code(exc)) from None
    finally:
        run.close()
        staged = [m.row for m in got if not m.job.is_pipeline]
        if staged or not got:
            out.print(render.stage_rows(staged, out.width))
        if len(staged) < len(got):
            out.print(render.pipeline_rows([m.row for m in got if m.job.is_pipeline],
                                           out.width))
    _line(f"wrote {len(got)} row(s) to {run.out_dir}/")
    if any(m.row["status"] == "failed" for m in got):
        raise typer.Exit(1)


@app.command("run")
@cli_errors
def run_cmd(
    name: Annotated[str, typer.Argument(help="Pipeline.")] = "spike_quant_gemm",
    repeats: Annotated[int, typer.Option(min=1, help="Timed repetitions.")] = 10,
    batch: Annotated[int | None, typer.Option(
        min=1, help="Rows B (default: the pipeline's, 1024).")] = None,
    in_f: Annotated[int | None, typer.Option(
        min=1, help="Columns F (default: the pipeline's, 3584).")] = None,
    out_f: Annotated[int | None, typer.Option(
        min=1, help="Weight rows O (default: the pipeline's, 3584).")] = None,
    mode: Mode = None,
    k: K = None,
    group_size: GroupSize = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "ramp",
    with_gemm: Annotated[bool, typer.Option(help="Also decode, reverse and GEMM.")] = False,
    hot: Annotated[bool, typer.Option(help="Skip the L2 flush before each repetition.")]
    = False,
    device: DeviceOpt = 0,
) -> None:
    """Run a pipeline and print the seed's timing report (outputs are checked first).

    As the seed's `./spike_quant_gemm REPEATS BATCH` does."""
    opts = targets.options(mode=mode, k=k, group_size=group_size, batch=batch, in_f=in_f,
                           out_f=out_f, with_gemm=1 if with_gemm else None)
    rep = pipeline.run(_registry(), name, opts, family, repeats, hot, device)
    _line(f"outputs checked against the chained references: ok ({rep.checks} checks)")
    for line in rep.lines:
        _line(line)


@app.command()
@cli_errors
def calibrate(
    device: DeviceOpt = 0,
    nbytes: Annotated[int, typer.Option("--bytes", min=1 << 20,
                                        help="Bytes copied (each way), written, or read (mix).")]
    = calibration.COPY_BYTES,
    kind: Annotated[str, typer.Option(
        "--kind", help="copy (device to device, read + write counted), write (a fill, "
                       "bytes written counted) or mix (--bytes read, each written --writes "
                       "times, read + write counted).")] = "copy",
    writes: Annotated[int | None, typer.Option(
        min=1, help="--kind mix: writes a byte read (default 6: activation_fused's pass 2, "
                    "q8 in, six int8 planes out).")] = None,
) -> None:
    """Measure the device's memory bandwidth and store it: the copy of the default size is
    the peak that % of peak refers to; any other size or kind is stored beside it."""
    c = calibration.calibrate(device, nbytes, kind, writes)
    r = c.record
    role = "the peak" if c.is_peak else "beside the peak, which it does not replace"
    counted = calibration.KINDS[kind].counted
    if "writes" in r:
        counted += f", each byte read written {r['writes']} times"
    _line(f"{r['gpu']}: {kind} bandwidth {r['gbps']:.0f} GB/s ({counted}; median "
          f"{r['median_us']:.1f} µs ± {r['noise_pct']:.2f}%, {r['samples']} samples) -> "
          f"{c.path} ({role})")


@app.command("where")
@cli_errors
def where_cmd(device: DeviceOpt = 0) -> None:
    """Print the GPU's results folder, statistics/<gpu>/ (where bench writes by default)."""
    out.print(str(where.gpu_dir(device)), markup=False, soft_wrap=True)


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
    out_dir: Annotated[Path | None, typer.Option("--out", parser=given_path,
                                                 help="Folder for <stage>.csv.")]
    = None,
    device: DeviceOpt = 0,
    define: BuildDefine = None,
) -> None:
    """Re-run one stage launch under Nsight Compute (ncu) and print and store its metrics."""
    prof = profile.profile(
        _registry(), stage, variant=variant, family=family,
        metrics=metrics.split(",") if metrics else None, section_set=section_set,
        options=targets.options(mode=mode, k=k, group_size=group_size, batch=batch),
        sweep=sweep or [], device=device, out_dir=out_dir, defines=define or [])
    _notes([prof.repaired] if prof.repaired else [])
    _notes(list(prof.notes))
    if prof.unstored:
        _notes([f"{prof.path} has an earlier harness's columns: "
                f"{', '.join(prof.unstored)} printed, not stored"])
    out.print(render.profile(prof.rows))
    _line(f"wrote {len(prof.rows)} row(s) to {prof.path}")


@app.command("sass")
@cli_errors
def sass_cmd(
    stage: Annotated[str, typer.Argument(help="Stage whose build to read.")],
    variant: Annotated[str | None, typer.Option(help="Variant (default: the first).")] = None,
    define: BuildDefine = None,
    arch: Annotated[str, typer.Option(help="The device's arch (sm_90).")] = "sm_90",
    listing: Annotated[Path | None, typer.Option(
        parser=given_path, help="Write the whole cuobjdump -sass listing to this file.")] = None,
) -> None:
    """Compile one build (no GPU) and count its entry points' machine instructions
    (cuobjdump -sass): what it runs, MMAs included."""
    if listing is not None and not (listing.parent.is_dir()
                                    and os.access(listing.parent, os.W_OK)):
        raise BadInput(f"cannot write --listing {listing}: its folder is not a writable folder")
    if listing is not None and (listing.exists() or listing.is_symlink()):
        raise BadInput(f"--listing {listing} exists: a listing is written to a new file, "
                       "never over one (a results file, say)")
    rep = sass.sass(_registry(), stage, variant=variant, defines=define or [], arch=arch)
    if listing is not None:
        try:
            listing.write_text(rep.listing)
        except OSError as exc:
            raise BadInput(f"cannot write --listing {listing}: {exc.strerror}") from None
    _notes(list(rep.notes))
    out.print(render.sass(rep))
    _line(f"{rep.stage} {rep.variant} for {rep.arch}"
          + (f"; the listing is in {listing}" if listing is not None else ""))


@app.command("sanitize")
@cli_errors
def sanitize_cmd(
    stages: Stages = None,
    tool: Annotated[list[str] | None, typer.Option(
        help="memcheck, racecheck, initcheck, synccheck (repeat; default all).")] = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "normal",
    out_file: Annotated[Path | None, typer.Option(
        "--out", parser=given_path,
        help="Summary CSV (default statistics/<gpu>/sanitizer.csv).")] = None,
    append: Annotated[bool, typer.Option(help="Append to an existing summary.")] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing summary (else it is an error).")] = False,
    device: DeviceOpt = 0,
    variant: Annotated[str | None, typer.Option(
        help="One variant of the one stage named (default: every variant).")] = None,
    define: BuildDefine = None,
) -> None:
    """Run compute-sanitizer over every stage and variant at batch 1, 3 and 9, in_f 1, 5, 130
    and 3584, and at the stage's own sanitize_shapes; exit 1 on any error."""
    run = sanitize.sanitize(_registry(), stages, tools=tool, family=family, device=device,
                            out_file=out_file, append=append, overwrite=overwrite,
                            variant=variant, defines=define or [])
    _notes([run.repaired] if run.repaired else [])
    outcomes = []
    with render.progress(err) as prog:
        task = prog.add_task("sanitize", total=run.total)
        for o in run.outcomes:
            outcomes.append(o)
            prog.update(task, advance=1, description=f"{o.stage} [{o.variant}] {o.tool}")
    out.print(render.sanitizer(outcomes))
    for o in outcomes:
        if not o.ok:
            err.print(f"{o.stage} [{o.variant}] {o.tool}:\n{o.excerpt}", markup=False)
    _line(f"wrote {run.path}")
    if any(not o.ok for o in outcomes):
        raise typer.Exit(1)


@app.command("report")
@cli_errors
def report_cmd(
    folders: Annotated[list[Path], typer.Argument(
        parser=given_path,
        help="A results folder, e.g. statistics/h200; several: the GPU models side by "
        "side.")],
    batch: Annotated[list[int] | None, typer.Option(
        min=1, help="Batch of the table's rows (repeat for more; default 16384).")] = None,
    out_f: Annotated[int | None, typer.Option(
        min=0, help="out_f of the weight stages' rows (default 18944; 0: every row).")] = None,
    stage: Annotated[list[str] | None, typer.Option(
        help="Only these stages' (or pipelines') rows (repeat).")] = None,
    readme: Annotated[Path | None, typer.Option(
        parser=given_path, help="Write the table into this README's block.")] = None,
    block: Annotated[str, typer.Option(help="The README block: <!-- BLOCK:begin -->.")]
    = "results",
    out_dir: Annotated[Path | None, typer.Option(
        "--out", parser=given_path,
        help="Folder for the plots and the table (results.md); default: the plots "
        "under <folder>/plots/, the table only printed.")] = None,
) -> None:
    """Draw the folder's plots (PNG, under <folder>/plots/) and print its results table;
    given several folders (one a GPU model), print their medians side by side."""
    if stage:
        reg = _registry()
        report.check_stages(folders, stage, {*reg.stages, *reg.pipelines})
    if len(folders) > 1:
        if readme is not None or out_dir is not None:
            raise BadInput("--readme and --out take one folder; several are compared only")
        _line(models.side_by_side(folders, batch or report.DEFAULT_BATCHES, stage))
        return
    rep = report.build(folders[0], batch, out_f, stage, readme, block, out_dir)
    for p in rep.plots:
        _line(f"wrote {p}")
    _line(rep.text)
    if rep.empty:
        err.print(f"[yellow]warning:[/] {escape(rep.empty)}", soft_wrap=True)
    if rep.table_path is not None:
        _line(f"wrote {rep.table_path}")
    if rep.readme is not None:
        _line(f"updated {rep.readme}")


@app.command("compare")
@cli_errors
def compare_cmd(
    old: Annotated[Path, typer.Argument(parser=given_path, help="Baseline CSV.")],
    new: Annotated[Path, typer.Argument(parser=given_path,
                                        help="New CSV, of the same kind (stage or pipeline).")],
    preset: Preset = "default",
    threshold: Threshold = 2.0,
    z: Z = None,
    explain: Annotated[bool, typer.Option("--explain", help="Say why each row got its "
                                          "verdict.")] = False,
    ignore: Annotated[list[str] | None, typer.Option(help="A key column to match rows "
                                                     "without (repeat): stage, variant, "
                                                     "params compare kernels.")] = None,
) -> None:
    """Compare two result CSVs row by row: exit 1 when a row is slower or no longer ok (a
    CI gate), 2 when the files cannot be compared."""
    rep = compare.run(old, new, preset, threshold, z, tuple(ignore or ()))
    out.print(render.verdicts(rep, explain))
    _line(render.counts(rep))
    if rep.exit_code:
        raise typer.Exit(rep.exit_code)


@app.command("best")
@cli_errors
def best_cmd(
    csv: Annotated[Path, typer.Argument(parser=given_path,
                                        help="A stage CSV with several builds a point (a "
                                        "tuning sweep's, say).")],
    preset: Preset = "default",
    threshold: Threshold = 2.0,
    z: Z = None,
    explain: Annotated[bool, typer.Option("--explain", help="Say why each build got its "
                                          "verdict.")] = False,
) -> None:
    """The fastest build of each point one command measured, and whether its rows show it
    (each other build set against it by compare's rule)."""
    points = best.run(csv, preset, threshold, z)
    out.print(render.best_builds(points, explain))
    for line in best.rank_text(points):
        _line(line)


@app.command("fit")
@cli_errors
def fit_cmd(
    csv: Annotated[Path, typer.Argument(parser=given_path,
                                        help="A stage CSV with a sweep of one axis.")],
    axis: Annotated[str, typer.Option(help="The swept key column (in_f, batch, ...).")],
) -> None:
    """Each build's time along one axis as a fixed part plus a part in proportion to the
    axis (least squares over the rows one command measured), and the fixed part's share."""
    lines = fit.run(csv, axis)
    out.print(render.fit_lines(lines, axis))
    for line in fit.summary(lines, axis):
        _line(line)


@app.command("merge")
@cli_errors
def merge_cmd(
    csvs: Annotated[list[Path], typer.Argument(parser=given_path,
                                               help="One bench command's CSVs, one a "
                                                    "process (each run with its own --out).")],
    out: Annotated[Path, typer.Option(parser=given_path, help="The merged CSV.")],
    overwrite: Annotated[bool, typer.Option(help="Replace an existing file.")] = False,
) -> None:
    """Combine one bench command's rows from several processes, per point: the median
    process's row, its noise widened to the standard error across the processes."""
    m = merge.run(csvs, out, overwrite)
    _line(f"merged {m.points} point(s) from {len(csvs)} CSVs into {m.path} "
          f"({min(m.processes)}-{max(m.processes)} processes a point)")


@app.command("ledger")
@cli_errors
def ledger_cmd(
    check_: Annotated[bool, typer.Option("--check", help="Fail when a kernel's current "
                                         "source has no passing GPU validation.")] = False,
    path: Annotated[Path | None, typer.Option(parser=given_path, help="Ledger CSV.")] = None,
    rows: Annotated[Path | None, typer.Option(
        "--rows", parser=given_path,
        help="Also list this results folder's timing rows measured at an "
                       "earlier kernel source.")] = None,
) -> None:
    """Show, for every kernel variant at its current source, its GPU validation record."""
    reg = _registry()
    rep = kernels.ledger_report(reg, path)
    older = kernels.older_rows(reg, rows) if rows is not None else []
    for s in rep.statuses:
        out.print(("[green]ok[/]      " if s.ok else "[red]MISSING[/] ") + escape(s.describe()),
                  soft_wrap=True)
    for o in older:
        out.print("[yellow]older[/]   " + escape(o.describe()), soft_wrap=True)
    if check_ and rep.failure:
        raise CheckFailed(rep.failure)


def main() -> None:
    """Entry point of the ``harness`` console script."""
    app()


if __name__ == "__main__":
    main()
