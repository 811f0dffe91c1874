"""Measure a results folder's rows again, each with the command that measured it.

Every stage row keeps the ``harness bench`` command that wrote it (the ``command`` column).
:func:`commands` turns the commands behind a folder's ``pycuda`` rows into ``harness``
argument lists that measure the same points again, with the same options, into another
folder: ``harness compare`` then meets the same keys on both sides (a k, a graph launch or a
variant given on the command line included), whatever sweep made the rows. A command that
measured several stages measures again only those whose CSV is in the folder (so a file
taken out of the folder is left out of the replay). The torch peers are left out unless
asked for. Pipeline CSVs are not replayed.

    python -m harness.tools.replay FOLDER OUT [--peers none|all|NAME,...] (as bench takes them)

runs them, one ``harness bench`` child each, into OUT (which must hold no CSV yet, unless
``--append``: then the rows are added to OUT's CSVs, whose earlier rows stay, as a tuning
folder measured again in place keeps the rows of the sweeps that can no longer be built);
its exit status is the worst of theirs (1: some row failed, or a child that exited 0 wrote
no rows for a stage it was to measure, which the regress gate would otherwise pass without
comparing it), or 2 with one line when there is nothing to replay. A tuning sweep over a
``--define`` the kernel no longer reads (a knob taken out after it lost) is left out, with a
line saying so: it cannot be built again.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import shlex
import subprocess
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from harness.contract.defines import check_defines
from harness.contract.registry import discover
from harness.contract.stage import Stage
from harness.errors import BadInput, HarnessError
from harness.results.rows import read_rows

#: ``harness bench``'s options that take no value (a CPU test holds this to the CLI's).
FLAGS = frozenset({"--hot", "--no-hot", "--drain", "--no-drain", "--graph", "--no-graph",
                   "--verify", "--no-verify",
                   "--append", "--no-append", "--overwrite", "--resume"})
#: Options a replay sets itself: where the rows go, and whether peers run beside them.
_REPLACED = frozenset({"--out", "--peers", "--append", "--no-append", "--overwrite",
                       "--resume"})


def _takes_value(a: str) -> bool:
    """Whether option token ``a`` is followed by its value (``--out DIR``, not ``--out=DIR``
    nor a flag)."""
    return "=" not in a and a not in FLAGS


def stage_csvs(folder: Path) -> list[Path]:
    """The stage CSVs directly in ``folder``: timed rows (``median_us``) with their command,
    not a pipeline's (``total_us``)."""
    out = []
    for p in sorted(Path(folder).glob("*.csv")):
        with p.open() as f:
            header = set(f.readline().strip().split(","))
        if {"stage", "backend", "command", "median_us"} <= header and "total_us" not in header:
            out.append(p)
    return out


def _rewrite(argv: list[str], out_dir: Path, peers: str, repeats: int | None) -> list[str]:
    """``argv`` without the options a replay sets, then with its own (``--repeats`` only
    when ``repeats`` is given: else the command keeps its own)."""
    replaced = _REPLACED | ({"--repeats"} if repeats is not None else set())
    kept: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a.split("=", 1)[0] in replaced:
            skip = _takes_value(a)
            continue
        kept.append(a)
    more = ["--repeats", str(repeats)] if repeats is not None else []
    # --append: several commands may write one stage's CSV, as they did the first time.
    return [*kept, *more, "--peers", peers, "--out", str(out_dir), "--append"]


def _positional(argv: list[str]) -> list[bool]:
    """Which tokens of a bench command are positional (stage names): not an option, and
    not the value of an option that takes one (``--out gemm`` names a folder, not a stage)."""
    out, value = [], False
    for a in argv:
        if value:
            out.append(False)
            value = False
        elif a.startswith("-"):
            out.append(False)
            value = _takes_value(a)
        else:
            out.append(True)
    return out


def _only(argv: list[str], stems: set[str], names: Collection[str]) -> list[str]:
    """``argv`` (a bench command without its ``bench``) measuring only the stages in
    ``stems``, the folder's CSVs that hold this command's pycuda rows: a stage it names
    outside them (its file left out of a regress) is dropped, and a command that names none
    (every stage) names them. ``names``: every stage the harness knows."""
    pos = _positional(argv)
    named = [a for a, p in zip(argv, pos, strict=True) if p and a in names]
    if not named:
        return [*argv, *sorted(stems)]
    return [a for a, p in zip(argv, pos, strict=True)
            if not (p and a in names) or a in stems]


