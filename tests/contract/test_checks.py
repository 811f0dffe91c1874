"""What a plugin declares, checked when it loads: names, fields, cases, tolerances, peers
and the shape functions at every declared point (what it hands over on each run:
test_handover)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.contract import checks
from harness.contract.stage import Variant


@pytest.mark.parametrize(("name", "ok"), [
    ("dynamic_spikes", True), ("a", True), ("k2_x", True),
    ("=cmd", False), ("Bad", False), ("2fast", False), ("_x", False), ("a-b", False),
    ("", False), ("a b", False), ("a\n", False), (None, False),
])
def test_names(name: object, ok: bool) -> None:
    problem = checks.name_problem("stage", name)
    assert (problem is None) is ok
    if not ok:
        assert problem == f"stage name {name!r} is not [a-z][a-z0-9_]* (lower-case letters, " \
                          "digits, _)"


def test_every_name_of_a_stage_is_checked(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    bad = dataclasses.replace(st, name="Spikes", variants=(Variant("=SUM(A1)"),),
                              families=("normal", "+1"))
    found = checks.check_stage(bad)
    assert "stage name 'Spikes' is not [a-z][a-z0-9_]* (lower-case letters, digits, _)" in found
    assert any(p.startswith("variant name '=SUM(A1)' is not") for p in found)
    assert any(p.startswith("family name '+1' is not") for p in found)
    pipe = reg.pipelines["activation_path"]
    assert checks.check_stage(dataclasses.replace(pipe, name="Path"))[0].startswith(
        "pipeline name 'Path' is not")


def test_a_declared_variant_cannot_pose_as_a_tuning_build(reg) -> None:  # type: ignore[no-untyped-def]
    """A build is judged as the variant it was tuned from: a plugin's variant that carries
    a --define run's tuning values or base is refused at load (its judgement would look up
    a variant that is not declared, or another one)."""
    st = reg.get("find_min_max")
    posing = dataclasses.replace(st.variants[0], name="fast", tuning=(("UNITS", "2"),),
                                 base="default")
    found = checks.check_stage(dataclasses.replace(st, variants=(*st.variants, posing)))
    assert "variant fast declares tuning values or a base: those are a --define build's, " \
           "set by the harness" in found
    assert not checks.check_stage(st)


def test_an_output_without_a_tolerance_is_refused(reg) -> None:  # type: ignore[no-untyped-def]
    """An output no tolerance judges would pass any validation whatever the kernel wrote:
    a plugin that declares one is broken at load, and a case whose point gives one fails
    (the built-ins judge every output of every variant at every case)."""
    from harness.backends.numpy import NumpyRunner
    from harness.engine import validate

    st = reg.get("transform_absmax")
    loose = dataclasses.replace(st, tolerances={k: t for k, t in st.tolerances.items()
                                                if k != "amax"})
    assert any(p.endswith("output(s) amax have no tolerance, so no validation would judge "
                          "them") for p in checks.check_stage(loose))
    case = next(validate.validate(loose, loose.variants[0], NumpyRunner(), ["normal"], 1))
    assert not case.ok and "output(s) amax have no tolerance: nothing judges them" in \
        case.problems
    for s in reg.stages.values():
        for v in s.variants:
            for fam, _ci, _si, point in validate.cases(s, v, None, 1):
                assert checks.untolerated(s, point) == [], (s.name, v.name, fam, point)


def _only(found: list[str], line: str) -> None:
    assert found == [line], found


def test_each_declaration_problem_of_a_stage_is_named(reg) -> None:  # type: ignore[no-untyped-def]
    """One broken field at a time, on a stage that is otherwise sound: exactly its line."""
    from harness.contract.stage import Peer
    from harness.contract.tolerance import Exact

    st = reg.get("find_min_max")
    assert checks.check_stage(st) == []
    r = dataclasses.replace
    _only(checks.check_stage(r(st, cases=())), "no validation cases declared")
    _only(checks.check_stage(r(st, axes=(*st.axes, st.axes[0]))), "duplicate axis names")
    _only(checks.check_stage(r(st, variants=(*st.variants, st.variants[0]))),
          "variants must be non-empty with unique names")
    _only(checks.check_stage(r(st, tolerances={k: Exact("") for k in st.tolerances})),
          f"tolerance of {next(iter(st.tolerances))!r} gives no reason")
    _only(checks.check_stage(r(st, default_sweep={"nope": (1,)})),
          "default_sweep names unknown axis 'nope'")
    pinned = r(st.variants[0], pins=(("nope", 1),))
    _only(checks.check_stage(r(st, variants=(pinned,))),
          f"variant {pinned.name} pins unknown axis 'nope'")
    _only(checks.check_stage(r(st, inputs=3)), "field inputs is not callable")
    assert checks.check_stage(r(st, block=checks.MAX_BLOCK)) == []
    _only(checks.check_stage(r(st, block=checks.MAX_BLOCK + 1)),
          f"block {checks.MAX_BLOCK + 1} is not a thread count in 1..{checks.MAX_BLOCK}")
    _only(checks.check_stage(r(st, block=0)),
          f"block 0 is not a thread count in 1..{checks.MAX_BLOCK}")
    def fn(torch, t, p, v):  # type: ignore[no-untyped-def]
        return {}

    peers = {"torch": Peer(fn), "nofn": Peer(None), "mute": Peer(fn, judged=False)}  # type: ignore[arg-type]
    found = checks.check_stage(r(st, peers=peers))
    assert found == ["peer 'torch': the name is reserved (torch, torch_compile, numpy, "
                     "pycuda, auto, none, all)", "peer 'nofn': fn is not callable",
                     "peer 'mute': a peer that is not judged must say why in its note"]


def test_each_declaration_problem_of_a_pipeline_is_named(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.contract.stage import Peer

    pipe = reg.pipelines["activation_path"]
    assert checks.check_stage(pipe) == []
    r = dataclasses.replace
    _only(checks.check_stage(r(pipe, steps=())), "no steps declared")
    _only(checks.check_stage(r(pipe, cases=())), "no validation cases declared")
    _only(checks.check_stage(r(pipe, families=())), "no input families declared")
    _only(checks.check_stage(r(pipe, check=None)), "field check is not callable")
    _only(checks.check_stage(pipe, expected_name="other"),
          "name 'activation_path' differs from the file stem 'other'")
    judged = {"eager": Peer(lambda torch, t, p, v: {})}
    _only(checks.check_stage(r(pipe, peers=judged)),
          "peer 'eager': a pipeline's peer is a speed reference (judged=False, its note "
          "saying why): the pipeline's check judges intermediates a peer does not make")


def test_every_field_of_a_pipeline_or_stage_that_is_called_must_be_callable(reg) -> None:  # type: ignore[no-untyped-def]
    """Each callable field, left a non-callable, is named on its own line (a pipeline's
    ``run`` as much as its ``check``)."""
    pipe = reg.pipelines["activation_path"]
    for f in ("make_inputs", "run", "check", "reference", "bytes_moved", "flops"):
        _only(checks.check_stage(dataclasses.replace(pipe, **{f: None})),
              f"field {f} is not callable")
    st = reg.get("find_min_max")
    for f in checks.CALLABLE_FIELDS:
        _only(checks.check_stage(dataclasses.replace(st, **{f: None})),
              f"field {f} is not callable")


def test_more_declaration_problems_of_a_stage_are_named(reg) -> None:  # type: ignore[no-untyped-def]
    """No tolerances, no variants, a workspace that cannot be sized: each its own line; a
    block of 1 thread is a thread count; a stage without cases is not sized at all."""
    st = reg.get("find_min_max")
    r = dataclasses.replace
    assert checks.check_stage(r(st, tolerances={}))[0] == "no tolerances declared"
    _only(checks.check_stage(r(st, variants=())), "variants must be non-empty with unique names")
    assert checks.check_stage(r(st, block=1)) == []
    _only(checks.check_stage(r(st, workspace=lambda p: 1 // 0)),
          "workspace at variant default's default point raised ZeroDivisionError: integer "
          f"division or modulo by zero (and at {len(st.cases)} more declared point(s))")
    scratch = r(st, workspace=lambda p: {"scratch": ((4,), np.dtype(np.int32))})
    assert checks.check_stage(scratch) == []
    _only(checks.check_stage(r(scratch, cases=())), "no validation cases declared")


def test_a_case_or_shape_function_that_fails_at_a_declared_point_is_named_at_load(reg) -> None:  # type: ignore[no-untyped-def]
    """A case naming no axis of the stage, a shape function (outputs, inputs, workspace,
    bytes, flops) that raises at a declared point, and a tolerance of an output no declared
    point has: each said when the plugin loads, in a line naming what and where, where a
    sweep met them as a traceback or passed them unseen."""
    st = reg.get("dynamic_spikes")
    r = dataclasses.replace
    found = checks.check_stage(r(st, cases=(*st.cases, {"batch": 5, "in_ff": 20003})))
    assert found == ["case {'batch': 5, 'in_ff': 20003} names unknown axis 'in_ff'"]
    found = checks.check_stage(r(st, bytes_moved=lambda p: p["bacth"]))
    points = len(st.variants) * (1 + len(st.cases)) + sum(len(v.cases) for v in st.variants)
    assert found == ["bytes_moved at variant default's default point raised KeyError: "
                     f"'bacth' (and at {points - 1} more declared point(s))"]
    outputs = st.outputs
    found = checks.check_stage(r(st, outputs=lambda p: outputs(p) if p["batch"] != 6 else {}[1]))
    assert found[0].startswith("outputs at variant default's case {'batch': 6, 'in_f': 3584} "
                               "raised KeyError: 1 (and at ")
    stray = r(st, tolerances={**st.tolerances, "qq": st.tolerances["q"]})
    assert checks.check_stage(stray) == ["tolerance(s) of 'qq', an output no declared point "
                                         "has"]
    assert checks.check_stage(st) == []


def test_untolerated_outputs_are_named_sorted_with_their_variant(reg) -> None:  # type: ignore[no-untyped-def]
    """The outputs no tolerance judges come in name order, on a line naming the variant."""
    st = reg.get("find_min_max")
    names = ["mm", "h", "c", "x", "a", "q", "f", "z", "b"]
    many = dataclasses.replace(
        st, outputs=lambda p: {n: ((2,), np.dtype(np.int32)) for n in names})
    p = many.point(many.variants[0])
    assert checks.untolerated(many, p) == sorted(set(names) - {"mm"})
    _only(checks.check_stage(many),
          f"variant {many.variants[0].name}: output(s) a, b, c, f, h, q, x, z have no "
          "tolerance, so no validation would judge them")


def test_a_peer_of_a_bad_name_or_kind_is_named(reg) -> None:  # type: ignore[no-untyped-def]
    """A peer's name goes into CSV cells and is checked as a stage's is; something that is
    not a Peer is named as such, on a stage or a pipeline (not a crash)."""
    from harness.contract.stage import Peer

    st = reg.get("find_min_max")
    bad = {"Cu-BLAS": Peer(lambda torch, t, p, v: {})}
    _only(checks.check_stage(dataclasses.replace(st, peers=bad)),
          "peer 'Cu-BLAS': peer name 'Cu-BLAS' is not [a-z][a-z0-9_]* (lower-case letters, "
          "digits, _)")
    _only(checks.check_stage(dataclasses.replace(st, peers={"odd": 3})),
          "peer 'odd': is a int, not a harness.contract.stage.Peer")
    pipe = reg.pipelines["activation_path"]
    _only(checks.check_stage(dataclasses.replace(pipe, peers={"odd": 3})),
          "peer 'odd': is a int, not a harness.contract.stage.Peer")
