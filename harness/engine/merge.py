"""``harness merge``: one bench command's rows, measured in several processes, combined per
point as ``--repeats`` combines the repeats of one process.

One process's median can be off by more than its own noise says, and rotating the order
inside a process does not show it: on the H200 the same int_gemm point measured 11.4 to
26.6 µs in six processes run one after another, each with 1-10 % noise, and its bf16 peer
24 to 126 µs. Running the command P times, each with its own ``--out``, and merging the
CSVs gives each point the row of its median process (every column from that process), its
noise widened to the standard error across the processes, and a reason listing every
process's median (:func:`harness.engine.repeats.combine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.engine.repeats import combine
from harness.engine.resume import same_command
from harness.errors import BadInput
from harness.results import files, resultcsv
from harness.results.rows import CsvWriter


@dataclass(frozen=True)
class Merged:
    """What ``merge`` wrote: the file, its points, and how many processes each had."""

    path: Path
    points: int
    processes: tuple[int, ...]


def _real(p: Path) -> Path:
    """``p`` with its links followed; BadInput (one line) where they loop."""
    try:
        return Path(p).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        raise BadInput(f"harness merge: cannot follow {p}: {exc}") from None


def combine_runs(paths: Sequence[Path]) -> tuple[list[dict[str, str]], tuple[str, ...],
                                                  tuple[int, ...]]:
    """The merged rows (in the first file's order, then each later file's new points), the
    columns of every file (the first file's, then any other's it lacks: a cluster CSV's
    worker columns, say), and the number of processes behind each row. BadInput (one line)
    for files that are not one command's processes: fewer than two, a file given twice,
    stage and pipeline CSVs mixed, a point twice in one file, a file of rows sharing no
    point with the files before it, or one point measured at two sources, by two commands
    (their ``--out`` aside) or on two GPU models."""
    if len(paths) < 2:
        raise BadInput("harness merge takes the CSVs of at least two processes")
    real = [_real(p) for p in paths]
    twice = {str(p) for p, r in zip(paths, real, strict=True) if real.count(r) > 1}
    if twice:
        raise BadInput(f"harness merge: {', '.join(sorted(twice))} given twice (one file is "
                       "one process)")
    tables = [resultcsv.read(p) for p in paths]
    schema = tables[0].schema
    if any(t.schema is not schema for t in tables):
        raise BadInput("harness merge: the CSVs mix stage and pipeline rows")
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for t in tables:
        seen: set[tuple[str, ...]] = set()
        for r in t.rows:
            key = tuple(schema.value(r, c) for c in schema.key)
            if key in seen:
                raise BadInput(f"{t.path} has two rows of one point ({_label(schema, key)}): "
                               "merge takes one process's rows a file")
            seen.add(key)
            groups.setdefault(key, []).append(r)
        if t is not tables[0] and seen and not any(len(groups[k]) > 1 for k in seen):
            raise BadInput(f"harness merge: {t.path} shares no point with the files before "
                           "it: not processes of one command")
    for key, rs in groups.items():
        sources = {(r.get("git_sha", ""), r.get("kernel_hash", r.get("kernel_hashes", "")))
                   for r in rs}
        if len(sources) > 1:
            raise BadInput(f"harness merge: {_label(schema, key)} was measured at "
                           f"{len(sources)} sources (commit, kernel hash): not one command")
        commands = sorted({same_command(r.get("command", ""), out=True) for r in rs})
        if len(commands) > 1:
            raise BadInput(f"harness merge: {_label(schema, key)} was measured by "
                           f"{len(commands)} commands ({commands[0]!r}, {commands[1]!r}): "
                           "merge takes one command's processes")
        gpus = sorted({r.get("gpu", "") for r in rs})
        if len(gpus) > 1:
            raise BadInput(f"harness merge: {_label(schema, key)} was measured on "
                           f"{' and '.join(repr(g) for g in gpus)}: one point's processes "
                           "run on one GPU model")
    pipeline = schema is resultcsv.PIPELINE
    merged = [combine(rs, pipeline=pipeline, unit="process") for rs in groups.values()]
    columns = tuple(dict.fromkeys(c for t in tables for c in t.rows[0]))
    return merged, columns, tuple(len(rs) for rs in groups.values())


def _label(schema: resultcsv.Schema, key: tuple[str, ...]) -> str:
    return " ".join(f"{c}={v}" for c, v in zip(schema.key, key, strict=True) if v)


def run(paths: Sequence[Path], out: Path, overwrite: bool = False) -> Merged:
    """``harness merge``: combine the processes' CSVs and write the rows to ``out`` (an
    existing file is refused unless ``overwrite``)."""
    target = _real(out)
    mine = [str(p) for p in paths if _real(p) == target]
    if mine:  # --overwrite would cut one of the processes' files before the merge is written
        raise BadInput(f"harness merge: --out {out} is one of the CSVs merged ({mine[0]}): "
                       "write the merge to another file")
    rows, columns, counts = combine_runs(paths)
    with CsvWriter(out, files.OVERWRITE if overwrite else files.REFUSE, columns=columns,
                   require_status=False,
                   choices="--overwrite replaces it, or --out names another file") as w:
        for r in rows:
            w.write(r)
    return Merged(Path(out), len(rows), counts)
