"""The ``harness`` typer app and what its commands share: the two consoles, the options
several commands take, the one-line error handling, the plugin discovery with its warnings.

The commands live by concern beside it (kernel_commands, measure_commands,
result_commands); :mod:`harness.front.cli` imports them, which registers them on the app.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

import harness
from harness.cluster import options as clusters
from harness.contract import registry
from harness.errors import BadInput, HarnessError
from harness.front import signals, terminal

app = typer.Typer(add_completion=False, no_args_is_help=True, cls=terminal.OneLineErrors,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Benchmark harness for spike-stream conversion kernels (PyCUDA).")
#: The widest COLUMNS taken: past it a terminal is no wider (rich pads help to the width).
MAX_COLUMNS = 1000
# A COLUMNS that is no width (0, "²", "wide") would have rich print every line as nothing,
# error lines included, or fail: taken as unset, here and by every console made later; a
# huge one is cut to MAX_COLUMNS.
_cols = os.environ.get("COLUMNS")
if _cols is not None:
    if not (_cols.isascii() and _cols.isdigit() and int(_cols) > 0):
        del os.environ["COLUMNS"]
    elif int(_cols) > MAX_COLUMNS:
        os.environ["COLUMNS"] = str(MAX_COLUMNS)
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


def at_least(least: float) -> Callable[[Any], float]:
    """The parser of a float option of ``least`` or more that names what it was given: click's
    range check says only "greater than or equal to" (of ``nan`` too, which is no number)."""

    def parse(text: Any) -> float:
        try:
            value = float(text)
        except ValueError:
            raise typer.BadParameter(f"{text!r} is not a number") from None
        if math.isnan(value):
            raise typer.BadParameter(f"{text!r} is not a number")
        if value < least:
            raise typer.BadParameter(f"{text} is less than {least:g}, the least it takes")
        return value

    parse.__name__ = "FLOAT"  # click's metavar for the option in --help
    return parse


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
Threshold = Annotated[float, typer.Option(parser=at_least(0.0),
                                          help="Smallest change that counts, %; 0 or more.")]
Z = Annotated[float | None, typer.Option(parser=at_least(0.0), help="Standard errors on each "
                                         "side of a median, 0 or more (default: the "
                                         "preset's).")]
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


def cluster_spec(where: str | None, workers: int | None, retries: int, slurm: list[str] | None,
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
                show_error(exc)
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt as exc:
                notice(f"interrupted ({signals.name(exc)}): stopped; every file written so "
                       "far is whole")
                raise typer.Exit(signals.exit_code(exc)) from None

    return wrapper  # type: ignore[return-value]


def warn(lines: list[str]) -> None:
    """Warnings the library returned (a torn last row cut from a file, say)."""
    for line in lines:
        err.print(f"[yellow]warning:[/] {escape(line)}", soft_wrap=True)


def show_error(exc: HarnessError) -> None:
    """A library error as one line on stderr, its detail (a compiler log) under it."""
    err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
    if exc.detail:
        err.print(exc.detail, markup=False, soft_wrap=True)


def discover(names: str | Sequence[str] | None = None) -> registry.Registry:
    """The plugins found; each one that failed to load is a warning line, but for those in
    ``names`` (the stages the command was asked for: the error that asking for one raises
    says the same, once)."""
    reg = registry.discover()
    named = {names} if isinstance(names, str) else set(names or ())
    for p in reg.problems:
        if p.plugin not in named:
            err.print(f"[yellow]warning:[/] {escape(str(p))}", soft_wrap=True)
    return reg


def notice(text: str) -> None:
    """An interruption's line on stderr, through a console of its own. The interrupt may
    have landed inside rich's printing on ``err`` (between a print's entering and leaving
    its output buffer, as at the progress bar's last render), and that console then holds
    every later print in its buffer for good: a fresh one writes at once."""
    Console(stderr=True, highlight=False).print(text, markup=False, soft_wrap=True)


def say(text: str) -> None:
    """One line of plain text on stdout (no rich markup read in it)."""
    out.print(text, markup=False)


def _version(value: bool) -> None:
    if value:
        say(f"harness {harness.__version__}")
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
