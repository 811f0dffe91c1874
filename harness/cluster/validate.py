"""``harness validate --cluster``: every target variant's validation cases on a worker of
the cluster, the ledger written by the driver alone.

The unit of work is one target variant: all its cases (families, cases, seeds), run by the
engine's own loop (:func:`harness.engine.validate.validate`) on the worker's backend. The
units are planned as :func:`harness.engine.validate.validation` plans them; a unit whose
worker died past the retries is a failed case saying so. With ``record``, the ledger is
checked before any work, and each unit's row, naming the GPU that ran it, appended as it
lands (``ledger.Recorder``: a local validation beside the cluster shares the file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.cluster import connect
from harness.cluster.connect import Session
from harness.cluster.driver import Outcome, check_joined, greet, hand_out, per_worker
from harness.cluster.options import ClusterSpec
from harness.cluster.worker import Setup, ValidationTask, run_validation
from harness.contract import registry
from harness.contract.registry import Registry
from harness.engine.targets import (
    check_families,
    check_options,
    resolve,
)
from harness.engine.validate import (
    CaseResult,
    Unit,
    ValidationReport,
    ValidationSummary,
    check_recordable,
    report,
    units,
)
from harness.results import ledger, provenance


@dataclass(frozen=True)
class _Unit:
    """One target variant to validate, and what its ledger row names."""

    task: ValidationTask
    kernel_hash: str
    #: The plain run's unit it was made from.
    unit: Unit


def _units(reg: Registry, names: Sequence[str] | None, variant: str,
           families: Sequence[str] | None, seeds: int, seed: int,
           options: Mapping[str, str]) -> list[_Unit]:
    """Every target variant ``harness validate`` would validate, in its order (the plain
    run's :func:`harness.engine.validate.units`), each a worker's task."""
    tg = resolve(reg, names, with_pipelines=True)
    check_families(tg.all, families or [])
    check_options(tg.all, options)
    return [_Unit(ValidationTask(i, u.target.name, u.variant, u.families, seeds, seed,
                                 u.overrides), u.kernel_hash, u)
            for i, u in enumerate(units(reg, tg, variant, families, options))]


def validate_targets(reg: Registry, names: Sequence[str] | None, *, cluster: ClusterSpec,
                     variant: str = "all", families: Sequence[str] | None = None,
                     seeds: int = 3, seed: int = 0, options: Mapping[str, str] | None = None,
                     record: bool = False, backend: str = "pycuda",
                     session: Session | None = None) -> ValidationReport:
    """``harness validate --cluster``: as :func:`harness.engine.validate.validate_targets`,
    each target variant on a worker (``backend``: the GPU's, or ``numpy`` to try the flow
    without one); with ``record``, a ledger row per target variant, naming its GPU."""
    units = _units(reg, names, variant, families, seeds, seed, options or {})
    if record:
        check_recordable([u.unit for u in units])
    book = ledger.Recorder() if record else None  # checked now; a row appended as it lands
    s: Session | None = None
    try:
        s = session or connect.open_session(cluster, backend)
        setup = Setup(backend, command=provenance.command_line(),
                      no_external=not registry.external_allowed(), calibrate=False)
        idents = greet(s.client, setup, cluster.limit_s)
        done: dict[int, ValidationSummary] = {}
        for out in hand_out(s.client, run_validation, (setup,), [u.task for u in units],
                            cluster.retries, per_worker(s.client), cluster.limit_s):
            if out.done is not None and out.done.ident.address not in idents:
                check_joined(s.client, idents, out.done.ident)  # a late or new worker
            u = units[out.task.index]
            done[u.task.index] = _summary(u, out)
            device = _device(out, idents)
            # As it lands (an interrupt keeps it); none for a unit of another source: no
            # validation of this one ran.
            if book is not None and device is not None and not _foreign(u, out):
                book.write(done[u.task.index].ledger_row(device, seeds))
        sums = [done[u.task.index] for u in units]
    finally:
        if s is not None and session is None:
            s.close()
    return report(sums, book)


def _summary(u: _Unit, out: Outcome) -> ValidationSummary:
    """A unit's summary from its outcome: its cases, or one failed case where it got no
    result or was built from another source than the driver's."""
    cases = out.done.cases if out.done is not None else [_lost(u.task, out.error)]
    if _foreign(u, out):
        cases = [_lost(u.task, f"worker {out.done.ident.worker} on {out.done.ident.host} "
                               f"built {out.done.kernel_hash}, where this source hashes "
                               f"{u.kernel_hash}: its plugins or kernels differ from the "
                               "driver's")]
    return ValidationSummary(u.task.target, u.task.variant.name, u.kernel_hash,
                             list(u.task.families), cases)


def _foreign(u: _Unit, out: Outcome) -> bool:
    """Whether the worker built the unit from another source than the driver's (its hash
    differs): then no validation of this source ran."""
    return out.done is not None and out.done.kernel_hash != u.kernel_hash


def _lost(task: ValidationTask, why: str) -> CaseResult:
    """The one failed case of a unit that got no result (or one of another source)."""
    return CaseResult(task.target, task.variant.name, ",".join(task.families), 0, {}, (),
                      (f"not validated: {why}",))


def _device(out: Outcome, idents: Mapping[str, Any]) -> Any:
    """The GPU a unit ran (or last died) on, for its ledger row; None when unknown."""
    if out.done is not None:
        return out.done.ident.device
    ident = idents.get(out.died_on)
    return ident.device if ident is not None else None
