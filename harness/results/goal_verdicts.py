"""Each declared goal (:mod:`.goals`) judged from the rows of a results folder.

**The row.** Among the rows of the goal's point (of its backend), the newest run's: one
command at one commit in one process (on a cluster, one worker); for a goal against a peer,
the newest run that timed that peer at the point too (a newer run that timed the point
without it cannot judge the goal, and the note says one was passed over). That run's rows
must all be one point, the same in every column of the file's key; where they differ (the
goal names too little: rows of several variants, shapes or parameters match it), there is no
verdict, and the columns that differ are named. A run that measured the point more than once
(a command appended again at the same commit) is read at its last measurement. ``bench
--repeats`` writes one row a point already, the median repeat. A goal naming several
variants is judged on the first with rows at the point; a later one standing in is named in
the point and the note.

**The peer.** From the same run and process, at the same point, paired by its place: the
peer row written with ours (the k-th of the run's peer rows at the point with our k-th).

**The figure** is read from the row: its time, its TOPS, its % of peak, or its time over its
byte floor's (``100 / pct_peak``), or the peer's time over ours. A figure within three
standard errors of its bound (the rows' noise, both rows' for a peer) is within the noise.

**No verdict** where the rows cannot speak for the goal: our row's outputs were not checked
(``verified`` neither ``yes`` nor ``sampled:``), the peer's row failed (no speedup is taken
against a wrong answer, as ``speedup_vs_best_peer`` takes none), or the row's TOPS or % of
peak is not what its own flops or bytes, time and peak give.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.results import resultcsv
from harness.results import rows as rates
from harness.results.goals import BOUNDS, Goal
from harness.results.readback import number

#: Verdicts. ``no verdict``: rows are there, but they cannot speak for the goal (a peer's
#: wrong answer, our outputs unchecked, a figure its own row does not bear out).
MET, MISSED, NO_ROW, NO_VERDICT = "met", "missed", "no row", "no verdict"
#: How far a row's stored ``tops`` or ``pct_peak`` may be from what its own flops, bytes,
#: time and peak give (relative): the cells keep 6 significant digits.
DERIVED_RTOL = 1e-4
#: Standard errors on each side within which a figure is not told from its bound.
Z = 3.0


@dataclass(frozen=True)
class Judged:
    """A goal and what its rows show."""

    goal: Goal
    verdict: str
    figure: float | None = None
    noise_pct: float | None = None
    within_noise: bool = False
    time_us: float | None = None
    peer_us: float | None = None
    git_sha: str = ""
    timestamp: str = ""
    #: Whether the row was timed at the kernel's current source: "yes", "no", or "" where
    #: the caller gave no hashes or the row has none.
    current: str = ""
    note: str = ""

    def figure_text(self) -> str:
        """The figure with its unit, or '-'."""
        if self.figure is None:
            return "-"
        unit = BOUNDS[self.goal.bound][0]
        return f"{self.figure:.3f}{unit}" if unit.startswith("x") else f"{self.figure:.4g}{unit}"


def _same(want: Any, have: str) -> bool:
    """A goal's point value against a cell: numbers by value (4 is 4.0), text as text."""
    if isinstance(want, str):
        return want == have
    try:
        return float(have) == float(want)
    except ValueError:
        return False


def _params(row: Mapping[str, str]) -> dict[str, Any]:
    try:
        got = json.loads(row.get("params") or "{}")
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


def _matches(g: Goal, row: Mapping[str, str], schema: resultcsv.Schema, backend: str) -> bool:
    if row.get("backend") != backend:
        return False
    if g.stage and row.get("stage") != g.stage:
        return False
    if g.variant and schema.value(row, "variant") != g.variant:
        return False
    if "launch" in schema.key and schema.value(row, "launch") != (g.launch or "stream"):
        return False
    # A cold row unless the goal's point names its l2 (a drained or hot row is another
    # point, as a graph launch is).
    if "l2" in schema.key and "l2" not in g.point and schema.value(row, "l2") != "cold":
        return False
    params = _params(row)
    for key, want in g.point.items():
        if key in row:
            have = row[key]
        elif key in params:
            have = str(params[key])
        else:
            return False
        if not _same(want, have):
            return False
    return True


def _positive(row: Mapping[str, str], col: str) -> float | None:
    """The cell as a finite number above zero, or None (empty, not a number, or not one)."""
    v = number(row.get(col) or "")
    return v if v is not None and math.isfinite(v) and v > 0 else None


def _one_point(rows: Sequence[dict[str, str]], schema: resultcsv.Schema, what: str) -> str:
    """'' where ``rows`` are all one point (the same in every key column), else why not."""
    keys = {tuple(schema.value(r, c) for c in schema.key) for r in rows}
    if len(keys) <= 1:
        return ""
    differ = [c for i, c in enumerate(schema.key) if len({k[i] for k in keys}) > 1]
    return (f"{what} of its run are {len(keys)} points, differing in {', '.join(differ)}: "
            "name them in the goal")


