"""The validator must reject deliberately wrong outputs (fake executors, no GPU)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.backends.pycuda.buffers import POISON32, poisoned
from harness.contract.backend import RunResult
from harness.engine import validate
from harness.errors import BadInput

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
    # Every case with an edge "ties" row (batch >= 5, unless the draw made every row
    # negative) whose vth stays 1 (k = 3, no clamp) must fail: one element off is enough.
    drawn = [st.make_inputs(validate.case_rng(0, st.name, fam, ci, si), fam, point)["x"]
             for fam, ci, si, point in validate.cases(st, st.variant("default"), ["edge"], 1)]
    tied = [c for c, x in zip(cases, drawn, strict=True)
            if c.point["batch"] >= 5 and c.point["k"] == 3.0 and c.point["vth_max"] > 1
            and not (x < 0).all()]
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


def _case(ok: bool, vth_rel: float) -> validate.CaseResult:
    from harness.contract.tolerance import Comparison

    return validate.CaseResult("s", "v", "normal", 0, {}, (
        Comparison("vth", ok, "rel", vth_rel, 0 if ok else 1, 4, 0, 0),
        Comparison("q", True, "abs", 0.0, 0, 4, 0, 0)))


def test_worst_errors_is_the_largest_of_every_case() -> None:
    """The ledger's worst_error column: per output, the largest over the cases, whichever
    case holds it."""
    assert validate.worst_errors([_case(True, 2e-7), _case(True, 3e-3), _case(True, 1e-9)]) \
        == "q abs 0; vth rel 0.003"
    assert validate.worst_errors([_case(True, 3e-3), _case(True, 2e-7)]) == \
        "q abs 0; vth rel 0.003"


def test_a_ledger_row_passes_only_when_every_case_did() -> None:
    import types

    info = types.SimpleNamespace(name="NVIDIA H200", cc=(9, 0), driver="1", cuda="13.0")
    rows = {}
    for name, cases in (("all", [_case(True, 0.0)] * 2), ("one bad", [_case(True, 0.0),
                                                                      _case(False, 1.0)]),
                        ("none", [])):
        summary = validate.ValidationSummary("s", "v", "h", ["normal"], cases)
        rows[name] = summary.ledger_row(info, 3)
    assert {k: (r["status"], r["cases"], r["passed"]) for k, r in rows.items()} == {
        "all": ("pass", 2, 2), "one bad": ("fail", 2, 1), "none": ("fail", 0, 0)}


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
    from harness.backends.pycuda.buffers import GUARD, guard_pattern

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
        buf = poisoned(shape, dtype)
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


class TwoPoisons:
    """A GPU run as the pycuda runner returns it: the outputs under the first poison and
    ``again`` under the second, the reference's values where the kernel wrote; activation
    _fused's planes past T keep each poison; ``skip(name, array)`` picks an element the
    kernel leaves unwritten (None: none)."""

    def __init__(self, skip=None) -> None:  # type: ignore[no-untyped-def]
        self.skip = skip
        self.skipped: list[int] = []

    def run(self, stage, variant, inputs, point) -> RunResult:  # type: ignore[no-untyped-def]
        ref = NumpyRunner().run(stage, variant, inputs, point).outputs
        runs = []
        for pattern in (0, 1):
            outs = {k: v.copy() for k, v in ref.items()}
            if "spikes" in outs and stage.name == "activation_fused":
                shape, dtype = stage.outputs(point)["spikes"]
                buf = poisoned(shape, dtype, pattern)
                buf[: outs["spikes"].shape[0]] = outs["spikes"]
                outs["spikes"] = buf
            for name, arr in outs.items():
                i = self.skip(name, arr) if self.skip else None
                if i is not None:
                    if pattern == 0:
                        self.skipped.append(int(arr.flat[i]))
                    arr.flat[i] = poisoned((1,), arr.dtype, pattern)[0]
            runs.append(outs)
        return RunResult(runs[0], {k: v.copy() for k, v in inputs.items()}, again=runs[1])


def test_an_unwritten_element_fails_even_where_the_poison_is_its_value(reg) -> None:  # type: ignore[no-untyped-def]
    """The first poison of an int8 output is -91, a value a quantised weight rightly
    holds: a kernel that leaves such an element unwritten matches the reference in the
    first run, and only the run repeated under the second poison tells. Planes past the
    kernel's T keep each poison and are not judged."""
    wq = reg.get("weight_quantize")
    v = wq.variants[0]

    def at_minus_91(name, arr):  # type: ignore[no-untyped-def]
        hits = np.flatnonzero(arr == -91) if name == "w_q" else ()
        return int(hits[0]) if len(hits) else None

    runner = TwoPoisons(at_minus_91)
    cases = list(validate.validate(wq, v, runner, ["normal"], seeds=1))
    assert runner.skipped and set(runner.skipped) == {-91}  # equal to the first poison
    failed = [c for c in cases if not c.ok]
    assert len(failed) == len(runner.skipped)
    assert "w_q: 1 element(s) differ between two runs under different poisons" in \
        failed[0].describe()
    assert all(c.ok for c in validate.validate(wq, v, TwoPoisons(), ["normal"], seeds=1))
    fused = reg.get("activation_fused")
    assert all(c.ok for c in validate.validate(fused, fused.variants[0], TwoPoisons(),
                                               ["normal"], seeds=1))


