"""Validation of targets against their NumPy references (the README's Semantics, validation rules).

One loop for stages and pipelines: every case (family, case, seed) of a target's variant
runs on fresh inputs through a backend, and its outputs are judged: a stage's against its
reference with the declared tolerances (plus missing outputs, mutated inputs, guard-band
damage), a pipeline's by its own ``check`` against the chained references. The logic needs
no GPU: tests use fakes that return deliberately wrong outputs, which must be rejected.
``validate_targets`` is what ``harness validate`` does: a summary per target variant, ready
for the ledger.

Past 300 lines: the cases, their judging, the loop and its summary are one reading of a
validation, which the plain and the cluster validation share (``units``, ``judge``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.contract.backend import Backend, RunResult
from harness.contract.checks import untolerated
from harness.contract.handover import input_problems, reference_problems
from harness.contract.kernel import kernel_hash
from harness.contract.registry import Registry
from harness.contract.stage import Pipeline, Point, Stage, Variant
from harness.contract.tolerance import Comparison
from harness.engine import rowcheck
from harness.engine.devices import open_gpu
from harness.engine.sticky import context_lost
from harness.engine.targets import (
    Target,
    Targets,
    check_families,
    check_options,
    parsed_options,
    resolve,
    select_variants,
)
from harness.errors import BadInput, ContextLost
from harness.results import ledger
from harness.results import provenance as meta

#: How a case's problem begins where its run lost the device context (a sticky CUDA error).
LOST = "the run lost the device context"


@dataclass(frozen=True)
class CaseResult:
    """One validation case: a stage variant on one point, family and seed."""

    stage: str
    variant: str
    family: str
    seed: int
    point: dict[str, Any]
    comparisons: tuple[Comparison, ...]
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every output matched and nothing else went wrong."""
        return not self.problems and all(c.ok for c in self.comparisons)

    def describe(self) -> str:
        """A multi-line account of the case (used on failure)."""
        pt = ", ".join(f"{k}={v}" for k, v in self.point.items())
        lines = [f"{self.stage} [{self.variant}] family={self.family} seed={self.seed} {pt}"]
        lines += [f"  {p}" for p in self.problems]
        lines += [f"  {c.describe()}" for c in self.comparisons if not c.ok]
        return "\n".join(lines)


def nonfinite(inputs: Mapping[str, np.ndarray]) -> str | None:
    """SPEC: non-finite x or w is bad input. Which tensor, and how many values, or None."""
    for name, a in inputs.items():
        if a.dtype.kind == "f":
            nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
            if nan or inf:
                return (f"bad input: {name} has {nan + inf} non-finite value(s) "
                        f"({nan} NaN, {inf} inf) of {a.size}")
    return None


def input_problem(target: Target, inputs: Mapping[str, np.ndarray],
                  point: Point) -> str | None:
    """Why these inputs are bad input for the target (non-finite values, or a stage's own
    check), or None."""
    if (bad := nonfinite(inputs)) is not None:
        return bad
    check = getattr(target, "check_inputs", None)  # a pipeline's own is optional
    return check(inputs, point) if check is not None else None


def case_rng(base_seed: int, stage: str, family: str, case_index: int,
             seed_index: int) -> np.random.Generator:
    """A generator fixed by the case, different for every stage, family, case and seed."""
    return np.random.default_rng(
        [base_seed, zlib.crc32(stage.encode()), zlib.crc32(family.encode()), case_index,
         seed_index])


def _unsettled(outs: Mapping[str, np.ndarray], again: Mapping[str, np.ndarray],
               expected: Mapping[str, Any]) -> list[str]:
    """The outputs whose elements differ between a run and its repeat under another
    poison: left unwritten (each run's poison stayed), or not deterministic."""
    problems = []
    for name in expected:
        a, b = outs.get(name), again.get(name)
        if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype or not a.size:
            continue
        rows = (np.ascontiguousarray(a).view(np.uint8).reshape(a.size, a.itemsize)
                != np.ascontiguousarray(b).view(np.uint8).reshape(b.size, b.itemsize))
        if n := int(rows.any(axis=1).sum()):
            problems.append(f"output {name}: {n} element(s) differ between two runs under "
                            "different poisons (left unwritten, or not deterministic)")
    return problems


def judged_as(stage: Stage, variant: Variant) -> Variant:
    """The variant a build's outputs are judged as: its declared variant, without the values
    a ``--define`` tuning run set. Every build of a tuning sweep is judged against one
    answer, as Kernel Tuner judges every configuration against one: a ``-D`` value that
    changes the answer belongs in a declared variant, and a build it changes fails."""
    return stage.variant(variant.declared) if variant.tuning else variant


