"""Validation of kernels against their NumPy references (SPEC.md, validation rules).

The logic here needs no GPU: an *executor* runs a stage on inputs and returns what came
back (outputs, and the inputs read back after the run). On the GPU that is
``harness.backends.pycuda.runner.GpuRunner`` (outputs poisoned before every launch); tests use fakes that return
deliberately wrong outputs, which the validator must reject.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.contract.backend import Backend, RunResult
from harness.contract.stage import Point, Stage, Variant
from harness.contract.tolerance import Comparison


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


def input_problem(stage: Stage, inputs: Mapping[str, np.ndarray], point: Point) -> str | None:
    """Why these inputs are bad input for the stage (non-finite values, or the stage's own
    check), or None."""
    if (bad := nonfinite(inputs)) is not None:
        return bad
    return stage.check_inputs(inputs, point) if stage.check_inputs is not None else None


def point_rng(seed: int, name: str, family: str, point: Point) -> np.random.Generator:
    """A generator fixed by (seed, stage, family, point): a bench point's inputs."""
    key = json.dumps(dict(point), sort_keys=True, default=str)
    return np.random.default_rng([seed, zlib.crc32(name.encode()),
                                  zlib.crc32(family.encode()), zlib.crc32(key.encode())])


def case_rng(base_seed: int, stage: str, family: str, case_index: int,
             seed_index: int) -> np.random.Generator:
    """A generator fixed by the case, different for every stage, family, case and seed."""
    return np.random.default_rng(
        [base_seed, zlib.crc32(stage.encode()), zlib.crc32(family.encode()), case_index,
         seed_index])


def judge(stage: Stage, variant: Variant, point: Point, inputs: Mapping[str, np.ndarray],
          result: RunResult) -> tuple[tuple[Comparison, ...], tuple[str, ...]]:
    """Compare a run's outputs with the reference; report missing outputs and mutated inputs."""
    problems: list[str] = []
    expected = stage.outputs(point)
    missing = sorted(set(expected) - set(result.outputs))
    if missing:
        problems.append(f"outputs not returned: {', '.join(missing)}")
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
    ref = stage.reference(inputs, point, variant, outs)
    comps = tuple(tol.compare(name, outs[name], ref[name])
                  for name, tol in stage.tolerances.items() if name in expected)
    return comps, ()


def plan(stage: Stage, variant: Variant, families: Sequence[str] | None = None,
         seeds: int = 3, overrides: Mapping[str, Any] | None = None
         ) -> list[tuple[str, int, int, dict[str, Any]]]:
    """Every (family, case index, seed index, point) a validation of ``stage`` runs;
    ``overrides`` (``--k 2.5``, say) replace those axes in every case."""
    fams = list(families) if families else list(stage.families)
    extra = dict(overrides or {})
    return [(fam, ci, si, stage.point(variant, **{**case, **extra}))
            for fam in fams for ci, case in enumerate(stage.cases) for si in range(seeds)]


def validate(stage: Stage, variant: Variant, executor: Backend,
             families: Sequence[str] | None = None, seeds: int = 3,
             base_seed: int = 0, overrides: Mapping[str, Any] | None = None
             ) -> Iterator[CaseResult]:
    """Run every case of ``plan`` on fresh inputs and yield each judged result."""
    for fam, ci, si, point in plan(stage, variant, families, seeds, overrides):
        rng = case_rng(base_seed, stage.name, fam, ci, si)
        inputs = stage.make_inputs(rng, fam, point)
        if (bad := input_problem(stage, inputs, point)) is not None:
            yield CaseResult(stage.name, variant.name, fam, si, dict(point), (), (bad,))
            continue
        pristine = {k: v.copy() for k, v in inputs.items()}
        result = executor.run(stage, variant, inputs, point)
        comps, problems = judge(stage, variant, point, pristine, result)
        yield CaseResult(stage.name, variant.name, fam, si, dict(point), comps, problems)


def worst_errors(cases: Sequence[CaseResult]) -> str:
    """Per output, the worst error over the cases: ``"q abs 0; vth rel 2.4e-07"``."""
    worst: dict[str, tuple[str, float]] = {}
    for case in cases:
        for c in case.comparisons:
            if c.output not in worst or c.worst > worst[c.output][1]:
                worst[c.output] = (c.metric, c.worst)
    return "; ".join(f"{k} {m} {v:.3g}" for k, (m, v) in sorted(worst.items()))
