"""The commands that time or profile on the GPU (bench, run, calibrate, profile) and those that
prepare a GPU machine's run (where, stamp)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from harness import paths
from harness.cluster import bench as cluster_bench
from harness.engine import bench as benches
from harness.engine import calibrate as calibration
from harness.engine import pipeline, profile, targets
from harness.errors import BadInput
from harness.front import render, render_ncu, signals
from harness.front.app import (
    BuildDefine,
    ClusterOpt,
    DeviceOpt,
    GroupSize,
    K,
    Mode,
    RetriesOpt,
    SlurmOpt,
    Stages,
    WorkersOpt,
    app,
    at_least,
    cli_errors,
    cluster_spec,
    discover,
    err,
    given_path,
    notice,
    out,
    say,
    warn,
)
from harness.results import sent_tree
from harness.results.calibration import describe
from harness.tools import where


@app.command("bench")
@cli_errors
def bench_cmd(
    stages: Stages = None,
    sweep: Annotated[list[str] | None, typer.Option(
        help="AXIS=V1,V2 or AXIS=LO..HI (LO doubled up to HI); repeat for more axes.")] = None,
    variant: Annotated[list[str] | None, typer.Option(
        help="Variant (repeat), or 'all'; default: each stage's default, every variant of a "
             "pipeline.")] = None,
    define: Annotated[list[str] | None, typer.Option(
        help="NAME=V1,V2: compile each variant once per value of the kernel's -D NAME (a "
             "tuning sweep; repeat for more names; rows name it, default[LANES=4]).")] = None,
    restrict: Annotated[list[str] | None, typer.Option(
        help="A condition every --define build must meet, over its -D values (numbers "
             "where they read as numbers): arithmetic, comparisons, and/or/not, e.g. "
             "'BLOCK*UNITS <= 1024'; repeat for more. Builds that fail one are left out "
             "and named.")] = None,
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
    drain: Annotated[bool, typer.Option(
        help="Cold, and the run's writes drained inside each sample: the L2 flushed again "
             "before the end event, the flush's own time taken off (rows say l2=drained). "
             "Stages and peers, not pipelines.")] = False,
    graph: Annotated[bool, typer.Option(
        help="Capture each point's launches once as a CUDA graph; time its replay.")] = False,
    budget: Annotated[float, typer.Option(parser=at_least(0.01),
                                         help="Seconds of sampling per point, 0.01 or more.")]
    = 2.0,
    verify: Annotated[bool, typer.Option(help="Check each point against the reference.")]
    = True,
    repeats: Annotated[int, typer.Option(
        min=1, max=1000, help="Measure each point this many times, its variants, builds "
                              "and peers in a rotated order each round; a row is its median "
                              "repeat, its noise at least the repeats' standard error, its "
                              "reason every repeat's time.")]
    = 1,
    max_noise: Annotated[float, typer.Option(
        "--max-noise", help="Stop a point's sampling once the noise of its median is under "
                            "this % (and --min-samples are kept), or at the timer's floor "
                            "where this is below it.")] = 1.0,
    min_samples: Annotated[int, typer.Option(
        "--min-samples", min=1, help="Samples a point keeps at least before the noise "
                                     "target can stop it.")] = 20,
    max_samples: Annotated[int, typer.Option(
        "--max-samples", min=1, max=100_000, help="Samples a point takes at most.")] = 2000,
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
    spec = cluster_spec(cluster, workers, retries, slurm, device)
    kw: dict[str, Any] = dict(
        sweep=sweep or [], variants=variant, defines=define or [],
        family=family, backend=backend, peers=peers, hot=hot, graph=graph, budget=budget,
        verify=verify, seed=seed, options=targets.options(mode=mode, k=k,
                                                          group_size=group_size),
        out_dir=out_dir, append=append, overwrite=overwrite, repeats=repeats,
        against=against, resume=resume, restrict=restrict or [], drain=drain,
        sampling=benches.Sampling(max_noise, min_samples, max_samples))
    run = cluster_bench.bench(discover(stages), stages, cluster=spec, **kw) if spec \
        else benches.bench(discover(stages), stages, device=device, **kw)
    warn(run.repaired)
    if run.left_out:
        say(f"--restrict left out {len(run.left_out)} build(s): {', '.join(run.left_out)}")
    if getattr(run, "resumed", 0):
        say(f"resumed: {run.resumed} point(s) measured already by this command at this "
              "commit and source, left as they are")
    if run.note:
        err.print(f"[yellow]{escape(run.note)}" + ("" if run.on_gpu else
                  ": timing the NumPy references on the CPU instead (backend=numpy, no GPU "
                  "numbers).") + "[/]", soft_wrap=True)
    if getattr(run, "past_cpu", 0):  # said, not dropped in silence
        say(f"{run.past_cpu} point(s) of the default sweep moving more than "
            f"{benches.CPU_BYTES >> 20} MiB left out on the CPU (--sweep times them)")
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
        notice(f"interrupted: {len(got) if kept is None else kept} finished row(s) kept in "
               f"{run.out_dir}/")
        raise typer.Exit(signals.exit_code(exc)) from None
    finally:
        run.close()
        staged = [m.row for m in got if not m.job.is_pipeline]
        if staged or not got:
            out.print(render.stage_rows(staged, out.width))
        if len(staged) < len(got):
            out.print(render.pipeline_rows([m.row for m in got if m.job.is_pipeline],
                                           out.width))
    say(f"wrote {len(got)} row(s) to {run.out_dir}/")
    if any(m.row["status"] == "failed" for m in got):
        raise typer.Exit(1)


@app.command("run")
@cli_errors
def run_cmd(
    name: Annotated[str, typer.Argument(help="Pipeline.")] = "spike_quant_gemm",
    repeats: Annotated[int, typer.Option(min=1, max=100_000, help="Timed repetitions.")] = 10,
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
    rep = pipeline.run(discover(name), name, opts, family, repeats, hot, device)
    say(f"outputs checked against the chained references: ok ({rep.checks} checks)")
    for line in rep.lines:
        say(line)


@app.command()
@cli_errors
def calibrate(
    device: DeviceOpt = 0,
    nbytes: Annotated[int, typer.Option(
        "--bytes", min=1 << 20, help="Bytes copied (each way), written, or read (mix, read).")]
    = calibration.COPY_BYTES,
    kind: Annotated[str, typer.Option(
        "--kind", help="copy (device to device, read + write counted), write (a fill, "
                       "bytes written counted), mix (--bytes read as --reads planes, each "
                       "unit of a plane written --writes times, read + write counted) or read "
                       "(--bytes read as --reads planes, nothing written).")] = "copy",
    writes: Annotated[int | None, typer.Option(
        min=1, help="--kind mix: planes written (default 6: activation_fused's pass 2, "
                    "q8 in, six int8 planes out).")] = None,
    reads: Annotated[int | None, typer.Option(
        min=1, help="--kind mix or read: planes read, 1 to 8 (the mix's default 1; 4 with "
                    "--writes 1: activation_fused's pass 1, a float in, q8 out; the read's "
                    "default 4).")] = None,
) -> None:
    """Measure the device's memory bandwidth and store it: the copy of the default size is
    the peak that % of peak refers to; any other size or kind is stored beside it."""
    c = calibration.calibrate(device, nbytes, kind, writes, reads)
    r = c.record
    role = "the peak" if c.is_peak else "beside the peak, which it does not replace"
    counted = f"{calibration.KINDS[kind].counted}: {describe(r)}"
    say(f"{r['gpu']}: {kind} bandwidth {r['gbps']:.0f} GB/s ({counted}; median "
          f"{r['median_us']:.1f} µs ± {r['noise_pct']:.2f}%, {r['samples']} samples) -> "
          f"{c.path} ({role})")


@app.command("where")
@cli_errors
def where_cmd(device: DeviceOpt = 0) -> None:
    """Print the GPU's results folder, statistics/<gpu>/ (where bench writes by default)."""
    out.print(str(where.gpu_dir(device)), markup=False, soft_wrap=True)