def judge(stage: Stage, variant: Variant, point: Point, inputs: Mapping[str, np.ndarray],
          result: RunResult, rows: np.ndarray | None = None,
          keep: dict[str, np.ndarray] | None = None
          ) -> tuple[tuple[Comparison, ...], tuple[str, ...]]:
    """Compare a run's outputs with the reference; report missing outputs and mutated inputs.
    ``rows`` (of a stage that declares its ``rows``): the outputs are compared on those
    rows alone, with the reference computed on them; the other checks see the whole run.
    ``keep``: where the reference of these inputs is kept once computed (filled on the first
    call, read after), unless the reference reads the kernel's own outputs."""
    problems: list[str] = []
    expected = stage.outputs(point)
    missing = sorted(set(expected) - set(result.outputs))
    if missing:
        problems.append(f"outputs not returned: {', '.join(missing)}")
    if loose := untolerated(stage, point):  # a case with nothing to judge them would pass
        problems.append(f"output(s) {', '.join(loose)} have no tolerance: nothing judges "
                        "them")
    outs = result.outputs
    if stage.trim is not None and not missing:
        outs = stage.trim(outs, point)
    for name, (shape, dtype) in expected.items():
        got = outs.get(name)
        if stage.trim is not None and got is not None and got.ndim == len(shape) \
                and got.shape[0] <= shape[0] and got.shape[1:] == tuple(shape)[1:]:
            shape = got.shape  # cut by ``trim`` to the planes the kernel decided on
        if got is not None and (got.shape != tuple(shape) or got.dtype != dtype):
            problems.append(f"output {name} is {got.dtype}{list(got.shape)}, "
                            f"declared {np.dtype(dtype)}{list(shape)}")
    if result.again and not missing:
        problems += _unsettled(outs, stage.trim(result.again, point)
                               if stage.trim is not None else result.again, expected)
    for name, nbytes in result.guard_damage.items():
        if nbytes:
            problems.append(f"wrote past the end of {name}: {nbytes} byte(s) of the guard "
                            "band after it changed")
    for name, before in inputs.items():
        after = result.inputs_after.get(name)
        if stage.may_mutate(name) or after is None:
            continue
        if before.tobytes() != after.tobytes():
            n = int((before.view(np.uint8) != after.view(np.uint8)).sum())
            problems.append(f"input {name} was modified by the kernel ({n} bytes differ)")
    if problems:
        return (), tuple(problems)
    at = point
    if rows is not None and stage.rows is not None:
        part = rowcheck.cut(stage.rows, point, inputs, outs, rows, stage.name)
        if part.problems:
            return (), tuple(part.problems)
        at, inputs, outs = part.point, part.inputs, part.outputs
    if stage.reads_outputs:
        keep = None  # it judges on this run's outputs: nothing to keep
    if keep:
        ref = keep
    else:
        ref = stage.expected(inputs, at, judged_as(stage, variant), outs)
        if keep is not None:
            keep.update(ref)
    if bad_ref := reference_problems(stage, at, ref):
        return (), tuple(bad_ref)
    comps = tuple(tol.compare(name, outs[name], ref[name])
                  for name, tol in stage.tolerances.items() if name in expected)
    if at is not point:
        assert stage.rows is not None and rows is not None
        n = int(point[stage.rows.axis])
        comps = tuple(rowcheck.relocate(c, stage.rows, rows, n) for c in comps)
    return comps, ()


def cases(target: Target, variant: Variant, families: Sequence[str] | None = None,
          seeds: int = 3, overrides: Mapping[str, Any] | None = None
          ) -> list[tuple[str, int, int, dict[str, Any]]]:
    """Every (family, case index, seed index, point) a validation of ``target`` runs;
    ``overrides`` (``--k 2.5``, say) replace those axes in every case."""
    fams = [f for f in (families or target.families) if variant.accepts(f)]
    extra = dict(overrides or {})
    return [(fam, ci, si, target.point(variant, **{**case, **extra}))
            for fam in fams for ci, case in enumerate((*target.cases, *variant.cases))
            for si in range(seeds)]