def test_pipelines_go_through_the_same_loop(reg) -> None:  # type: ignore[no-untyped-def]
    """A pipeline's cases run through the backend's pipeline run and its own check."""
    from tests.engine.host import HostRunner

    pipe = reg.pipelines["spike_quant_gemm"]
    v = pipe.variants[0]
    cases = list(validate.validate(pipe, v, HostRunner(), ["ramp", "edge"], 1,
                                   stages=reg.stages))
    assert len(cases) == 2 * len(pipe.cases) and all(c.ok for c in cases)

    def off(outs):  # type: ignore[no-untyped-def]
        outs["spikes"].flat[0] ^= 1

    bad = list(validate.validate(pipe, v, HostRunner(corrupt=off), ["normal"], 1,
                                 stages=reg.stages))
    assert bad and not any(c.ok for c in bad)
    assert "spikes: FAILED" in bad[0].describe()
    with pytest.raises(ValueError, match="pass them"):
        list(validate.validate(pipe, v, HostRunner(), ["normal"], 1))


def test_validation_summaries(reg) -> None:  # type: ignore[no-untyped-def]
    """Stages: the options pick variants and replace their axes in every case; pipelines:
    every variant, at their declared cases, hashed over their steps' kernels."""
    import dataclasses

    from harness.contract.stage import Variant
    from harness.engine.targets import Targets, resolve
    from harness.errors import BadInput
    from harness.results import ledger
    from tests.engine.host import HostRunner

    tg = resolve(reg, ["spike_encode", "compute_scales"], False)
    opts = {"mode": "twos_complement", "k": "2.5", "group_size": "7"}
    sums = list(validate.validation(reg, tg, NumpyRunner(), "all", ["normal"], 1, 0, opts))
    assert [(s.name, s.variant) for s in sums] == [("spike_encode", "twos_complement"),
                                                   ("compute_scales", "default")]
    assert {c.point["k"] for c in sums[0].cases} == {2.5}
    assert {c.point["group_size"] for c in sums[1].cases} == {7}
    assert all(s.passed == len(s.cases) for s in sums)
    with pytest.raises(BadInput, match=r"unknown mode .ternary."):
        list(validate.validation(reg, tg, NumpyRunner(), "all", ["normal"], 1, 0,
                                 {"mode": "ternary"}))

    pipe = reg.pipelines["spike_quant_gemm"]
    two = dataclasses.replace(
        pipe, name="two", cases=pipe.cases[:1],
        variants=(Variant("plain", pins=(("with_gemm", 0),)),
                  Variant("gemm", pins=(("with_gemm", 1),))))
    sums = list(validate.validation(reg, Targets([], [two]), HostRunner(), "all", ["normal"],
                                    1, 0, {"k": "2.5"}))
    assert [(s.name, s.variant) for s in sums] == [("two", "plain"), ("two", "gemm")]
    assert [c.point["with_gemm"] for s in sums for c in s.cases] == [0, 1]
    # at the declared cases: --k is not applied to pipelines
    assert [c.point for s in sums for c in s.cases] == [two.point(v, **two.cases[0])
                                                       for v in two.variants]
    assert {s.kernel_hash for s in sums} == {ledger.pipeline_hash(two, reg.stages)}
    assert all(s.passed == len(s.cases) == 1 for s in sums)


class _Info:
    name, cc, driver, cuda = "Fake GPU", (9, 0), "1", "13.0"