def _unknown_keys(g: Goal, res: resultcsv.Results) -> list[str]:
    """The goal's point keys that are neither a column of the file nor a parameter of any
    of its rows (a misspelt key matches no row)."""
    known = set(res.rows[0]) | {k for r in res.rows for k in _params(r)}
    return [k for k in g.point if k not in known]


def _rows(g: Goal, folder: Path, cache: dict[Path, resultcsv.Results]
          ) -> tuple[resultcsv.Results | None, list[dict[str, str]], str, Goal]:
    """The first of the goal's files with rows of its point, those rows, and why none; of
    its variants, the first with rows (the goal returned names it)."""
    found = [p for p in (Path(folder) / f for f in g.files) if p.is_file()]
    if not found:
        return None, [], f"no {' or '.join(g.files)} in {folder}", g
    why = f"no {g.backend} row at this point in {' or '.join(g.files)}"
    for variant in (g.variant, *g.fallbacks):
        form = replace(g, variant=variant, fallbacks=())
        not_cold = [replace(form, point={**form.point, "l2": w}) for w in ("drained", "hot")]
        for path in found:
            if path not in cache:
                cache[path] = resultcsv.read(path)
            res = cache[path]
            if g.launch and "launch" not in res.schema.key:
                return None, [], f"{path.name} holds pipeline rows, which have no launch", g
            ours = [r for r in res.rows if _matches(form, r, res.schema, g.backend)]
            if ours:
                return res, ours, "", form
            if unknown := _unknown_keys(g, res):
                why = (f"point key(s) {', '.join(unknown)}: neither a column of {path.name} "
                       "nor a parameter of its rows")
            elif "l2" not in g.point and any(_matches(other, r, res.schema, g.backend)
                                             for r in res.rows for other in not_cold):
                why = (f"no cold {g.backend} row at this point in {path.name}, only "
                       "drained or hot ones: name l2 in the goal's point to judge those")
    return None, [], why, g


def judge(g: Goal, folder: Path, current: Mapping[tuple[str, str], str] | None = None,
          cache: dict[Path, resultcsv.Results] | None = None) -> Judged:
    """What the rows under ``folder`` show for goal ``g`` (``current``: each (stage,
    variant)'s kernel hash at this source, to say whether the row was timed at it);
    HarnessError where a file of the goal's is there but cannot be read."""
    res, ours, why, form = _rows(g, folder, {} if cache is None else cache)
    if res is None:
        return Judged(g, NO_ROW, note=why)
    first, g = g.variant, form
    def newest(rows: list[dict[str, str]]) -> str:
        """The process of the newest run (by timestamp; of rows written at one time, the
        last in the file)."""
        return resultcsv.process_of(max(reversed(rows), key=lambda r: r.get("timestamp", "")))

    process = newest(ours)
    passed_over = False
    if g.bound == "at_least_speedup":  # the newest run that timed the peer here too
        peered = {resultcsv.process_of(r) for r in res.rows
                  if _matches(g, r, res.schema, g.peer)}
        if process not in peered and (with_peer := [r for r in ours
                                                    if resultcsv.process_of(r) in peered]):
            process, passed_over = newest(with_peer), True
    run = [r for r in ours if resultcsv.process_of(r) == process]
    if why := _one_point(run, res.schema, "the rows"):
        return Judged(g, NO_ROW, note=why)
    row = run[-1]  # the file's order is the run's: the last measurement
    base = {"git_sha": row.get("git_sha", ""), "timestamp": row.get("timestamp", ""),
            "current": _current(row, res.schema, current)}
    notes = [f"the last of the {len(run)} times its run measured it"] if len(run) > 1 else []
    if g.variant != first:
        notes.append(f"{g.variant} stands in: no {first} row here")
    if passed_over:
        notes.append(f"a newer run timed the point without {g.peer}")
    if row.get("status") != "ok":
        return Judged(g, MISSED, **base, note="; ".join(
            [*notes, f"the row is {row.get('status')}: {row.get('reason') or 'no reason'}"]))
    t = float(row[res.schema.time])
    noise = (resultcsv.cell(row, res.schema.noise) or 0.0) / 100
    timed = {"time_us": t, "noise_pct": 100 * noise}
    checked = row.get("verified", "")
    if checked != "yes" and not checked.startswith("sampled:"):
        return Judged(g, NO_VERDICT, **timed, **base, note="; ".join(
            [*notes, f"its outputs were not checked (verified: {checked or 'empty'})"]))
    peer_us = None
    if g.bound == "at_least_speedup":
        theirs = [r for r in res.rows
                  if resultcsv.process_of(r) == process and _matches(g, r, res.schema, g.peer)]
        why = _one_point(theirs, res.schema, f"the {g.peer} rows")
        if not theirs or why or len(theirs) != len(run):
            return Judged(g, NO_ROW, **timed, **base, note=why or (
                f"no {g.peer} row timed in the same run" if not theirs else
                f"{len(theirs)} {g.peer} rows in the run for its {len(run)} of ours: not "
                "paired"))
        peer = theirs[-1]
        peer_us = _positive(peer, res.schema.time)
        if peer_us is None:
            return Judged(g, NO_ROW, **timed, **base, note=f"the {g.peer} row has no time")
        figure = peer_us / t
        noise = math.hypot(noise, (resultcsv.cell(peer, res.schema.noise) or 0.0) / 100)
        if peer.get("status") != "ok":
            return Judged(g, NO_VERDICT, figure=figure, noise_pct=100 * noise, time_us=t,
                          peer_us=peer_us, **base, note="; ".join(
                              [*notes, f"the peer's row is {peer.get('status')}, and no speedup "
                                       "is taken against a failed row"]))
    elif g.bound == "at_most_us":
        figure = t
    else:
        col = BOUNDS[g.bound][1]
        v = _positive(row, col)
        if v is None:
            return Judged(g, NO_ROW, **timed, **base,
                          note=f"the row's {col} is not a number above zero")
        if why := _not_derived(row, col, t):
            return Judged(g, NO_VERDICT, **timed, **base, note="; ".join([*notes, why]))
        figure = 100 / v if g.bound == "at_most_floor" else v
    at_least = BOUNDS[g.bound][2]
    met = figure >= g.limit if at_least else figure <= g.limit
    return Judged(g, MET if met else MISSED, figure=figure, noise_pct=100 * noise,
                  within_noise=abs(figure / g.limit - 1) <= Z * noise, time_us=t,
                  peer_us=peer_us, **base, note="; ".join(notes))


