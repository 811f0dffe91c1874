"""The validator must reject deliberately wrong outputs (fake executors, no GPU)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.backends.pycuda.runner import POISON32
from harness.engine import validate
from harness.contract.backend import RunResult

Corrupt = Callable[[dict, dict], None]


class Faulty:
    """Runs the reference, then lets ``corrupt(outputs, inputs_after)`` damage the result."""

    def __init__(self, corrupt: Corrupt) -> None:
        self.corrupt = corrupt

    def run(self, stage, variant, inputs, point) -> RunResult:  # type: ignore[no-untyped-def]
        res = NumpyRunner().run(stage, variant, inputs, point)
        outs = {k: v.copy() for k, v in res.outputs.items()}
        after = {k: v.copy() for k, v in inputs.items()}
        self.corrupt(outs, after)
        return RunResult(outs, after)


@pytest.fixture(scope="module")
def st(reg):  # type: ignore[no-untyped-def]
    return reg.get("dynamic_spikes")


def run_all(st, corrupt: Corrupt, families=("normal",), variant="default"):  # type: ignore[no-untyped-def]
    return list(validate.validate(st, st.variant(variant), Faulty(corrupt), families, seeds=1))


def test_correct_outputs_pass_every_case(st) -> None:
    cases = run_all(st, lambda o, a: None, families=st.families)
    assert cases and all(c.ok for c in cases)
    assert len(cases) == len(st.families) * len(st.cases)


def test_unwritten_q_element_is_rejected(st) -> None:
    def unwritten(o, a):  # the poison value left in place
        o["q"].flat[-1] = np.int32(POISON32)

    cases = run_all(st, unwritten)
    assert not any(c.ok for c in cases)
    text = cases[0].describe()
    assert "q: FAILED" in text and "1/" in text and "kernel=2141562277" in text


def test_unwritten_vth_is_reported_as_nan(st) -> None:
    def nan_vth(o, a):
        o["vth"][0] = np.nan

    c = run_all(st, nan_vth)[0]
    comp = next(x for x in c.comparisons if x.output == "vth")
    assert not comp.ok and comp.nan_got == 1 and "NaN kernel=1" in comp.describe()


def test_off_by_one_at_a_tie_is_rejected(st) -> None:
    """Rounding ties away from zero while half-to-even is asked fails on the ties rows."""
    away = run_all(st, lambda o, a: None, families=("edge",), variant="away")
    assert all(c.ok for c in away)  # judged as away: fine
    ties = st.variant("away")

    class AwayAsDefault:
        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            return NumpyRunner().run(stage, ties, inputs, point)

    cases = list(validate.validate(st, st.variant("default"), AwayAsDefault(), ["edge"], 1))
    failed = [c for c in cases if not c.ok]
    # Every case with an edge "ties" row (batch >= 5) whose vth stays 1 (k = 3, no clamp)
    # must fail: one element off is enough.
    tied = [c for c in cases if c.point["batch"] >= 5 and c.point["k"] == 3.0
            and c.point["vth_max"] > 1]
    assert tied and all(c in failed for c in tied)
    comp = next(x for x in failed[0].comparisons if x.output == "q")
    assert comp.worst == 1


def test_wrong_vth_is_rejected(st) -> None:
    def scaled(o, a):
        o["vth"] *= np.float32(1 + 3e-5)

    cases = run_all(st, scaled)
    comp = next(x for x in cases[0].comparisons if x.output == "vth")
    assert not comp.ok and comp.metric == "rel" and 2e-5 < comp.worst < 4e-5


def test_mutated_input_is_rejected(st) -> None:
    def mutate(o, a):
        a["x"].flat[0] += 1

    c = run_all(st, mutate)[0]
    assert not c.ok and "input x was modified" in c.problems[0]


def test_missing_and_misshapen_outputs_are_rejected(st) -> None:
    cases = run_all(st, lambda o, a: o.pop("vth"))
    assert "outputs not returned: vth" in cases[0].problems[0]

    def wrong_type(o, a):
        o["q"] = o["q"].astype(np.int64)

    assert "is int64" in run_all(st, wrong_type)[0].problems[0]


def test_fresh_inputs_for_every_seed_and_family(st) -> None:
    seen = []

    class Spy:
        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            seen.append(inputs["x"].tobytes())
            return NumpyRunner().run(stage, variant, inputs, point)

    list(validate.validate(st, st.variants[0], Spy(), ["normal", "llm"], seeds=3))
    assert len(seen) == 2 * 3 * len(st.cases)
    # batch=1 / in_f=1 style cases can collide only by chance; the big ones never do.
    assert len(set(seen)) >= len(seen) - 2


def test_worst_errors_summarises_per_output(st) -> None:
    cases = run_all(st, lambda o, a: None)
    assert validate.worst_errors(cases).startswith("q abs 0; vth rel ")


def test_nonfinite_inputs_are_named_and_counted(st) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 3), np.float32)
    x[0, 1], x[1, 2] = np.nan, np.inf
    assert validate.nonfinite({"x": x}) == \
        "bad input: x has 2 non-finite value(s) (1 NaN, 1 inf) of 6"
    assert validate.nonfinite({"x": np.ones(3, np.float32), "q": np.ones(3, np.int32)}) is None


def test_nonfinite_inputs_fail_a_case_without_running(st) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    def nan_inputs(rng, fam, p):  # type: ignore[no-untyped-def]
        x = st.make_inputs(rng, fam, p)["x"]
        x.flat[0] = np.nan
        return {"x": x}

    class Never:
        def run(self, *a):  # type: ignore[no-untyped-def]
            raise AssertionError("a kernel must not run on non-finite input")

    bad = dataclasses.replace(st, make_inputs=nan_inputs)
    cases = list(validate.validate(bad, st.variants[0], Never(), ["normal"], 1))
    assert cases and all("x has 1 non-finite" in c.problems[0] for c in cases)


def test_guard_band_damage_is_reported(st) -> None:  # type: ignore[no-untyped-def]
    p = st.point(batch=2, in_f=8)
    x = st.make_inputs(np.random.default_rng(0), "normal", p)
    res = NumpyRunner().run(st, st.variants[0], x, p)
    hit = RunResult(res.outputs, res.inputs_after, {"q": 4, "vth": 0})
    _, problems = validate.judge(st, st.variants[0], p, x, hit)
    assert problems == ("wrote past the end of q: 4 byte(s) of the guard band after it "
                        "changed",)


def test_guard_pattern_is_the_poison() -> None:
    from harness.backends.pycuda.runner import GUARD, guard_pattern

    g32 = guard_pattern(np.dtype(np.int32))
    assert g32.size == GUARD and g32[:4].tolist() == [0xA5, 0xA5, 0xA5, 0x7F]
    assert set(guard_pattern(np.dtype(np.int8)).tolist()) == {0xA5}


class Padded:
    """activation_fused as the GPU leaves it: the reference's T planes at the start of a
    capacity-sized buffer whose other planes keep the poison; then ``corrupt``."""

    def __init__(self, corrupt: Corrupt) -> None:
        self.corrupt = corrupt

    def run(self, stage, variant, inputs, point) -> RunResult:  # type: ignore[no-untyped-def]
        outs = dict(NumpyRunner().run(stage, variant, inputs, point).outputs)
        shape, dtype = stage.outputs(point)["spikes"]
        buf = np.full(shape, -91, dtype=dtype)  # POISON8 as int8
        buf[: outs["spikes"].shape[0]] = outs["spikes"]
        outs["spikes"] = buf
        self.corrupt(outs, inputs)
        return RunResult(outs, {k: v.copy() for k, v in inputs.items()})


@pytest.mark.parametrize("corrupt, ok, text", [
    (lambda o, a: None, True, ""),
    (lambda o, a: o["stats"].__setitem__(3, o["stats"][3] + 1), False, "stats: FAILED"),
    (lambda o, a: o["spikes"].__setitem__((0, 0, 0), 1 - o["spikes"][0, 0, 0]), False,
     "spikes: FAILED"),
])
def test_a_kernel_decided_extent_is_judged_on_what_it_wrote(reg, corrupt, ok, text) -> None:  # type: ignore[no-untyped-def]
    """activation_fused writes T planes of a larger buffer: only those are judged, and a
    wrong T or a wrong bit in them still fails."""
    fused = reg.get("activation_fused")
    v = fused.variants[0]
    cases = list(validate.validate(fused, v, Padded(corrupt), ["normal"], seeds=1))
    assert cases and all(c.ok == ok for c in cases), cases[0].describe()
    if not ok:
        assert text in cases[0].describe()
