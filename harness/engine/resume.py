"""``harness bench --resume``: the points a sweep has measured already, left as they are.

A device lease can end in the middle of a long sweep; every finished row is on disk (rows
land as they are measured), and the same command run again with ``--resume`` measures only
what is missing. A point is done when every row it would write is in the output files,
``ok`` (or ``skipped`` by a rule of the point), and of the same run as the one now asked
for: the same command (less ``--resume``, ``--append`` and ``--overwrite``), commit, kernel
source and GPU model, at the same point, family and L2 state. The point is the unit, not
the row: a point's variants, ``--define`` builds and peers are set against each other
(``speedup_vs_best_peer``, ``harness best``) only when one process measured them, so a
point with any row missing is measured again whole.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness.engine.jobs import Job

#: The columns that make a row the one a job would write now, besides the command (which
#: holds the launch mode asked for: a torch peer that could not be captured says
#: ``stream`` where ``--graph`` was asked, and is the same row).
_STAGE = ("stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params", "l2",
          "kernel_hash", "git_sha", "gpu")
_PIPELINE = ("stage", "backend", "variant", "batch", "in_f", "out_f", "mode", "family",
             "params", "l2", "kernel_hashes", "git_sha", "gpu")
#: Options that say where the rows go, not what is measured.
_WHERE = frozenset({"--resume", "--append", "--no-append", "--no-resume", "--overwrite"})
#: The statuses of a row that is done: measured, or skipped by a rule of the point (a
#: variant that does not take the family, a peer outside its shape rules) that holds again.
DONE = ("ok", "skipped")


def same_command(command: str, out: bool = False) -> str:
    """The command with ``--resume``, ``--append`` and ``--overwrite`` taken out (and with
    ``out``, ``--out`` and its folder too: the processes of one command, each with its own
    ``--out``, that ``harness merge`` combines): a resumed run's rows and the first run's
    are one command's."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    kept, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif out and w == "--out":
            skip = True
        elif not (w in _WHERE or (out and w.startswith("--out="))):
            kept.append(w)
    return shlex.join(kept)


def _identity(row: Mapping[str, Any], pipeline: bool) -> tuple[str, ...]:
    cols = _PIPELINE if pipeline else _STAGE
    return (*("" if row.get(c) is None else str(row.get(c)) for c in cols),
            same_command(str(row.get("command", ""))))


def pending(groups: Sequence[Sequence[Job]], expected: Callable[[Job], Iterable[dict[str, Any]]],
            existing: Callable[[Job], Iterable[Mapping[str, str]]]) -> tuple[list[Job], int]:
    """The jobs of the points not yet measured, in order, and how many points were done.

    ``groups``: the jobs of each point (its variants and builds); ``expected(job)``: the
    rows' known columns (``rows.base``) for each backend that measures it, ours and its
    peers; ``existing(job)``: the rows of the job's target file."""
    todo: list[Job] = []
    done = 0
    have: dict[str, set[tuple[str, ...]]] = {}
    for group in groups:
        complete = True
        for job in group:
            name = job.target.name
            if name not in have:  # each row as its last run left it: a later failed row
                last = {_identity(r, job.is_pipeline): r.get("status")  # of a build undoes
                        for r in existing(job)}                          # its earlier ok one
                have[name] = {k for k, status in last.items() if status in DONE}
            if any(_identity(r, job.is_pipeline) not in have[name] for r in expected(job)):
                complete = False
                break
        if complete:
            done += 1
        else:
            todo.extend(group)
    return todo, done