@app.command("stamp")
@cli_errors
def stamp_cmd(
    out_file: Annotated[Path | None, typer.Option(
        "--out", parser=given_path, help=f"The stamp file (default: {sent_tree.STAMP_FILE} "
        "at the project's root).")] = None,
) -> None:
    """Stamp the tree about to be sent to a GPU machine: HEAD's commit and its sources'
    digest, which gpu-check.sh passes on there, so that each row names that commit, or
    <commit>-dirty where the sources that ran are not the commit's."""
    st, path = sent_tree.write_stamp(paths.project_root(), out_file)
    out.print(f"{st.sha[:12]} (sources {st.tree}) -> {path}", markup=False, soft_wrap=True)
    if st.dirty:
        shown = ", ".join(st.changed[:5]) + (f" and {len(st.changed) - 5} more"
                                             if len(st.changed) > 5 else "")
        warn([f"sources that would travel differ from {st.sha[:12]}'s ({shown}): rows "
              f"measured from this tree will name {st.sha[:12]}-dirty (commit first to "
              "have them name a commit)"])


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
    stalls: Annotated[bool, typer.Option(
        help="Also sample each SASS instruction's warp states: where the warps wait, by "
             "stall reason and by instruction (the source page kept, gzipped, in "
             "<out>/<stage>.source/).")] = False,
    top: Annotated[int | None, typer.Option(
        min=1, help="With --stalls: the instructions listed [default: 20].")] = None,
) -> None:
    """Re-run one stage launch under Nsight Compute (ncu) and print and store its metrics."""
    if top is not None and not stalls:
        raise BadInput("--top lists the instructions of --stalls: give --stalls too")
    prof = profile.profile(
        discover(stage), stage, variant=variant, family=family,
        metrics=metrics.split(",") if metrics else None, section_set=section_set,
        options=targets.options(mode=mode, k=k, group_size=group_size, batch=batch),
        sweep=sweep or [], device=device, out_dir=out_dir, defines=define or [],
        stalls=stalls)
    warn([prof.repaired] if prof.repaired else [])
    warn(list(prof.notes))
    if prof.unstored:
        warn([f"{prof.path} has an earlier harness's columns: "
                f"{', '.join(prof.unstored)} printed, not stored"])
    out.print(render.profile(prof.rows))
    say(f"wrote {len(prof.rows)} row(s) to {prof.path}")
    if prof.table is not None:
        say(f"wrote every metric of the set to {prof.table}")
    for page in prof.pages:
        out.print(render_ncu.stall_reasons(page))
        out.print(render_ncu.stall_instructions(page, top or 20))
    if prof.source is not None:
        say(f"wrote the source page (every instruction's samples) to {prof.source}")