def commands(folder: Path, out_dir: Path, peers: str = "none",
             names: Collection[str] | None = None,
             repeats: int | None = None) -> list[list[str]]:
    """The ``harness`` argument lists (``["bench", ...]``) that measure the ``pycuda`` rows of
    the folder's stage CSVs again into ``out_dir``, each distinct command once, in the order
    the rows were written, and only for the stages whose CSV is in the folder (``names``:
    the stage names to tell apart in a command, default the discovered plugins; ``repeats``,
    each point measured that many times, ``bench --repeats``); HarnessError naming the file
    when a command is not a bench."""
    seen: dict[str, tuple[Path, set[str]]] = {}
    for p in stage_csvs(folder):
        for r in read_rows(p):
            if r.get("backend") == "pycuda" and r.get("command"):
                seen.setdefault(r["command"], (p, set()))[1].add(p.stem)
    if names is None:
        names = set(discover().stages)
    out = []
    for cmd, (path, stems) in seen.items():
        try:
            argv = shlex.split(cmd)
        except ValueError as exc:
            raise HarnessError(f"{path}: unreadable command {cmd!r} ({exc})") from None
        if argv[:2] != ["harness", "bench"]:
            raise HarnessError(f"{path}: a pycuda row's command is not a harness bench: {cmd!r}")
        again = _rewrite(_only(argv[1:], stems, names), out_dir, peers, repeats)
        if again not in out:  # commands that differed only in what a replay sets
            out.append(again)
    if not out:
        raise HarnessError(f"nothing to replay in {folder}: no stage CSV with pycuda rows and "
                           "their commands")
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        raise BadInput(f"replay: {message}")


def main(argv: Sequence[str] | None = None) -> int:
    """Replay the folder's commands as ``harness bench`` children; the worst exit status."""
    ap = _Parser(prog="python -m harness.tools.replay")
    ap.add_argument("folder", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--peers", default="none")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--append", action="store_true",
                    help="add the rows to OUT's CSVs (OUT may be FOLDER itself)")
    try:
        a = ap.parse_args(sys.argv[1:] if argv is None else argv)
        if a.repeats is not None and a.repeats < 1:
            raise BadInput(f"replay: --repeats must be at least 1, not {a.repeats}")
        if not a.append and any(a.out.glob("*.csv")):
            raise BadInput(f"{a.out} already holds CSVs: replay into an empty folder, or "
                           "add the rows to them with --append")
        reg = discover()
        todo = commands(a.folder, a.out, a.peers, set(reg.stages), repeats=a.repeats)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    worst, ran = 0, 0
    for args in todo:
        why = unbuildable(args, reg.stages)
        if why:  # a sweep over a knob since taken out: nothing of it can be measured again
            print(f"=== left out: harness {shlex.join(args)} ({why})", flush=True)
            continue
        print(f"=== harness {shlex.join(args)}", flush=True)
        ran += 1
        named = stages_named(args, reg.stages)
        before = {n: _rows_in(a.out / f"{n}.csv") for n in named}
        rc = subprocess.run([sys.executable, "-m", "harness", *args], check=False).returncode
        idle = [n for n in named if _rows_in(a.out / f"{n}.csv") <= before[n]]
        if rc == 0 and idle:  # a gate that compares nothing must not pass
            print(f"error: harness {shlex.join(args)} exited 0 but wrote no rows for "
                  f"{', '.join(idle)}", file=sys.stderr, flush=True)
            rc = 1
        worst = max(worst, rc)
    if not ran:
        print(f"error: nothing to replay in {a.folder}: every command was left out (above)",
              file=sys.stderr)
        return 2
    return worst


def stages_named(args: Sequence[str], names: Collection[str]) -> list[str]:
    """The stages a bench command (its argument list) names: its positional words among
    ``names``, not an option's value that happens to be one (``--out gemm``)."""
    return [a for a, pos in zip(args, _positional(list(args)), strict=True)
            if pos and a in names]


def _rows_in(path: Path) -> int:
    """The rows of a result CSV (0 where there is none yet), read leniently: only their
    number is wanted, and a torn last row (which the command's ``--append`` cuts away, or
    refuses in one line of its own) must not stop the replay."""
    if not path.is_file():
        return 0
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as f:
        return sum(1 for _ in csv.DictReader(f))


def unbuildable(args: Sequence[str], stages: Mapping[str, Stage]) -> str | None:
    """Why a bench command's ``--define`` builds cannot be made again (a macro that the
    kernel of a stage it names no longer reads), or None."""
    defines = [v.partition("=")[0] for a, v in itertools.pairwise(args) if a == "--define"]
    for name in (a for a in args if a in stages):
        try:
            check_defines(stages[name], defines)
        except BadInput as exc:
            return str(exc)
    return None


if __name__ == "__main__":
    sys.exit(main())
