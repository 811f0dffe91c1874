"""``harness goals``: targets declared in a TOML file, each judged from the committed rows.

A goal names one point (the stage or pipeline, its variant, backend and launch, and the
point's sizes and parameters) in one results CSV under the results folder, or in the first
of several that has rows of it, and one bound on what that point's row shows:

* ``at_least_tops``, ``at_least_pct_peak``: the row's own rate columns;
* ``at_most_floor``: the row's time over its byte floor's (the ``bytes`` it counts at the
  ``peak_gbps`` it keeps, so ``100 / pct_peak``);
* ``at_most_us``: the row's time;
* ``peer`` with ``at_least_speedup``: the peer's time over ours, the peer's row taken from the
  same run (the same command and commit) at the same point, never from another process.

The row judged is the newest that matches; where its run measured the point several times
(``bench --repeats``), the run's median row. A figure within three standard errors of its
bound (the rows' noise, both rows' for a peer) is said to be within the noise. Nothing here
is typed: a goal's figure is always read from the row, so a file committed with a number in
it is a bound, never a result.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import BadInput, HarnessError
from harness.results import resultcsv

#: The bounds a goal may set, each with what it reads and which way it must go.
BOUNDS = {
    "at_least_tops": (" TOPS", "tops", True),
    "at_least_pct_peak": (" % of peak", "pct_peak", True),
    "at_most_floor": ("x its floor", "", False),
    "at_most_us": (" µs", "", False),
    "at_least_speedup": ("x the peer's speed", "", True),
}
_KEYS = {"name", "file", "stage", "variant", "backend", "launch", "point", "peer", *BOUNDS}
#: Verdicts.
MET, MISSED, NO_ROW = "met", "missed", "no row"
#: Standard errors on each side within which a figure is not told from its bound.
Z = 3.0


@dataclass(frozen=True)
class Goal:
    """One declared target: where its row is and the bound it must meet."""

    name: str
    #: The results CSVs under the folder that may hold the point's rows, in order.
    files: tuple[str, ...]
    bound: str  #: a key of :data:`BOUNDS`
    limit: float
    stage: str = ""
    variant: str = ""
    backend: str = "pycuda"
    launch: str = "stream"
    peer: str = ""
    point: Mapping[str, Any] = field(default_factory=dict)

    def where(self) -> str:
        """The point in one line: ``variant batch=8192 out_f=18944 (graph)``."""
        sizes = " ".join(f"{k}={_text(v)}" for k, v in self.point.items())
        launch = f" ({self.launch})" if self.launch != "stream" else ""
        return f"{self.variant or self.stage} {sizes}{launch}".strip()


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


def _text(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def load(path: Path) -> list[Goal]:
    """The goals of a TOML file (``[[goal]]`` tables); BadInput naming the file and goal
    for anything that is not one."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise BadInput("reading a goals file needs Python 3.11 (tomllib) or the tomli "
                           "package") from None
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"no such goals file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read the goals file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path} is not TOML: {exc}") from None
    extra = sorted(set(data) - {"goal"})
    if extra:
        raise BadInput(f"{path}: only [[goal]] tables, not {', '.join(extra)}")
    tables = data.get("goal", [])
    if not isinstance(tables, list) or not tables:
        raise BadInput(f"{path}: no [[goal]] tables")
    goals = [_goal(t, f"{path}, goal {i}") for i, t in enumerate(tables, start=1)]
    seen: set[str] = set()
    for g in goals:
        if g.name in seen:
            raise BadInput(f"{path}: two goals named {g.name!r}")
        seen.add(g.name)
    return goals