def validate(target: Target, variant: Variant, backend: Backend,
             families: Sequence[str] | None = None, seeds: int = 3,
             base_seed: int = 0, overrides: Mapping[str, Any] | None = None,
             stages: Mapping[str, Stage] | None = None) -> Iterator[CaseResult]:
    """Run every case of ``cases`` on fresh inputs and yield each judged result (a
    pipeline runs through its steps, the registry's ``stages``). A case whose run lost the
    device context (a sticky CUDA error: ``engine.sticky``) is yielded failed, its problem
    beginning with :data:`LOST`, and the variant's cases end there."""
    for fam, ci, si, point in cases(target, variant, families, seeds, overrides):
        rng = case_rng(base_seed, target.name, fam, ci, si)
        inputs = target.make_inputs(rng, fam, point)
        # A stage's inputs against its declaration first (a plugin's mistake), then as data.
        wrong = input_problems(target, inputs, point) if isinstance(target, Stage) else []
        if not wrong and (bad := input_problem(target, inputs, point)) is not None:
            wrong = [bad]
        if wrong:
            yield CaseResult(target.name, variant.name, fam, si, dict(point), (), tuple(wrong))
            continue
        if isinstance(target, Pipeline) and stages is None:
            raise ValueError(f"pipeline {target.name} runs through its stages: pass them")
        try:
            if isinstance(target, Pipeline):
                assert stages is not None
                outs, host, _ = backend.pipeline(target, stages, inputs, point, repeats=0,
                                                 cold=False, warmup=0)
                comps, problems = tuple(target.check(inputs, point, outs, host)), ()
            else:
                pristine = {k: v.copy() for k, v in inputs.items()}
                result = backend.run(target, variant, inputs, point)
                comps, problems = judge(target, variant, point, pristine, result)
        except Exception as exc:  # a sticky error fails the case and ends the variant's
            if not context_lost(str(exc)):
                raise
            yield CaseResult(target.name, variant.name, fam, si, dict(point), (),
                             (f"{LOST}: {type(exc).__name__}: {exc}",))
            return
        yield CaseResult(target.name, variant.name, fam, si, dict(point), comps, problems)


def worst_errors(cases: Sequence[CaseResult]) -> str:
    """Per output, the worst error over the cases: ``"q abs 0; vth rel 2.4e-07"``."""
    worst: dict[str, tuple[str, float]] = {}
    for case in cases:
        for c in case.comparisons:
            if c.output not in worst or c.worst > worst[c.output][1]:
                worst[c.output] = (c.metric, c.worst)
    return "; ".join(f"{k} {m} {v:.3g}" for k, (m, v) in sorted(worst.items()))


@dataclass
class ValidationSummary:
    """All cases of one target variant."""

    name: str
    variant: str
    kernel_hash: str
    families: list[str]
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        """Cases that passed."""
        return sum(c.ok for c in self.cases)

    def ledger_row(self, info: Any, seeds: int) -> dict[str, Any]:
        """The ledger row of this validation on the device ``info``."""
        return {"stage": self.name, "variant": self.variant, "kernel_hash": self.kernel_hash,
                "status": "pass" if self.cases and self.passed == len(self.cases) else "fail",
                "gpu": info.name, "cc": f"{info.cc[0]}.{info.cc[1]}", "driver": info.driver,
                "cuda": info.cuda, "date": meta.now(), "cases": len(self.cases),
                "passed": self.passed, "worst_error": worst_errors(self.cases),
                "families": ",".join(self.families), "seeds": seeds, "git_sha": meta.git_sha()}


@dataclass(frozen=True)
class Unit:
    """One target variant to validate: its families, the axes the options replace in its
    cases, and the hash its ledger row names."""

    target: Target
    variant: Variant
    families: tuple[str, ...]
    overrides: dict[str, Any]
    kernel_hash: str


def units(reg: Registry, targets: Targets, variant: str, families: Sequence[str] | None,
          options: Mapping[str, str]) -> Iterator[Unit]:
    """Every target variant ``harness validate`` validates, in its order. A stage validates
    the variant named (or ``all``; ``--mode`` picks among them), its cases' axes replaced
    by the option values it has; a pipeline validates the variant named (or every one) at
    its declared cases."""
    for t in targets.all:
        fams = tuple(families or t.families)
        if isinstance(t, Pipeline):  # its cases are declared: no option narrows them
            chosen = select_variants(t, [variant], {})
        else:
            chosen = select_variants(t, ["all"] if variant == "all" else [variant], options)
        for v in chosen:
            over = {} if isinstance(t, Pipeline) else parsed_options(t.axes, options, v)
            yield Unit(t, v, fams, dict(over), target_hash(t, v, reg.stages))


def target_hash(target: Target, variant: Variant, stages: Mapping[str, Stage]) -> str:
    """What a ledger row of ``target`` ``variant`` names: the stage variant's kernel hash,
    or the pipeline's hash over every kernel its steps build."""
    if isinstance(target, Pipeline):
        return ledger.pipeline_hash(target, stages)
    return kernel_hash(target, variant)


