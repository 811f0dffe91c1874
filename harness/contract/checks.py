"""What is wrong with a declared stage or pipeline: the checks the registry makes when a
plugin loads (each problem one line, so that a broken plugin is reported by name and the
others still load), its names, fields, cases and the shape functions at every declared
point. What the plugin hands over on each run is :mod:`.handover`'s to check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.contract.stage import (
    MAX_BLOCK,
    RESERVED_PEER_NAMES,
    Peer,
    Pipeline,
    Point,
    Stage,
    positional_arity,
)

#: What a stage, pipeline, variant, axis or family may be called: the names go into CSV
#: cells, file names and command lines, where they must mean nothing (a cell that starts
#: with ``=`` is a formula to a spreadsheet).
NAME = re.compile(r"[a-z][a-z0-9_]*")


def name_problem(kind: str, name: object) -> str | None:
    """Why ``name`` cannot be a ``kind``'s name (``NAME``), or None."""
    if isinstance(name, str) and NAME.fullmatch(name):
        return None
    return f"{kind} name {name!r} is not {NAME.pattern} (lower-case letters, digits, _)"


def _name_problems(item: Stage | Pipeline) -> list[str]:
    """The names of a stage or pipeline, its variants, axes and families, checked."""
    kind = "pipeline" if isinstance(item, Pipeline) else "stage"
    found = [name_problem(kind, item.name)]
    found += [name_problem("variant", v.name) for v in item.variants]
    found += [name_problem("axis", a.name) for a in item.axes]
    found += [name_problem("family", f) for f in item.families]
    return [p for p in found if p is not None]


def check_pipeline(p: Pipeline, expected_name: str | None = None) -> list[str]:
    """What is wrong with a declared pipeline (an empty list when nothing is)."""
    problems = _name_problems(p)
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
    return problems + _peers_problems(p.peers, judged_allowed=False)


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
    problems = _name_problems(stage)
    if expected_name is not None and stage.name != expected_name:
        problems.append(f"name {stage.name!r} differs from the file stem {expected_name!r}")
    for f in CALLABLE_FIELDS:
        if not callable(getattr(stage, f)):
            problems.append(f"field {f} is not callable")
    if stage.inputs is not None and not callable(stage.inputs):
        problems.append("field inputs is not callable")
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
    problems += _untolerated(stage)
    problems += _peers_problems(stage.peers)
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
        if v.tuning or v.base:  # a --define run's, set by the harness: a build is judged
            # as the variant it was tuned from, which a declared variant must itself be
            problems.append(f"variant {v.name} declares tuning values or a base: those are "
                            "a --define build's, set by the harness")
    problems += _case_problems(stage, names)
    if stage.workspace is not None and stage.cases and callable(stage.outputs):
        try:
            p = stage.point(stage.variants[0], **stage.cases[0])
            clash = set(stage.workspace(p)) & set(stage.outputs(p))
        except Exception:  # said by _case_problems, at the point it fails
            clash = set()
        if clash:
            problems.append(f"workspace reuses output name(s) {', '.join(sorted(clash))}")
    return problems


#: The shape functions a run calls before any array exists (the memory guard, the row's
#: bytes and flops): probed at every declared point when the plugin loads.
SHAPE_FIELDS: Sequence[str] = ("inputs", "outputs", "workspace", "bytes_moved", "flops")


def _case_problems(stage: Stage, names: Sequence[str]) -> list[str]:
    """Validation cases that name unknown axes, and the shape functions (SHAPE_FIELDS)
    that raise at a declared point (each variant's default, its cases, the stage's): found
    when the plugin loads, in one line each, rather than as a traceback mid-sweep; and
    tolerances of outputs that no declared point has (a misspelt one judges nothing)."""
    problems: list[str] = []
    points: list[tuple[str, Any]] = []

    def unknown(case: Mapping[str, Any]) -> list[str]:
        return sorted(set(case) - set(names))

    problems += [f"case {dict(c)} names unknown axis {', '.join(map(repr, unknown(c)))}"
                 for c in stage.cases if unknown(c)]
    for v in stage.variants:
        problems += [f"variant {v.name}'s case {dict(c)} names unknown axis "
                     f"{', '.join(map(repr, unknown(c)))}" for c in v.cases if unknown(c)]
        if unknown(dict(v.pins)):  # said with the pins: it makes no point
            continue
        for where, case in [("default point", {}),
                            *((f"case {dict(c)}", c) for c in (*stage.cases, *v.cases))]:
            if not unknown(case):  # (point() refuses only unknown axes)
                points.append((f"variant {v.name}'s {where}", stage.point(v, **case)))
    outputs: set[str] = set()
    for f in SHAPE_FIELDS:
        fn = getattr(stage, f)
        if not callable(fn):
            continue
        failed: list[str] = []
        for where, p in points:
            try:
                got = fn(p)
            except Exception as exc:  # a declaration error, reported like the others
                failed.append(f"{f} at {where} raised {type(exc).__name__}: {exc}")
                continue
            if f == "outputs" and isinstance(got, Mapping):
                outputs |= set(got)
        if failed:  # the first point it fails at, and how many more
            more = f" (and at {len(failed) - 1} more declared point(s))" if failed[1:] else ""
            problems.append(failed[0] + more)
    if points and outputs and isinstance(stage.tolerances, Mapping):
        stray = sorted(set(stage.tolerances) - outputs)
        if stray:
            problems.append(f"tolerance(s) of {', '.join(map(repr, stray))}, an output no "
                            "declared point has")
    return problems


def _untolerated(stage: Stage) -> list[str]:
    """Each variant's outputs at its default point that no tolerance judges: a validation
    would pass them whatever the kernel wrote (``untolerated`` says it again at each case's
    own point)."""
    if not callable(stage.outputs) or not isinstance(stage.tolerances, Mapping):
        return []
    problems = []
    for v in stage.variants:
        try:
            names = untolerated(stage, stage.point(v))
        except Exception:  # a point the declarations cannot make: reported elsewhere
            continue
        if names:
            problems.append(f"variant {v.name}: output(s) {', '.join(names)} have no "
                            "tolerance, so no validation would judge them")
    return problems


def untolerated(stage: Stage, point: Point) -> list[str]:
    """The stage's outputs at ``point`` that no tolerance judges."""
    return sorted(set(stage.outputs(point)) - set(stage.tolerances))


def _peers_problems(peers: Mapping[str, object], judged_allowed: bool = True) -> list[str]:
    """What is wrong with the declared peers, each line naming its peer; a pipeline's
    (``judged_allowed=False``) must be speed references: its check judges intermediates a
    peer does not make."""
    out = []
    for name, peer in peers.items():
        why = _peer_problems(name, peer)
        if not judged_allowed and isinstance(peer, Peer) and peer.judged:
            why.append("a pipeline's peer is a speed reference (judged=False, its note "
                       "saying why): the pipeline's check judges intermediates a peer does "
                       "not make")
        out += [f"peer {name!r}: {w}" for w in why]
    return out


def _peer_problems(name: str, peer: object) -> list[str]:
    if not isinstance(peer, Peer):
        return [f"is a {type(peer).__name__}, not a harness.contract.stage.Peer"]
    bad = [w for w in (name_problem("peer", name),) if w]
    if name in RESERVED_PEER_NAMES:
        bad.append(f"the name is reserved ({', '.join(RESERVED_PEER_NAMES)})")
    if not callable(peer.fn):
        bad.append("fn is not callable")
    if not peer.judged and not peer.note:
        bad.append("a peer that is not judged must say why in its note")
    return bad