def _goal(t: Mapping[str, Any], where: str) -> Goal:
    unknown = sorted(set(t) - _KEYS)
    if unknown:
        raise BadInput(f"{where}: unknown key(s) {', '.join(unknown)} (keys: "
                       f"{', '.join(sorted(_KEYS))})")
    if not isinstance(t.get("name"), str) or not t["name"].strip():
        raise BadInput(f"{where}: name must be a non-empty string")
    files = [t.get("file")] if isinstance(t.get("file"), str) else t.get("file")
    if not isinstance(files, list) or not files \
            or any(not isinstance(f, str) or not f.strip() for f in files):
        raise BadInput(f"{where} ({t['name']}): file must be a non-empty string, or a list "
                       "of them")
    for key in ("stage", "variant", "backend", "launch", "peer"):
        if key in t and not isinstance(t[key], str):
            raise BadInput(f"{where} ({t['name']}): {key} must be a string")
    bounds = [k for k in BOUNDS if k in t]
    if len(bounds) != 1:
        raise BadInput(f"{where} ({t['name']}): exactly one bound of "
                       f"{', '.join(BOUNDS)}, not {len(bounds)}")
    bound = bounds[0]
    limit = t[bound]
    if isinstance(limit, bool) or not isinstance(limit, int | float) \
            or not math.isfinite(limit) or limit <= 0:
        raise BadInput(f"{where} ({t['name']}): {bound} must be a positive number")
    if (bound == "at_least_speedup") != bool(t.get("peer")):
        raise BadInput(f"{where} ({t['name']}): a peer goes with at_least_speedup, and "
                       "at_least_speedup with a peer")
    point = t.get("point", {})
    if not isinstance(point, dict) or any(
            isinstance(v, bool) or not isinstance(v, int | float | str) for v in point.values()):
        raise BadInput(f"{where} ({t['name']}): point must be a table of numbers or strings")
    if any(Path(f).is_absolute() or ".." in Path(f).parts for f in files):
        raise BadInput(f"{where} ({t['name']}): file is a path inside the results folder")
    return Goal(name=t["name"].strip(), files=tuple(files), bound=bound, limit=float(limit),
                stage=t.get("stage", ""), variant=t.get("variant", ""),
                backend=t.get("backend", "pycuda"), launch=t.get("launch", "stream"),
                peer=t.get("peer", ""), point=dict(point))


def _same(want: Any, have: str) -> bool:
    """A goal's point value against a cell: numbers by value (4 is 4.0), text as text."""
    if isinstance(want, str):
        return want == have
    try:
        return float(have) == float(want)
    except ValueError:
        return False


def _matches(g: Goal, row: Mapping[str, str], schema: resultcsv.Schema, backend: str) -> bool:
    if row.get("backend") != backend:
        return False
    if g.stage and row.get("stage") != g.stage:
        return False
    if g.variant and schema.value(row, "variant") != g.variant:
        return False
    if "launch" in schema.key and schema.value(row, "launch") != g.launch:
        return False
    try:
        params = json.loads(row.get("params") or "{}")
    except ValueError:
        params = {}
    for key, want in g.point.items():
        if key in row:
            have = row[key]
        elif isinstance(params, dict) and key in params:
            have = str(params[key])
        else:
            return False
        if not _same(want, have):
            return False
    return True


