"""``harness goals``: performance targets declared in a TOML file (``[[goal]]`` tables).

A goal names one point (the stage or pipeline, its variant, backend and launch, and the
point's sizes and parameters; a cold row unless the point names ``l2``) in one results CSV
under a results folder, or in the first of several that has rows of it (a goal may name
several variants: the first variant with rows in any of its files is judged, an earlier form
of the measurement standing in where the first has none, named in the verdict), and one
bound on what that point's row shows:

* ``at_least_tops``, ``at_least_pct_peak``: the row's own rate columns;
* ``at_most_floor``: the row's time over its byte floor's (the ``bytes`` it counts at the
  ``peak_gbps`` it keeps, so ``100 / pct_peak``);
* ``at_most_us``: the row's time;
* ``peer`` with ``at_least_speedup``: the peer's time over ours, the peer's row taken from
  the same run and process at the same point.

A number in the file is a bound, never a result: :mod:`.goal_verdicts` reads every figure
from a row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import BadInput

#: The bounds a goal may set, each with what it reads and which way it must go.
BOUNDS = {
    "at_least_tops": (" TOPS", "tops", True),
    "at_least_pct_peak": (" % of peak", "pct_peak", True),
    "at_most_floor": ("x its floor", "pct_peak", False),  # 100 / pct_peak
    "at_most_us": (" µs", "", False),
    "at_least_speedup": ("x the peer's speed", "", True),
}
_KEYS = {"name", "file", "stage", "variant", "backend", "launch", "point", "peer", *BOUNDS}


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
    #: Variants after ``variant`` whose rows stand in where it has none at the point (an
    #: earlier form of the measurement, named in the verdict's point), in order.
    fallbacks: tuple[str, ...] = ()
    backend: str = "pycuda"
    #: A stage row's launch ("stream" where not given); a pipeline row has none.
    launch: str = ""
    peer: str = ""
    point: Mapping[str, Any] = field(default_factory=dict)

    def where(self) -> str:
        """The point in one line: ``variant batch=8192 out_f=18944 (graph)``."""
        parts = [self.variant or self.stage, *(f"{k}={_text(v)}" for k, v in self.point.items())]
        launch = f"({self.launch})" if self.launch not in ("", "stream") else ""
        return " ".join(p for p in (*parts, launch) if p)


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
                           "package (a dependency on Python 3.10)") from None
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


def _goal(t: Any, where: str) -> Goal:
    if not isinstance(t, dict):
        raise BadInput(f"{where} is not a table ([[goal]] with keys under it)")
    unknown = sorted(set(t) - _KEYS)
    if unknown:
        raise BadInput(f"{where}: unknown key(s) {', '.join(unknown)} (keys: "
                       f"{', '.join(sorted(_KEYS))})")
    if not isinstance(t.get("name"), str) or not t["name"].strip() or "|" in t["name"]:
        raise BadInput(f"{where}: name must be a non-empty string without '|' (a table's "
                       "cell)")
    files = [t.get("file")] if isinstance(t.get("file"), str) else t.get("file")
    if not isinstance(files, list) or not files \
            or any(not isinstance(f, str) or not f.strip() for f in files):
        raise BadInput(f"{where} ({t['name']}): file must be a non-empty string, or a list "
                       "of them")
    for key in ("stage", "backend", "launch", "peer"):
        if key in t and not isinstance(t[key], str):
            raise BadInput(f"{where} ({t['name']}): {key} must be a string")
    variants = t.get("variant", "")
    if isinstance(variants, str) and (variants == "" or variants.strip()):
        variants = [variants]
    elif not isinstance(variants, list) or not variants or len(set(variants)) != len(variants) \
            or any(not isinstance(v, str) or not v.strip() for v in variants):
        raise BadInput(f"{where} ({t['name']}): variant must be a string, or a list of "
                       "distinct ones (the first with rows at the point is judged)")
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
    if t.get("peer") and t["peer"] == t.get("backend", "pycuda"):
        raise BadInput(f"{where} ({t['name']}): the peer is the goal's own backend")
    point = t.get("point", {})
    if not isinstance(point, dict) or any(
            isinstance(v, bool) or not isinstance(v, int | float | str) for v in point.values()):
        raise BadInput(f"{where} ({t['name']}): point must be a table of numbers or strings")
    if any(Path(f).is_absolute() or ".." in Path(f).parts for f in files):
        raise BadInput(f"{where} ({t['name']}): file is a path inside the results folder")
    return Goal(name=t["name"].strip(), files=tuple(files), bound=bound, limit=float(limit),
                stage=t.get("stage", ""), variant=variants[0].strip(),
                fallbacks=tuple(v.strip() for v in variants[1:]),
                backend=t.get("backend", "pycuda"), launch=t.get("launch", ""),
                peer=t.get("peer", ""), point=dict(point))
