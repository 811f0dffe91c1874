"""What is wrong with a declared stage or pipeline: the checks the registry makes when a
plugin loads, each problem one line, so that a broken plugin is reported by name and the
others still load."""

from __future__ import annotations

from collections.abc import Sequence

from harness.contract.stage import MAX_BLOCK, Pipeline, Stage, positional_arity


def check_pipeline(p: Pipeline, expected_name: str | None = None) -> list[str]:
    """What is wrong with a declared pipeline (an empty list when nothing is)."""
    problems = []
    if expected_name is not None and p.name != expected_name:
        problems.append(f"name {p.name!r} differs from the file stem {expected_name!r}")
    for f in ("make_inputs", "run", "check", "reference", "bytes_moved", "flops"):
        if not callable(getattr(p, f)):
            problems.append(f"field {f} is not callable")
    if not p.steps:
        problems.append("no steps declared")
    if not p.cases:
        problems.append("no validation cases declared")
    if not p.families:
        problems.append("no input families declared")
    return problems


#: Fields that must be callables, checked when a plugin is loaded.
CALLABLE_FIELDS: Sequence[str] = (
    "make_inputs", "outputs", "reference", "enqueue", "bytes_moved", "flops",
)


def check_stage(stage: object, expected_name: str | None = None) -> list[str]:
    """What is wrong with a plugin's declared stage (an empty list when nothing is)."""
    if isinstance(stage, Pipeline):
        return check_pipeline(stage, expected_name)
    if not isinstance(stage, Stage):
        return [f"STAGE is a {type(stage).__name__}, not a harness.contract.stage.Stage"]
    problems = []
    if expected_name is not None and stage.name != expected_name:
        problems.append(f"name {stage.name!r} differs from the file stem {expected_name!r}")
    for f in CALLABLE_FIELDS:
        if not callable(getattr(stage, f)):
            problems.append(f"field {f} is not callable")
    if callable(stage.reference) and positional_arity(stage.reference) < 3:
        problems.append("reference must take (inputs, point, variant) and, optionally, given")
    if not stage.entry_points:
        problems.append("no entry_points declared")
    if not stage.families:
        problems.append("no input families declared")
    if not isinstance(stage.block, int) or not 1 <= stage.block <= MAX_BLOCK:
        problems.append(f"block {stage.block!r} is not a thread count in 1..{MAX_BLOCK}")
    names = [a.name for a in stage.axes]
    if len(set(names)) != len(names):
        problems.append("duplicate axis names")
    if not stage.cases:
        problems.append("no validation cases declared")
    if not stage.tolerances:
        problems.append("no tolerances declared")
    for out, tol in stage.tolerances.items():
        if not getattr(tol, "reason", ""):
            problems.append(f"tolerance of {out!r} gives no reason")
    vnames = [v.name for v in stage.variants]
    if not vnames or len(set(vnames)) != len(vnames):
        problems.append("variants must be non-empty with unique names")
    for key in stage.default_sweep:
        if key not in names:
            problems.append(f"default_sweep names unknown axis {key!r}")
    for v in stage.variants:
        for key, _ in v.pins:
            if key not in names:
                problems.append(f"variant {v.name} pins unknown axis {key!r}")
    if stage.workspace is not None and stage.cases and callable(stage.outputs):
        try:
            p = stage.point(stage.variants[0], **stage.cases[0])
            clash = set(stage.workspace(p)) & set(stage.outputs(p))
        except Exception as exc:  # a declaration error, reported like the others
            clash, problems = set(), [*problems, f"workspace of the first case: {exc}"]
        if clash:
            problems.append(f"workspace reuses output name(s) {', '.join(sorted(clash))}")
    return problems
