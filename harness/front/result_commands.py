"""The commands over result files: report, compare, best, fit, merge, commits, goals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from harness import paths
from harness.engine import goals as goal_report
from harness.engine import merge
from harness.errors import BadInput, CheckFailed
from harness.front import render_results
from harness.front.app import (
    Preset,
    Threshold,
    Z,
    app,
    cli_errors,
    discover,
    err,
    given_path,
    out,
    say,
)
from harness.results import best, commits, compare, fit, models, report


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
        reg = discover()
        report.check_stages(folders, stage, {*reg.stages, *reg.pipelines})
    if len(folders) > 1:
        if readme is not None or out_dir is not None:
            raise BadInput("--readme and --out take one folder; several are compared only")
        say(models.side_by_side(folders, batch or report.DEFAULT_BATCHES, stage))
        return
    rep = report.build(folders[0], batch, out_f, stage, readme, block, out_dir)
    for p in rep.plots:
        say(f"wrote {p}")
    say(rep.text)
    if rep.ceilings:
        say("\nThe calibration records (the copy peak, and the ceilings of other traffic):")
        say(rep.ceilings)
    for why in rep.unreadable:
        err.print(f"[yellow]warning:[/] {escape(why)}", soft_wrap=True)
    if rep.empty:
        err.print(f"[yellow]warning:[/] {escape(rep.empty)}", soft_wrap=True)
    if rep.table_path is not None:
        say(f"wrote {rep.table_path}")
    if rep.readme is not None:
        say(f"updated {rep.readme}")


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
    fail_unclear: Annotated[float, typer.Option(
        "--fail-unclear", min=0.0, help="An ambiguous row (the noise cannot tell) this "
        "many percent slower (in clock cycles where both rows have the clock; at least "
        "--threshold) fails the gate too.")] = compare.UNCLEAR_PCT,
) -> None:
    """Compare two result CSVs row by row: exit 1 when a row is slower (or, ambiguous, its
    median slower by --fail-unclear %), no longer ok, or one of ours is gone (a CI gate), 2
    when the files cannot be compared."""
    rep = compare.run(old, new, preset, threshold, z, tuple(ignore or ()), fail_unclear)
    out.print(render_results.verdicts(rep, explain))
    say(render_results.counts(rep))
    if regressed := rep.regressions():
        say(render_results.regressions(regressed))
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
    out.print(render_results.best_builds(points, explain))
    for line in best.rank_text(points):
        say(line)


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
    out.print(render_results.fit_lines(lines, axis))
    for line in fit.summary(lines, axis):
        say(line)


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
    say(f"merged {m.points} point(s) from {len(csvs)} CSVs into {m.path} "
          f"({min(m.processes)}-{max(m.processes)} processes a point)")


@app.command("commits")
@cli_errors
def commits_cmd(
    folders: Annotated[list[Path] | None, typer.Argument(
        parser=given_path, help="Results folders or CSVs (default: statistics/).")] = None,
    check_: Annotated[bool, typer.Option("--check", help="Fail when a row names a commit "
                                         "this clone's history does not hold and "
                                         "statistics/untraced_commits.csv does not give, "
                                         "or that list has a stale entry.")] = False,
) -> None:
    """The commits the result rows name, and whether this clone's history holds each one
    (those it does not, each with why: statistics/untraced_commits.csv)."""
    stats = paths.statistics_dir()
    rep = commits.check(folders or [stats], stats / commits.UNTRACED_FILE, paths.project_root())
    held = len(rep.named) - len(rep.missing) - len(rep.untraced)
    say(f"{len(rep.named)} commit(s) named by result rows: {held} in the history, "
        f"{len(rep.untraced)} listed as untraced, {len(rep.missing)} missing")
    for c in rep.untraced:
        out.print(f"[yellow]untraced[/] {escape(c.git_sha)}: {escape(c.reason)}", soft_wrap=True)
    for sha in rep.missing:
        where = ", ".join(str(f) for f in rep.named[sha])
        out.print(f"[red]missing[/]  {escape(sha)} (rows in {escape(where)})", soft_wrap=True)
    for f in rep.unnamed_files:
        out.print(f"[yellow]no git_sha column[/] {escape(str(f))}", soft_wrap=True)
    for f, n in rep.blank_rows.items():
        out.print(f"[red]blank[/]    {n} row(s) with no git_sha in {escape(str(f))}",
                  soft_wrap=True)
    for c in rep.stale:
        out.print(f"[red]stale[/]    {escape(c.git_sha)} in {commits.UNTRACED_FILE}",
                  soft_wrap=True)
    if check_ and rep.failure:
        raise CheckFailed(rep.failure)


@app.command("goals")
@cli_errors
def goals_cmd(
    folder: Annotated[Path, typer.Argument(
        parser=given_path, help="A results folder, e.g. statistics/h200.")],
    goals_file: Annotated[Path | None, typer.Option(
        "--goals", parser=given_path,
        help="The goals' TOML file (default: statistics/goals.toml).")] = None,
    readme: Annotated[Path | None, typer.Option(
        parser=given_path, help="Write the table into this README's block.")] = None,
    block: Annotated[str, typer.Option(help="The README block: <!-- BLOCK:begin -->.")]
    = "goals",
) -> None:
    """Each declared goal judged from the folder's rows: the figure its row shows, the
    bound, met or missed, the run behind it and whether its kernel is at the current
    source (the figures are read from the rows, never typed)."""
    path = goals_file or paths.statistics_dir() / "goals.toml"
    out.print(goal_report.report_goals(discover(), folder, path, readme, block), markup=False,
              soft_wrap=True)
    if readme is not None:
        say(f"updated {readme}")
