"""The commands about kernels themselves: list, check (nvcc), validate, sass, sanitize and
the validation ledger."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from harness.cluster import validate as cluster_validate
from harness.contract import registry
from harness.engine import kernels, ledger_rows, sanitize, sass, targets, validate
from harness.errors import BadInput, CheckFailed, ContextLost, ValidationFailed
from harness.front import render
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
    cli_errors,
    cluster_spec,
    discover,
    err,
    given_path,
    out,
    say,
    show_error,
    warn,
)
from harness.results.files import ResultFileError


@app.command("list")
@cli_errors
def list_cmd(verbose: Annotated[bool, typer.Option(
        "--verbose", help="Also each one's description and its variants' and axes' help.")]
        = False) -> None:
    """List the stages and pipelines found (plugins/ and the harness.stages entry points)."""
    reg = registry.discover()
    out.print(render.catalog(reg))
    if verbose:
        say(reg.describe())
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
              "kernel hash by this nvcc (the cache: "
              "$XDG_CACHE_HOME/spike-harness/check).")] = False,
          ) -> None:
    """Compile every kernel variant with nvcc (no GPU needed) and print its resources."""
    run = kernels.check_run(discover(stages), stages, arch,
                            None if no_cache else kernels.cache_dir())
    compiled: list[kernels.Compiled] = []
    with render.progress(err) as prog:
        task = prog.add_task("check", total=run.total)
        for c in run.results:
            compiled.append(c)
            prog.update(task, advance=1, description=escape(f"{c.stage} [{c.variant}]"))
    for c in compiled:
        if c.error is not None:
            show_error(c.error)
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
    spec = cluster_spec(cluster, workers, retries, slurm, device)
    kw: dict[str, Any] = dict(
        variant=variant, families=family, seeds=seeds, seed=seed, record=record,
        options=targets.options(mode=mode, k=k, group_size=group_size))
    rep = cluster_validate.validate_targets(discover(stages), stages, cluster=spec, **kw) if spec \
        else validate.validate_targets(discover(stages), stages, device=device, **kw)
    out.print(render.validation(rep.summaries))
    for c in rep.failures[:10]:
        err.print(c.describe(), markup=False, soft_wrap=True)
    if len(rep.failures) > 10:
        err.print(f"... and {len(rep.failures) - 10} more failed cases", markup=False)
    if rep.recorded is not None:
        warn([rep.repaired] if rep.repaired else [])
        say(f"recorded {rep.rows} rows in {rep.recorded}")
    if rep.unrecorded and (rep.stopped or rep.failure):  # said, whatever stops the run
        warn([rep.unrecorded])
    if rep.stopped:
        raise ContextLost(rep.stopped)
    if rep.failure:
        raise ValidationFailed(rep.failure)
    if rep.unrecorded:  # every case passed, but the ledger lacks rows of this run
        raise ResultFileError(rep.unrecorded)


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
    rep = sass.sass(discover(stage), stage, variant=variant, defines=define or [], arch=arch)
    if listing is not None:
        try:
            listing.write_text(rep.listing)
        except OSError as exc:
            raise BadInput(f"cannot write --listing {listing}: {exc.strerror}") from None
    warn(list(rep.notes))
    out.print(render.sass(rep))
    say(f"{rep.stage} {rep.variant} for {rep.arch}"
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
    run = sanitize.sanitize(discover(stages), stages, tools=tool, family=family, device=device,
                            out_file=out_file, append=append, overwrite=overwrite,
                            variant=variant, defines=define or [])
    warn([run.repaired] if run.repaired else [])
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
    say(f"wrote {run.path}")
    if any(not o.ok for o in outcomes):
        raise typer.Exit(1)


@app.command("ledger")
@cli_errors
def ledger_cmd(
    check_: Annotated[bool, typer.Option("--check", help="Fail when a kernel's current "
                                         "source has no passing GPU validation (with "
                                         "--rows, or a row there was timed at a source "
                                         "that never had one).")] = False,
    path: Annotated[Path | None, typer.Option(parser=given_path, help="Ledger CSV.")] = None,
    rows: Annotated[list[Path] | None, typer.Option(
        "--rows", parser=given_path,
        help="Also list this results folder's timing rows measured at an "
                       "earlier kernel source, and those it cannot judge (a stage it "
                       "does not have, a --define build). Repeat for more folders "
                       "(the kernels hashed once for all).")] = None,
    drift: Annotated[bool, typer.Option("--drift", help="Also list the validated units whose "
                                        "launch code (the plugin and the domain modules it "
                                        "imports; not docstrings or comments) has changed "
                                        "since their validation's commit: the kernel hash "
                                        "does not cover it. Reported, never failed.")] = False,
) -> None:
    """Show, for every kernel variant at its current source, its GPU validation record."""
    reg = discover()
    folders = ledger_rows.judge_folders(reg, rows or [], path)
    rep = kernels.ledger_report(reg, path)
    for s in rep.statuses:
        label = "[green]ok[/]      " if s.ok else \
            "[red]FAILED[/]  " if s.failed else "[red]MISSING[/] "
        out.print(label + escape(s.describe()), soft_wrap=True)
    if drift:
        for d in kernels.drift_report(reg, rep):
            out.print(f"[yellow]{d.state:<8}[/]" + escape(d.describe()), soft_wrap=True)
    for folder, older, unjudged in folders:
        if len(folders) > 1 and (older or unjudged):
            out.print(f"rows of {escape(str(folder))}:", soft_wrap=True)
        for o in older:
            out.print("[yellow]older[/]   " + escape(o.describe()), soft_wrap=True)
        for u in unjudged:
            out.print("[yellow]unjudged[/] " + escape(u.describe()), soft_wrap=True)
    if check_:
        failures = [f for f in (rep.failure, *(ledger_rows.unvalidated_rows(older, folder, unjudged)
                                               for folder, older, unjudged in folders)) if f]
        if failures:
            raise CheckFailed("; ".join(failures))