def _pick(rows: Sequence[dict[str, str]], run: tuple[str, str] | None = None
          ) -> tuple[dict[str, str] | None, int]:
    """The row a goal reads among ``rows`` (of one point and backend): those of ``run``
    (commit, command) where given, else of the newest row's run; of several (repeats), the
    median by time. Returns it and how many rows its run had."""
    if not rows:
        return None, 0
    if run is None:
        run = resultcsv.run_of(max(rows, key=lambda r: r.get("timestamp", "")))
    same = [r for r in rows if resultcsv.run_of(r) == run]
    if not same:
        return None, 0
    timed = [r for r in same if r.get("status") == "ok"] or same
    timed.sort(key=lambda r: resultcsv.cell(r, _time_col(r)) or math.inf)
    return timed[(len(timed) - 1) // 2], len(same)


def _time_col(row: Mapping[str, str]) -> str:
    return "median_us" if "median_us" in row else "total_us"


def _noise_col(row: Mapping[str, str]) -> str:
    return "noise_pct" if "median_us" in row else "total_noise_pct"


def judge(g: Goal, folder: Path, current: Mapping[tuple[str, str], str] | None = None,
          cache: dict[Path, resultcsv.Results] | None = None) -> Judged:
    """What the rows under ``folder`` show for goal ``g`` (``current``: each (stage,
    variant)'s kernel hash at this source, to say whether the row was timed at it);
    HarnessError where the goal's file is there but cannot be read."""
    cache = {} if cache is None else cache
    found = [p for p in (Path(folder) / f for f in g.files) if p.is_file()]
    if not found:
        return Judged(g, NO_ROW, note=f"no {' or '.join(g.files)} in {folder}")
    res, ours = None, []
    for path in found:  # the first file with rows of the point
        if path not in cache:
            cache[path] = resultcsv.read(path)
        res = cache[path]
        ours = [r for r in res.rows if _matches(g, r, res.schema, g.backend)]
        if ours:
            break
    row, runs = _pick(ours)
    if row is None or res is None:
        return Judged(g, NO_ROW, note=f"no {g.backend} row at this point in "
                      f"{' or '.join(g.files)}")
    base = {"git_sha": row.get("git_sha", ""), "timestamp": row.get("timestamp", ""),
            "current": _current(row, res.schema, current)}
    repeats = f"the median of its run's {runs} rows; " if runs > 1 else ""
    if row.get("status") != "ok":
        return Judged(g, MISSED, **base, note=f"{repeats}the row is {row.get('status')}: "
                      f"{row.get('reason') or 'no reason given'}")
    t = float(row[_time_col(row)])
    noise = (resultcsv.cell(row, _noise_col(row)) or 0.0) / 100
    peer_us = None
    if g.bound == "at_least_speedup":
        theirs = [r for r in res.rows if _matches(g, r, res.schema, g.peer)]
        prow, _ = _pick(theirs, resultcsv.run_of(row))
        if prow is None or resultcsv.cell(prow, _time_col(prow)) is None:
            return Judged(g, NO_ROW, time_us=t, noise_pct=100 * noise, **base,
                          note=f"no {g.peer} row timed in the same run")
        peer_us = float(prow[_time_col(prow)])
        figure = peer_us / t
        noise = math.hypot(noise, (resultcsv.cell(prow, _noise_col(prow)) or 0.0) / 100)
        if prow.get("status") != "ok":
            repeats += f"the peer's row is {prow.get('status')}; "
    elif g.bound == "at_most_us":
        figure = t
    elif g.bound == "at_most_floor":
        pct = resultcsv.cell(row, "pct_peak")
        if not pct:
            return Judged(g, NO_ROW, **base, note="the row has no % of peak (no byte floor)")
        figure = 100 / pct
    else:
        col = BOUNDS[g.bound][1]
        v = resultcsv.cell(row, col)
        if v is None:
            return Judged(g, NO_ROW, **base, note=f"the row has no {col}")
        figure = v
    at_least = BOUNDS[g.bound][2]
    met = figure >= g.limit if at_least else figure <= g.limit
    within = abs(figure / g.limit - 1) <= Z * noise
    return Judged(g, MET if met else MISSED, figure=figure, noise_pct=100 * noise,
                  within_noise=within, time_us=t, peer_us=peer_us, **base,
                  note=repeats.rstrip("; "))


def _current(row: Mapping[str, str], schema: resultcsv.Schema,
             current: Mapping[tuple[str, str], str] | None) -> str:
    if current is None or row.get("backend") != "pycuda":
        return ""
    key = (row.get("stage", ""), schema.value(row, "variant"))
    have = row.get("kernel_hash") or row.get("kernel_hashes") or ""
    if key not in current or not have:
        return ""
    return "yes" if have == current[key] else "no"


def judge_all(goals: Sequence[Goal], folder: Path,
              current: Mapping[tuple[str, str], str] | None = None) -> list[Judged]:
    """Every goal judged from ``folder``'s rows, each file read once; HarnessError where
    the folder is not there or a goal's file cannot be read."""
    if not Path(folder).is_dir():
        raise HarnessError(f"no such results folder: {folder}")
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
                     f"{verdict} | {time} | {run} | {j.current or '-'} |")
    return "\n".join(lines) + "\n"