def _not_derived(row: Mapping[str, str], col: str, t: float) -> str | None:
    """Why the row's ``col`` (``tops`` or ``pct_peak``) is not what its own flops or bytes,
    its time ``t`` (µs) and its ``peak_gbps`` give, or None where it is."""
    if col == "tops":
        inputs, want = ("flops",), lambda f: rates.tops(f, t)
    else:
        inputs, want = ("bytes", "peak_gbps"), \
            lambda b, peak: rates.pct_peak(rates.gbps(b, t), peak)
    have = [_positive(row, c) for c in inputs]
    if None in have:
        missing = ", ".join(c for c, h in zip(inputs, have, strict=True) if h is None)
        return f"its {col} cannot be checked: no {missing}"
    expect, stored = want(*have), float(row[col])
    if abs(stored / expect - 1) > DERIVED_RTOL:
        made = "flops and time" if col == "tops" else "bytes, time and peak"
        return f"its {col} ({stored:.6g}) is not what its {made} give ({expect:.6g})"
    return None


def _current(row: Mapping[str, str], schema: resultcsv.Schema,
             current: Mapping[tuple[str, str], str] | None) -> str:
    if current is None or row.get("backend") != "pycuda":
        return ""
    key = (row.get("stage", ""), schema.value(row, "variant"))
    have = row.get("kernel_hash") or row.get("kernel_hashes") or ""
    if key not in current or not have:
        return ""
    return "yes" if have == current[key] else "no"


def check_folder(folder: Path) -> None:
    """HarnessError (one line) where ``folder`` is not a folder."""
    if not Path(folder).is_dir():
        raise HarnessError(f"{folder} is a file, not a results folder" if Path(folder).exists()
                           else f"no such results folder: {folder}")


def judge_all(goals: Sequence[Goal], folder: Path,
              current: Mapping[tuple[str, str], str] | None = None) -> list[Judged]:
    """Every goal judged from ``folder``'s rows, each file read once; HarnessError where
    the folder is not one or a goal's file cannot be read."""
    check_folder(folder)
    cache: dict[Path, resultcsv.Results] = {}
    return [judge(g, folder, current, cache) for g in goals]


def table(judged: Sequence[Judged]) -> str:
    """The goals as a Markdown table: the goal, its point, the figure and bound, the
    verdict, the run behind it and whether its kernel is at the current source."""
    lines = ["| goal | point | figure | bound | verdict | time µs | run | current source |",
             "|---|---|---|---|---|---|---|---|"]
    for j in judged:
        g = j.goal
        bound = f"{'≥' if BOUNDS[g.bound][2] else '≤'} {g.limit:g}{BOUNDS[g.bound][0]}"
        if g.peer:
            bound = bound.replace("the peer", g.peer)
        verdict = j.verdict + (" (within the noise)" if j.within_noise else "")
        if j.note:
            verdict += f": {j.note}"
        time = "-" if j.time_us is None else f"{j.time_us:.2f}" + (
            f" vs {j.peer_us:.2f}" if j.peer_us is not None else "")
        noise = "" if j.noise_pct is None or j.figure is None else f" ±{j.noise_pct:.2f} %"
        run = j.git_sha[:7] + (f" {j.timestamp[:10]}" if j.timestamp else "") if j.git_sha \
            else "-"
        lines.append(f"| {g.name} | {g.where()} | {j.figure_text()}{noise} | {bound} | "
                     f"{verdict.replace('|', '/')} | {time} | {run} | {j.current or '-'} |")
    return "\n".join(lines) + "\n"
