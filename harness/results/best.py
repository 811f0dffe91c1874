"""``harness best``: in one results CSV, the fastest build of each point, and whether the
rows show that it is the fastest.

A tuning sweep (``bench --define``) or a run of several variants writes a row per build at
each point. Only rows that one command measured in one process are set against each other
(the same ``command`` and ``git_sha``, on a cluster the same worker; a command run twice and
appended counts as two runs), because rows from different processes differ by more than
their noise (README, "How a time is measured"). At each point the ``ok`` rows of our own
kernels (``pycuda``) are ranked by median. The fastest is then set against each of the others
by the rule of ``harness compare`` (:mod:`.verdict`):

* ``slower`` means that build is clearly slower than the best;
* ``same`` and ``ambiguous`` mean these rows do not show which of the two is faster.

The first build measured at a point without repeats may have paid for being first (an
order effect seen on the H200). So a point whose fastest build was not the first one
measured says which was, when its rows had fewer repeats than the timings the point took:
its builds, and the peer rows timed beside them, which rotate with them (``bench
--repeats``, read back from the reason).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.results import compare, resultcsv
from harness.results.verdict import SLOWER, decide

#: The verdict of the fastest build itself.
BEST = "best"
_REPEATS = re.compile(r"median of (\d+) repeats")
#: The columns of a point as compare matches rows, less the build (``variant``) and the
#: backend; a column that came later is read with the value rows had before it.
_POINT = tuple(c for c in resultcsv.STAGE.key if c not in ("backend", "variant"))


@dataclass(frozen=True)
class Build:
    """One build's row at a point, and how it fares against the fastest."""

    variant: str
    median_us: float
    noise_pct: float
    verdict: str
    change_pct: float
    reason: str


@dataclass(frozen=True)
class PointBest:
    """A point of one run: its builds, the fastest first."""

    point: dict[str, str]
    git_sha: str
    command: str
    builds: tuple[Build, ...]
    #: The build whose row was written first at this point (measured first, without
    #: repeats).
    first: str
    #: The fewest repeats any build's row had (1: measured once).
    repeats: int
    #: The peer rows (torch, ...) the run timed at this point beside the builds.
    peers: int = 0

    @property
    def clear(self) -> bool:
        """Whether every other build is clearly slower than the fastest."""
        return all(b.verdict == SLOWER for b in self.builds[1:])

    def label(self) -> str:
        """The point in a few words: ``int_gemm batch=8192 in_f=3584 out_f=18944``."""
        p = self.point
        words = [p["stage"], *(f"{k}={p[k]}" for k in ("batch", "in_f", "out_f") if p.get(k))]
        if p.get("params") not in ("", "{}", None):
            words.append(p["params"])
        return " ".join(words)

    def summary(self) -> str:
        """One line: the best build and whether the rows show it."""
        best = self.builds[0]
        if self.clear:
            said = f"{best.variant} is the fastest, clearly"
        else:
            close = [b.variant for b in self.builds[1:] if b.verdict != SLOWER]
            said = f"{best.variant} is the fastest, but not clearly ahead of {', '.join(close)}"
        if self.repeats < len(self.builds) + self.peers and self.first != best.variant:
            # The build measured first may have paid for it: the order can favour the rest.
            said += (f" (measured {'once' if self.repeats == 1 else f'{self.repeats} times'}, "
                     f"{self.first} first: an order effect is not ruled out)")
        return said


def run(path: Path, preset: str = "default", threshold_pct: float = 2.0,
        z: float | None = None) -> list[PointBest]:
    """Every point of ``path`` that one command measured with two builds or more, the
    fastest build first (see the module's docstring); HarnessError (one line) for a file
    ``harness compare`` could not read, a pipeline CSV, or one with no such point."""
    p = compare.evidence(preset, threshold_pct, z)
    res = resultcsv.read(path)
    if res.schema is not resultcsv.STAGE:
        raise HarnessError(f"{path} holds pipeline rows: harness best ranks a stage's builds")
    groups: dict[tuple[object, ...], list[Mapping[str, str]]] = {}
    builds: dict[tuple[object, ...], set[str]] = {}  # the builds of each run's open group
    count: dict[tuple[object, ...], int] = {}
    peers: dict[tuple[object, ...], int] = {}  # a run's peer rows at a point, all its groups
    for r in res.rows:
        # one command's rows from two workers are two processes' rows, not one run's
        run = (*(resultcsv.STAGE.value(r, c) for c in _POINT), *resultcsv.process_of(r))
        if r.get("backend") != "pycuda":
            peers[run] = peers.get(run, 0) + 1
            continue
        # One command appended again (a rerun, a --resume cut mid-point): a build met a
        # second time (whatever its status) starts the next run's group, so no build is
        # ranked beside another run's.
        if r["variant"] in builds.setdefault(run, set()):
            count[run] = count.get(run, 0) + 1
            builds[run] = set()
        builds[run].add(r["variant"])
        if r["status"] == "ok":
            groups.setdefault((*run, count.get(run, 0)), []).append(r)
    out = []
    for key, rows in groups.items():
        if len({r["variant"] for r in rows}) < 2:
            continue
        ranked = sorted(rows, key=lambda r: float(r["median_us"]))
        best = compare.side(res.schema, dict(ranked[0]))
        builds = [Build(ranked[0]["variant"], best.time_us, 100 * best.noise, BEST, 0.0, "")]
        for r in ranked[1:]:
            s = compare.side(res.schema, dict(r))
            d = decide(best, s, p, threshold_pct / 100)
            builds.append(Build(r["variant"], s.time_us, 100 * s.noise, d.verdict,
                                d.change_pct, d.reason))
        sha, command = resultcsv.run_of(rows[0])
        run = key[:-1]
        # A command appended again has its peers again: shared out over its groups alike.
        each = -(-peers.get(run, 0) // (count.get(run, 0) + 1))
        out.append(PointBest(dict(zip(_POINT, key[:len(_POINT)], strict=True)), sha,
                             command, tuple(builds), rows[0]["variant"],
                             min(_repeats(r) for r in rows), each))
    if not out:
        raise HarnessError(f"no point of {path} has two builds that one command measured "
                           "(ok pycuda rows of one command and commit)")
    return out


def _repeats(r: Mapping[str, str]) -> int:
    m = _REPEATS.search(r.get("reason") or "")
    return int(m.group(1)) if m else 1


def rank_text(points: Sequence[PointBest]) -> list[str]:
    """A line per point: where, which run, and its :meth:`PointBest.summary`."""
    return [f"{p.label()} ({p.git_sha}): {p.summary()}" for p in points]
