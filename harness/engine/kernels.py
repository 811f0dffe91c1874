"""What each kernel variant is at its current source, with no GPU: what nvcc makes of it
(``harness check``) and whether a GPU validation vouches for it (``harness ledger``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.contract.kernel import KernelResources, nvcc_report
from harness.contract.registry import Registry
from harness.errors import CompileError
from harness.results import ledger


@dataclass(frozen=True)
class Compiled:
    """One stage variant through nvcc: its kernels' resources, or why it did not compile."""

    stage: str
    variant: str
    resources: list[KernelResources]
    error: CompileError | None = None


def check(reg: Registry, names: Sequence[str] | None, arch: str = "sm_90") -> list[Compiled]:
    """Compile every variant of the named stages (default: all) for ``arch``; a variant
    that does not compile is reported and the others still run."""
    out = []
    for st in reg.select(names):
        for v in st.variants:
            try:
                out.append(Compiled(st.name, v.name, nvcc_report(st, v, arch)))
            except CompileError as exc:
                out.append(Compiled(st.name, v.name, [], exc))
    return out


@dataclass(frozen=True)
class LedgerReport:
    """Every kernel variant's (and pipeline's) validation record at its current source."""

    statuses: list[ledger.LedgerStatus]
    #: Plugins that failed to load (their kernels cannot be checked).
    broken: int

    @property
    def missing(self) -> list[ledger.LedgerStatus]:
        """The variants without a passing GPU validation at their current source."""
        return [s for s in self.statuses if not s.ok]

    @property
    def failure(self) -> str | None:
        """What fails ``harness ledger --check``, or None."""
        if self.missing:
            return (f"{len(self.missing)} kernel variant(s) without a passing GPU "
                    "validation at their current source")
        if self.broken:
            return f"{self.broken} plugin(s) failed to load"
        return None


def ledger_report(reg: Registry, path: Path | None = None) -> LedgerReport:
    """The ledger status of every stage variant and pipeline (``path``: the ledger CSV,
    default ``statistics/validation_ledger.csv``)."""
    status = ledger.check(reg.select(None), ledger.read(path),
                          [reg.pipelines[n] for n in sorted(reg.pipelines)], reg.stages)
    return LedgerReport(status, len(reg.problems))
