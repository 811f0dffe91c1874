"""How the CLI shows the commands over result files: compare's verdicts and what fails its
gate, best's builds, fit's lines (rich tables and plain lines; nothing printed here)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from harness.results import best as bests
from harness.results import compare
from harness.results import fit as fits


def verdicts(rep: compare.CompareReport, explain: bool = False) -> Table:
    """``harness compare``: each row's times, change, noise and verdict (and why)."""
    t = Table("stage", "backend", "variant", "point", "launch", "old µs", "new µs", "change",
              "noise", "verdict", *(("reason",) if explain else ()))

    def f(v: float | None, fmt: str, unit: str = "") -> str:
        return "-" if v is None else format(v, fmt) + unit

    for v in rep.rows:
        k = v.point
        # A time that can hold host time (the reason says whose): said without --explain too.
        held = " (host time)" if v.host_time else ""
        t.add_row(k["stage"], k["backend"], k["variant"], v.label(), k.get("launch", ""),
                  f(v.old_us, ".2f"), f(v.new_us, ".2f"), f(v.change_pct, "+.1f", "%"),
                  f(v.noise_pct, ".1f", "%"), v.verdict + held,
                  *((escape(v.reason),) if explain else ()))
    return t


def counts(rep: compare.CompareReport) -> str:
    """``3 faster, 10 same, 0 slower, 1 ambiguous, 0 new, 0 gone, 0 failed``."""
    return ", ".join(f"{n} {k}" for k, n in rep.counts().items())


def regressions(rows: Sequence[compare.RowVerdict], most: int = 10) -> str:
    """What fails the gate, a line each (the first ``most``): the row, its verdict and its
    change (``--explain`` gives the reasons)."""
    lines = [f"{len(rows)} regression(s):"]
    for r in rows[:most]:
        who = " ".join(x for x in (r.point.get("stage", ""), r.point.get("backend", ""),
                                   r.point.get("variant", "")) if x)
        change = f" {r.change_pct:+.1f} %" if r.change_pct is not None else ""
        status = f" ({r.old_status} before, {r.new_status or 'none'} now)" \
            if r.verdict in ("failed", "gone") else ""
        lines.append(f"  {who} {r.label()}: {r.verdict}{change}{status}")
    if len(rows) > most:
        lines.append(f"  ... and {len(rows) - most} more (--explain lists every row)")
    return "\n".join(lines)


def best_builds(points: Sequence[bests.PointBest], explain: bool = False) -> Table:
    """``harness best``: each point's builds, the fastest first, against it."""
    t = Table("point", "commit", "build", "median µs", "noise", "vs best", "verdict",
              *(("reason",) if explain else ()))
    for p in points:
        for i, b in enumerate(p.builds):
            t.add_row(p.label() if i == 0 else "", p.git_sha if i == 0 else "",
                      escape(b.variant), f"{b.median_us:.2f}", f"{b.noise_pct:.1f}%",
                      "-" if i == 0 else f"{b.change_pct:+.1f}%", b.verdict,
                      *((escape(b.reason),) if explain else ()))
    return t


def fit_lines(lines: Sequence[fits.Line], axis: str) -> Table:
    """``harness fit``: each build's rows along the axis, the line's value there, the
    residual, and the fixed part's share."""
    t = Table("build", "point", "commit", axis, "median µs", "line µs", "residual",
              "fixed share")
    for ln in lines:
        for i, s in enumerate(ln.samples):
            t.add_row(escape(ln.build) if i == 0 else "", ln.where() if i == 0 else "",
                      ln.git_sha if i == 0 else "", f"{s.x:g}", f"{s.median_us:.2f}",
                      f"{s.fitted_us:.2f}", f"{s.residual_pct:+.1f}%",
                      fits.share_text(ln.fixed_share_pct(s.x)))
    return t