class FakeGpu(NumpyRunner):
    """The NumPy references with a device, as `harness validate` opens the GPU."""

    device = type("D", (), {"info": _Info()})()


def test_validate_targets_records_one_ledger_row_per_variant(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import BadInput
    from harness.results import ledger

    monkeypatch.setattr(validate, "open_gpu", lambda device: FakeGpu())
    monkeypatch.setattr(ledger, "default_path", lambda: tmp_path / "ledger.csv")
    rep = validate.validate_targets(reg, ["dynamic_spikes"], families=["normal"], seeds=1,
                                    record=True)
    assert rep.recorded == tmp_path / "ledger.csv" and rep.failure is None
    rows = ledger.read(rep.recorded)
    assert [(r["stage"], r["variant"], r["status"], r["gpu"], r["cc"]) for r in rows] == [
        ("dynamic_spikes", "default", "pass", "Fake GPU", "9.0"),
        ("dynamic_spikes", "away", "pass", "Fake GPU", "9.0")]
    assert validate.validate_targets(reg, ["dynamic_spikes"], families=["normal"],
                                     seeds=1).recorded is None
    with pytest.raises(BadInput, match="unknown input family 'zipf'"):
        validate.validate_targets(reg, ["dynamic_spikes"], families=["zipf"])
    with pytest.raises(BadInput, match="--record keeps whole validations: k replaces an axis"):
        validate.validate_targets(reg, ["dynamic_spikes"], options={"k": "4"}, record=True)
    # --mode that only picks the variants pinning it narrows no case: recorded.
    fused = validate.validate_targets(reg, ["spike_encode"], options={"mode": "bidirectional"},
                                      families=["normal"], seeds=1, record=True)
    assert [s.variant for s in fused.summaries] == ["bidirectional"]
    assert len(ledger.read(rep.recorded)) == 3  # the refused run recorded nothing
    # A narrowed run (one family, one seed) is recorded as it was, but is not what the
    # check counts.
    st = reg.get("dynamic_spikes")
    assert not any(s.ok for s in ledger.check([st], rows))


def test_a_failed_case_is_the_reports_verdict(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")

    def off(o, a):  # type: ignore[no-untyped-def]
        o["q"].flat[0] += 1

    cases = run_all(st, off)
    rep = validate.ValidationReport([validate.ValidationSummary("s", "v", "h", ["normal"],
                                                                cases)])
    assert rep.failures == cases and rep.failure == f"{len(cases)} validation case(s) failed"


def test_a_reference_that_lies_fails_the_case_on_every_backend(st) -> None:  # type: ignore[no-untyped-def]
    """The judge checks the reference with the numpy backend's own check: a kernel's
    outputs are never judged against a NaN reference."""
    import dataclasses

    def nan_ref(i, p, v, given=None):  # type: ignore[no-untyped-def]
        r = st.reference(i, p, v, given)
        return {**r, "vth": np.full_like(r["vth"], np.nan)}

    liar = dataclasses.replace(st, reference=nan_ref)
    p = liar.point(batch=2, in_f=9)
    x = liar.make_inputs(np.random.default_rng(0), "normal", p)
    res = Faulty(lambda o, a: None).run(st, st.variants[0], x, p)
    comps, problems = validate.judge(liar, liar.variants[0], p, x, res)
    assert comps == () and problems == ("reference output vth has 2 NaN value(s) of 2",)


def test_inputs_against_their_declaration_fail_a_case_without_running(st) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    def wide(rng, fam, p):  # type: ignore[no-untyped-def]
        return {"x": st.make_inputs(rng, fam, p)["x"].astype(np.float64)}

    ran = []
    liar = dataclasses.replace(st, make_inputs=wide)
    out = list(validate.validate(liar, st.variants[0], Faulty(lambda o, a: ran.append(1)),
                                 ["normal"], seeds=1))
    assert ran == [] and all(not c.ok for c in out)
    b, f = out[0].point["batch"], out[0].point["in_f"]
    assert out[0].problems == (f"input x is float64[{b}, {f}], declared float32[{b}, {f}]",)


def test_bad_input_is_said_before_the_gpu_opens_and_before_any_case(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A variant one named target lacks, or an option value out of range, is bad input
    before the GPU is opened: not after the targets before it were validated."""
    def no_gpu(device):  # type: ignore[no-untyped-def]
        raise AssertionError("the GPU was opened before the input was checked")

    monkeypatch.setattr(validate, "open_gpu", no_gpu)
    with pytest.raises(BadInput, match="stage find_min_max has no variant 'bidirectional'"):
        validate.validate_targets(reg, ["spike_encode", "find_min_max"],
                                  variant="bidirectional")
    with pytest.raises(BadInput, match="k must be >= 1e-30"):
        validate.validate_targets(reg, ["compute_scales", "spike_encode"], options={"k": "0"})


def test_an_interrupted_validation_keeps_the_rows_of_the_variants_it_ended(
        reg, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each target variant's ledger row is written as its validation ends: Ctrl-C during
    the second keeps the first's (the GPU stands in as the NumPy references)."""
    import types

    from harness.backends.pycuda.context import DeviceInfo
    from harness.results import ledger

    book = tmp_path / "ledger.csv"
    monkeypatch.setattr(ledger, "default_path", lambda: book)
    info = DeviceInfo(0, "NVIDIA H200", (9, 0), 132, 60 << 20, 141 << 30, "580.1", "13.0",
                      1980, 3201, 6144)
    runner = NumpyRunner()
    monkeypatch.setattr(validate, "open_gpu", lambda device: types.SimpleNamespace(
        run=runner.run, device=types.SimpleNamespace(info=info)))
    real = validate.validate

    def cases(target, variant, *a, **k):  # type: ignore[no-untyped-def]
        if variant.name == "away":
            raise KeyboardInterrupt
        return real(target, variant, *a, **k)

    monkeypatch.setattr(validate, "validate", cases)
    with pytest.raises(KeyboardInterrupt):
        validate.validate_targets(reg, ["dynamic_spikes"], seeds=1, record=True)
    rows = ledger.read(book)
    assert [(r["stage"], r["variant"], r["status"]) for r in rows] == \
        [("dynamic_spikes", "default", "pass")]


def test_validations_side_by_side_share_the_ledger(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The ledger is held only while a row is appended, not through the GPU work: a second
    validation that records while the first is still running (as one process a stage, or a
    GPU each, would) lands its row, and the first's rows follow."""
    from harness.results import ledger

    book = tmp_path / "ledger.csv"
    monkeypatch.setattr(ledger, "default_path", lambda: book)
    monkeypatch.setattr(ledger, "APPEND_WAIT", 0.05)  # a lock held through a run would fail
    inner: list[validate.ValidationReport] = []
    started: list[bool] = []

    class Beside(FakeGpu):
        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            if not started:  # the other validation runs, and records, in the middle of this
                started.append(True)
                inner.append(validate.validate_targets(reg, ["spike_decode"], variant="all",
                                                       families=["normal"], seeds=1,
                                                       record=True))
            return super().run(stage, variant, inputs, point)

    monkeypatch.setattr(validate, "open_gpu", lambda device: Beside())
    rep = validate.validate_targets(reg, ["dynamic_spikes"], families=["normal"], seeds=1,
                                    record=True)
    assert rep.failure is None and inner and inner[0].rows == len(inner[0].summaries) > 0
    rows = ledger.read(book)
    assert [r["stage"] for r in rows] == ["spike_decode"] * inner[0].rows + ["dynamic_spikes"] * 2
    assert all(r["status"] == "pass" for r in rows)


def test_a_failed_append_does_not_stop_the_validation(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Where the ledger stays locked by another run past the wait, the validation goes on:
    every variant is judged and reported, and ``unrecorded`` names the rows left out."""
    from filelock import FileLock

    from harness.results import files, ledger

    book = tmp_path / "ledger.csv"
    monkeypatch.setattr(ledger, "default_path", lambda: book)
    monkeypatch.setattr(ledger, "APPEND_WAIT", 0.05)
    held = FileLock(files.lock_path(book), timeout=0)

    class Locking(FakeGpu):
        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            if not held.is_locked:  # another run takes the ledger once this one began
                held.acquire()
            return super().run(stage, variant, inputs, point)

    monkeypatch.setattr(validate, "open_gpu", lambda device: Locking())
    try:
        rep = validate.validate_targets(reg, ["dynamic_spikes"], families=["normal"],
                                        seeds=1, record=True)
    finally:
        held.release()
    assert [(s.variant, s.passed == len(s.cases) > 0) for s in rep.summaries] == [
        ("default", True), ("away", True)]
    assert rep.rows == 0 and rep.failure is None
    assert rep.unrecorded.endswith("not recorded in the ledger: dynamic_spikes [default], "
                                   "dynamic_spikes [away] (0 row(s) written before it)")


def test_a_pipeline_validates_the_variant_named(reg) -> None:  # type: ignore[no-untyped-def]
    """``--variant`` picks a pipeline's variant as it picks a stage's (a process a variant,
    side by side, validates each once); ``all`` takes every one; a name it lacks is one
    line."""
    from harness.engine.targets import resolve

    def chosen(names: list[str], variant: str) -> list[tuple[str, str]]:
        tg = resolve(reg, names, with_pipelines=True)
        return [(u.target.name, u.variant.name)
                for u in validate.units(reg, tg, variant, None, {})]

    assert chosen(["spike_linear"], "any") == [("spike_linear", "any")]
    assert chosen(["spike_linear"], "all") == [
        ("spike_linear", v.name) for v in reg.pipelines["spike_linear"].variants]
    with pytest.raises(BadInput, match="spike_linear has no variant 'int9'"):
        chosen(["spike_linear"], "int9")


def test_an_in_place_kernel_may_overwrite_its_input_and_no_other(reg) -> None:  # type: ignore[no-untyped-def]
    """transform_absmax writes v over q (declared in place): a backend that really does so
    passes every case; one that also changes mm (not in place) fails, naming it; and a
    backend that reports no input back is not judged on inputs at all."""
    st = reg.get("transform_absmax")

    def in_place(o, a):  # type: ignore[no-untyped-def]
        a["q"][...] = o["v"]

    assert all(c.ok for c in validate.validate(st, st.variants[0], Faulty(in_place),
                                               ("normal",), seeds=1))

    def and_mm(o, a):  # type: ignore[no-untyped-def]
        a["q"][...] = o["v"]
        a["mm"][0] += 1

    cases = list(validate.validate(st, st.variants[0], Faulty(and_mm), ("normal",), seeds=1))
    assert cases and not any(c.ok for c in cases)
    assert "input mm was modified by the kernel (" in cases[0].describe()

    def forgets(o, a):  # type: ignore[no-untyped-def]
        a.clear()

    assert all(c.ok for c in validate.validate(st, st.variants[0], Faulty(forgets),
                                               ("normal",), seeds=1))


def test_a_case_that_loses_the_device_context_stops_the_validation(reg, monkeypatch,  # type: ignore[no-untyped-def]
                                                                   tmp_path) -> None:
    """A sticky CUDA error fails its case (which says so) and ends its variant's cases; its
    variant's ledger row is written, failed; the report says where it stopped and which
    variants were not validated. Another exception is not swallowed."""
    from harness.results import ledger

    class Lost(FakeGpu):
        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            raise RuntimeError("cuStreamSynchronize failed: an illegal memory access was "
                               "encountered")

    monkeypatch.setattr(validate, "open_gpu", lambda device: Lost())
    monkeypatch.setattr(ledger, "default_path", lambda: tmp_path / "ledger.csv")
    rep = validate.validate_targets(reg, ["dynamic_spikes"], families=["normal"], seeds=1,
                                    record=True)
    assert [s.variant for s in rep.summaries] == ["default"] and rep.failure
    assert re.fullmatch(r"stopped: the run lost the device context: RuntimeError: .*illegal "
                        r"memory access was encountered, at dynamic_spikes \[default\] "
                        r"family=normal seed=0 batch=\d+, .*; not validated: dynamic_spikes "
                        r"--variant away \(validate each in a new process: harness validate "
                        r"NAME --variant VARIANT\)", rep.stopped), rep.stopped
    last = validate.validate_targets(reg, ["dynamic_spikes"], variant="away",
                                     families=["normal"], seeds=1)
    assert last.stopped.endswith("; no variant was left to validate")
    rows = ledger.read(tmp_path / "ledger.csv")
    assert [(r["variant"], r["status"]) for r in rows] == [("default", "fail")]
    cases = list(validate.validate(reg.get("dynamic_spikes"), reg.get("dynamic_spikes")
                                   .variant("default"), Lost(), ["normal"], seeds=2))
    assert len(cases) == 1 and cases[0].problems[0].startswith(validate.LOST)

    class Broken(FakeGpu):
        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            raise RuntimeError("cuLaunchKernel failed: invalid argument")

    with pytest.raises(RuntimeError, match="invalid argument"):
        list(validate.validate(reg.get("dynamic_spikes"),
                               reg.get("dynamic_spikes").variant("default"), Broken(),
                               ["normal"], seeds=1))