def check_recordable(todo: Sequence[Unit]) -> None:
    """BadInput where ``--record`` would write a row the ledger cannot qualify: an option
    that replaces an axis in a unit's cases (``--k 4``) narrows them, and the ledger has no
    column to say so (a ``--mode`` that only picks the variants pinning it is fine)."""
    narrowed = sorted({k for u in todo for k in u.overrides})
    if narrowed:
        raise BadInput(f"--record keeps whole validations: {', '.join(narrowed)} replaces an "
                       "axis of the cases and would not be recorded (run it without)")


def validation(reg: Registry, targets: Targets, backend: Backend, variant: str,
               families: Sequence[str] | None, seeds: int, seed: int,
               options: Mapping[str, str]) -> Iterator[ValidationSummary]:
    """Validate every target variant (:func:`units`) on the backend. The units are all
    resolved first, so that a variant or an option that cannot apply is bad input before
    any case runs (not after the targets before it were validated)."""
    yield from summaries(list(units(reg, targets, variant, families, options)), backend,
                         seeds, seed, reg.stages)


def summaries(todo: Sequence[Unit], backend: Backend, seeds: int, seed: int,
              stages: Mapping[str, Stage]) -> Iterator[ValidationSummary]:
    """Validate each of the resolved units on the backend, in order. A unit whose case lost
    the device context is yielded (failed at that case), then ContextLost: no later unit
    of the process could run."""
    for at, u in enumerate(todo):
        fams = list(u.families)
        done = ValidationSummary(
            u.target.name, u.variant.name, u.kernel_hash, fams,
            list(validate(u.target, u.variant, backend, fams, seeds, seed, u.overrides,
                          stages)))
        yield done
        if done.cases and any(p.startswith(LOST) for p in done.cases[-1].problems):
            last = done.cases[-1]
            rest = [f"{v.target.name} --variant {v.variant.name}" for v in todo[at + 1:]]
            raise ContextLost(
                f"stopped: {last.problems[0]}, at {last.describe().splitlines()[0]}; "
                + (f"not validated: {'; '.join(rest)} (validate each in a new process: "
                   "harness validate NAME --variant VARIANT)" if rest else
                   "no variant was left to validate"))


@dataclass(frozen=True)
class ValidationReport:
    """What ``harness validate`` found, and where it recorded it."""

    summaries: list[ValidationSummary]
    #: The ledger the rows were appended to (None: not recorded).
    recorded: Path | None = None
    #: What was cut from the ledger before appending (a torn last row; '' when nothing).
    repaired: str = ""
    #: Ledger rows written (a cluster unit of unknown GPU or of another source has none).
    rows: int = 0
    #: Where the run stopped on a lost device context (ContextLost's line), or "".
    stopped: str = ""
    #: A ledger append that failed, and the rows it left unwritten (``Recorder``), or "".
    unrecorded: str = ""

    @property
    def failures(self) -> list[CaseResult]:
        """Every failed case, in order."""
        return [c for s in self.summaries for c in s.cases if not c.ok]

    @property
    def failure(self) -> str | None:
        """The one-line verdict when some case failed, else None."""
        n = len(self.failures)
        return f"{n} validation case(s) failed" if n else None


def validate_targets(reg: Registry, names: Sequence[str] | None, *, variant: str = "all",
                     families: Sequence[str] | None = None, seeds: int = 3, seed: int = 0,
                     options: Mapping[str, str] | None = None, device: int = 0,
                     record: bool = False) -> ValidationReport:
    """``harness validate``: the named targets (default: every stage and pipeline) on the
    GPU; with ``record``, one ledger row per target variant."""
    tg = resolve(reg, names, with_pipelines=True)
    check_families(tg.all, families or [])
    check_options(tg.all, options or {})
    todo = list(units(reg, tg, variant, families, options or {}))  # bad input before the GPU
    if record:
        check_recordable(todo)
    # The ledger is checked before any GPU work, then each target variant's row appended as
    # its validation ends (ledger.Recorder): an interrupt keeps the rows of those that
    # ended, and validations side by side (a process a stage, or a GPU each) share it.
    book = ledger.Recorder() if record else None
    sums: list[ValidationSummary] = []
    stopped = ""
    try:
        gpu = open_gpu(device)
        for s in summaries(todo, gpu, seeds, seed, reg.stages):
            sums.append(s)
            if book is not None:
                book.write(s.ledger_row(gpu.device.info, seeds))
    except ContextLost as exc:  # the report is drawn, then the stop said (the CLI's)
        stopped = str(exc)
    return report(sums, book, stopped)


def report(sums: list[ValidationSummary], book: ledger.Recorder | None,
           stopped: str = "") -> ValidationReport:
    """The report of a validation run, with what its ``book`` recorded (None: not asked)."""
    if book is None:
        return ValidationReport(sums, stopped=stopped)
    return ValidationReport(sums, book.path, book.repaired, book.rows, stopped,
                            book.unrecorded)
