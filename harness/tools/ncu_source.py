"""Nsight Compute's source page: each SASS instruction of a profiled kernel with its
execution count and its warp-state samples by stall reason, and where a kernel's warps wait.

ncu samples every warp's state at a fixed interval (the WarpStateStats and SourceCounters
sections); the source page (``ncu --import REPORT --page source --csv --print-source sass``)
lists the samples each instruction drew, split by the reason the warp was not issuing
(``stall_long_sb``: a wait on a memory load or barrier; ``stall_barrier``: a CTA barrier;
``stall_selected``: issuing). Summed over a kernel they say what its warps spend their time
on, and the instructions that draw the most say where.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass

from harness.errors import HarnessError

#: The page's per-reason columns, ``stall_<reason>``; the ``(Not Issued)`` twins repeat them
#: without the samples of issuing warps and are left out.
_STALL = "stall_"


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction of the page: its place in the kernel (0-based), its text, how
    many times a warp executed it, the samples it drew and their stall reasons."""

    index: int
    source: str
    executed: int
    samples: int
    stalls: dict[str, int]

    def main_stalls(self, most: int = 3) -> list[tuple[str, int]]:
        """Its commonest stall reasons, most samples first (reasons with none left out)."""
        return [(k, v) for k, v in Counter(self.stalls).most_common(most) if v]


@dataclass(frozen=True)
class SourcePage:
    """A kernel's instructions as the source page lists them."""

    kernel: str
    instructions: tuple[Instruction, ...]

    @property
    def samples(self) -> int:
        """Every sample the kernel's warps drew."""
        return sum(i.samples for i in self.instructions)

    def stall_totals(self) -> Counter[str]:
        """Samples by stall reason over the whole kernel."""
        total: Counter[str] = Counter()
        for i in self.instructions:
            total.update(i.stalls)
        return total

    def top(self, most: int) -> list[Instruction]:
        """The ``most`` instructions that drew the most samples, in that order (ties in
        kernel order)."""
        return sorted(self.instructions, key=lambda i: (-i.samples, i.index))[:most]


def _int(text: str, column: str) -> int:
    """A count as the page prints it ('-' or '' for none; thousands separators dropped);
    anything else is an error, not a zero (a page whose numbers read wrong would otherwise
    show warps that never waited)."""
    text = text.replace(",", "").strip()
    if text in ("", "-"):
        return 0
    try:
        return int(text)
    except ValueError:
        raise HarnessError(f"ncu's source page has {text!r} in its column {column!r}, "
                           "not a count") from None


def quoted_rows(text: str) -> list[list[str]]:
    """The CSV records of a page ncu printed: only its quoted lines are the page's; ncu's
    own (``==PROF==``, ``==WARNING==``) may fall anywhere, between kernels too."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def parse_source_csv(text: str) -> list[SourcePage]:
    """The kernels of a source page printed as CSV: each begins with a ``"Kernel
    Name",<name>`` line, then its header line, then a line an instruction."""
    pages: list[SourcePage] = []
    kernel: str | None = None
    header: list[str] | None = None
    rows: list[Instruction] = []

    def close() -> None:
        if kernel is not None:
            pages.append(SourcePage(kernel, tuple(rows)))

    for rec in quoted_rows(text):
        if not rec:
            continue
        if rec[0] == "Kernel Name":
            close()
            kernel, header, rows = (rec[1] if len(rec) > 1 else ""), None, []
            continue
        if kernel is None:
            continue  # ncu's own lines before the first kernel
        if header is None:
            header = rec
            missing = {"Source", "# Samples", "Instructions Executed"} - set(header)
            if missing:
                raise HarnessError("ncu's source page lacks the column(s) "
                                   f"{', '.join(sorted(missing))} (was it profiled with the "
                                   "SourceCounters and WarpStateStats sections?)")
            continue
        if len(rec) != len(header):
            raise HarnessError(f"ncu's source page of {kernel} has a line of {len(rec)} "
                               f"fields under a header of {len(header)} (cut short?)")
        d = dict(zip(header, rec, strict=True))
        stalls = {h[len(_STALL):]: _int(v, h) for h, v in d.items()
                  if h.startswith(_STALL) and not h.endswith("(Not Issued)")}
        rows.append(Instruction(len(rows), d["Source"].strip(),
                                _int(d["Instructions Executed"], "Instructions Executed"),
                                _int(d["# Samples"], "# Samples"), stalls))
    close()
    if not pages:
        raise HarnessError("ncu printed no source page (no kernel matched, or it failed)")
    return pages
