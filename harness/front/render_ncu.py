"""``harness profile --stalls``'s tables: where a kernel's warps wait, by stall reason and by
SASS instruction (ncu's source page, :mod:`harness.tools.ncu_source`)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from harness.tools.ncu_source import SourcePage


def stall_reasons(page: SourcePage, most: int = 10) -> Table:
    """``harness profile --stalls``: a kernel's warp-state samples by reason, commonest
    first (``selected`` is a warp issuing; every other reason, one waiting)."""
    total = page.samples
    t = Table("stall reason", "samples", "% of samples", title=escape(page.kernel))
    for reason, n in page.stall_totals().most_common(most):
        if n:
            t.add_row(escape(reason), str(n), _share(n, total))
    return t


def stall_instructions(page: SourcePage, most: int = 20) -> Table:
    """``harness profile --stalls``: the instructions that drew the most samples, with how
    often a warp executed each and its main stall reasons."""
    total = page.samples
    t = Table("#", "SASS", "executed", "samples", "%", "main stalls",
              title=f"{escape(page.kernel)}: where the samples fall")
    for i in page.top(most):
        if not i.samples:
            break
        t.add_row(str(i.index), escape(i.source), str(i.executed), str(i.samples),
                  _share(i.samples, total),
                  escape(", ".join(f"{k} {v}" for k, v in i.main_stalls())))
    return t


def _share(n: int, total: int) -> str:
    """n as a percentage of the kernel's samples, '-' where it drew none."""
    return f"{100 * n / total:.1f}" if total else "-"
