"""What a plugin hands over, checked on every run (the check every backend goes through):
its inputs and its reference's outputs against the declared shapes and dtypes."""

from __future__ import annotations

import dataclasses

import numpy as np

from harness.contract import handover


def test_every_builtin_declares_what_it_draws_and_gives_it(reg) -> None:  # type: ignore[no-untyped-def]
    """Each stage's inputs and reference outputs match its declarations at every validation
    case and family: the checks hold on the built-ins (and so cannot refuse good runs)."""
    for st in reg.stages.values():
        assert st.inputs is not None, st.name
        v = st.variants[0]
        for case in st.cases:
            p = st.point(v, **case)
            ins = st.make_inputs(np.random.default_rng(1), st.families[0], p)
            assert handover.input_problems(st, ins, p) == [], (st.name, case)
            assert handover.reference_problems(st, p, st.expected(ins, p, v)) == [], \
                (st.name, case)


def _x(reg):  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    p = st.point(batch=2, in_f=9)
    return st, p, st.make_inputs(np.random.default_rng(0), "normal", p)


def test_inputs_of_the_wrong_shape_dtype_or_name(reg) -> None:  # type: ignore[no-untyped-def]
    st, p, ins = _x(reg)
    assert handover.input_problems(st, {"x": ins["x"].astype(np.float64)}, p) == [
        "input x is float64[2, 9], declared float32[2, 9]"]
    assert handover.input_problems(st, {"x": ins["x"][:, :8]}, p) == [
        "input x is float32[2, 8], declared float32[2, 9]"]
    assert handover.input_problems(st, {"y": ins["x"]}, p) == [
        "inputs not drawn: x", "inputs not declared: y"]
    assert handover.input_problems(st, {"x": ins["x"].tolist()}, p) == [
        "input x is a list, not a NumPy array"]


def test_undeclared_inputs_still_meet_their_in_place_output(reg) -> None:  # type: ignore[no-untyped-def]
    st = dataclasses.replace(reg.get("transform_absmax"), inputs=None)
    p = st.point(st.variants[0], batch=2, in_f=9)
    ins = st.make_inputs(np.random.default_rng(0), "normal", p)
    assert handover.input_problems(st, ins, p) == []
    ins["q"] = ins["q"].astype(np.int64)  # v is written into q: it must be v's int32
    assert handover.input_problems(st, ins, p) == [
        "input q is int64[2, 9], declared int32[2, 9]"]


def test_a_reference_that_lies_is_named(reg) -> None:  # type: ignore[no-untyped-def]
    st, p, ins = _x(reg)
    ref = st.expected(ins, p, st.variants[0])
    assert ref["vth"].dtype == np.float64  # wider than declared: fine
    assert handover.reference_problems(st, p, ref) == []
    bad = {**ref, "q": ref["q"].astype(np.float64)}
    assert handover.reference_problems(st, p, bad) == [
        "reference output q is float64[2, 9], declared int32[2, 9]"]
    assert handover.reference_problems(st, p, {**ref, "q": ref["q"][:1]}) == [
        "reference output q is int32[1, 9], declared int32[2, 9]"]
    nan = ref["vth"].copy()
    nan[1] = np.nan
    assert handover.reference_problems(st, p, {**ref, "vth": nan}) == [
        "reference output vth has 1 NaN value(s) of 2"]
    wide = ref["q"].astype(np.int64)
    wide[0, 0] = 1 << 40
    assert handover.reference_problems(st, p, {**ref, "q": wide}) == [
        f"reference output q has values beyond int32 ({int(wide.min())}..{1 << 40})"]
    assert handover.reference_problems(st, p, {"q": ref["q"]}) == [
        "reference gave no output vth"]
    assert handover.reference_problems(st, p, {**ref, "q": ref["q"].astype(complex)}) == [
        "reference output q is complex128[2, 9], declared int32[2, 9]"]


def test_a_trimmed_output_may_have_fewer_planes(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("activation_fused")
    v = st.variants[0]
    p = st.point(v, batch=2, in_f=64)
    ins = st.make_inputs(np.random.default_rng(0), "normal", p)
    ref = st.expected(ins, p, v)
    declared = st.outputs(p)["spikes"][0]
    assert ref["spikes"].shape[0] < declared[0] and handover.reference_problems(st, p, ref) == []
    more = np.zeros((declared[0] + 1, *declared[1:]), np.int8)
    assert handover.reference_problems(st, p, {**ref, "spikes": more})[0].startswith(
        "reference output spikes is int8[")


def test_a_declared_input_wins_over_the_in_place_outputs_spec(reg) -> None:  # type: ignore[no-untyped-def]
    """Where the stage declares an input an output is written into, the declaration is
    what the drawn input is held to (the output's shape and dtype stand in only for an
    undeclared one)."""
    st = dataclasses.replace(reg.get("find_min_max"), inplace={"mm": "q"})
    p = st.point(st.variants[0], batch=2, in_f=9)
    ins = st.make_inputs(np.random.default_rng(0), st.families[0], p)
    assert set(st.inputs(p)) == {"q"} and st.outputs(p)["mm"] != st.inputs(p)["q"]
    assert handover.input_problems(st, ins, p) == []


def test_odd_but_sound_references_pass_and_odd_unsound_ones_are_named(reg) -> None:  # type: ignore[no-untyped-def]
    """A bool reference of an integer output casts within its kind; a trimmed output may
    have fewer planes but not other trailing dimensions; a scalar output of a trimming stage
    is judged whole; an object NumPy cannot make an array of is named, not raised."""
    st, p, ins = _x(reg)
    ref = st.expected(ins, p, st.variants[0])
    assert handover.reference_problems(st, p, {**ref, "q": ref["q"] > 0}) == []

    class NoArray:
        def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
            raise RuntimeError("no array here")

    assert handover.reference_problems(st, p, {**ref, "q": NoArray()}) == [
        "reference output q is not an array: no array here"]
    fused = reg.get("activation_fused")
    fp = fused.point(fused.variants[0], batch=2, in_f=64)
    planes, *rest = fused.outputs(fp)["spikes"][0]
    fref = fused.expected(fused.make_inputs(np.random.default_rng(0), "normal", fp), fp,
                          fused.variants[0])
    odd = np.zeros((planes - 1, rest[0], rest[1] + 1), np.int8)
    assert handover.reference_problems(fused, fp, {**fref, "spikes": odd}) == [
        f"reference output spikes is int8{list(odd.shape)}, declared "
        f"int8{[planes, *rest]}"]
    mm = reg.get("find_min_max")
    scalar = dataclasses.replace(mm, outputs=lambda p: {"mm": ((), np.dtype(np.int32))},
                                 trim=lambda o, p: dict(o))
    assert handover.reference_problems(scalar, mm.point(mm.variants[0]),
                                     {"mm": np.int32(3)}) == []


def test_a_reference_that_returns_a_bare_array_is_named_as_such(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    p = st.point(st.variants[0], **st.cases[0])
    got = handover.reference_problems(st, p, np.zeros(3))  # type: ignore[arg-type]
    assert got == ["reference returned a ndarray, not a dict of its outputs by name "
                   f"({', '.join(st.outputs(p))})"]
