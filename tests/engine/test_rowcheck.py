"""A timed row checked at its own size: whole up to the limit, on a sample of rows above it
where the target declares its rows, whole otherwise; with fake backends whose outputs are
wrong in one late row, or in a run of rows."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.contract.backend import RunResult
from harness.contract.stage import Axis, Pipeline, PipelineTrace, Rows, Stage, Variant
from harness.contract.timing import Timing, TimingConfig
from harness.contract.tolerance import Exact, NormRel, RelTol
from harness.engine import measure as m
from harness.engine import rowcheck
from harness.engine.jobs import Job
from harness.results.provenance import RunMeta
from tests.engine.host import HostRunner

FAST = m.BenchConfig(timing=TimingConfig(warmup=0, min_samples=5, max_samples=5))
META = RunMeta(gpu="Fake GPU", git_sha="abc", command="t")
#: The toy's point: 8 000 elements in and out, over the limit the tests set.
BATCH, IN_F, LIMIT = 1000, 4, 100


class FakeGpu:
    """The reference's outputs as a kernel's, made wrong by ``corrupt``; a fixed time."""

    backend = "pycuda"

    def __init__(self, corrupt: Any = None) -> None:
        self.corrupt = corrupt

    def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
        res = NumpyRunner().run(stage, variant, inputs, point)
        if self.corrupt is not None:
            self.corrupt(res.outputs)
        return RunResult(res.outputs, dict(inputs)), Timing(100.0, 99.0, 101.0, 0.5, 5, True)

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, MemoryError)


def scaled(kernel_dir: Path, seen: list[np.ndarray], **changes: Any) -> Stage:
    """``y = x * s`` row by row; the reference notes the rows of ``x`` it is given."""
    (kernel_dir / "scaled.cu").write_text("// never compiled: the fakes run the reference\n")

    def reference(ins, p, v):  # type: ignore[no-untyped-def]
        seen.append(ins["x"].copy())
        return {"y": ins["x"].astype(np.float64) * ins["s"]}

    st = Stage(
        name="scaled", entry_points=("scaled",),
        axes=(Axis("batch", 8), Axis("in_f", IN_F)), families=("normal",),
        make_inputs=lambda rng, fam, p: {
            "x": rng.standard_normal((p["batch"], p["in_f"])).astype(np.float32),
            "s": rng.standard_normal(p["in_f"]).astype(np.float32)},
        outputs=lambda p: {"y": ((p["batch"], p["in_f"]), np.dtype(np.float32))},
        reference=reference, enqueue=lambda launch, bufs, p, v: None,
        bytes_moved=lambda p: 8 * p["batch"] * p["in_f"], flops=lambda p: 0,
        tolerances={"y": RelTol(1e-6, "one rounding")}, cases=({},),
        rows=Rows("batch", {"x": 0}, {"y": 0}), kernel_dir=kernel_dir)
    return dataclasses.replace(st, **changes)


def job(st: Stage, batch: int = BATCH) -> Job:
    return Job(st, st.variants[0], st.point(batch=batch))


@pytest.fixture
def limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rowcheck, "FULL_CHECK_LIMIT", LIMIT)


def wrong_rows(first: int, last: int) -> Any:
    def corrupt(outs: dict[str, np.ndarray]) -> None:
        outs["y"][first:last + 1] += 1.0
    return corrupt


def test_the_limit_is_two_to_the_26_elements() -> None:
    assert rowcheck.FULL_CHECK_LIMIT == 2**26 and rowcheck.SAMPLE_ROWS == 64


def test_below_the_limit_the_whole_run_is_checked(tmp_path: Path) -> None:
    seen: list[np.ndarray] = []
    row = m.measure(job(scaled(tmp_path, seen)), FakeGpu(), FAST, META)
    assert row["status"] == "ok" and row["verified"] == "yes"
    assert [len(x) for x in seen] == [BATCH, BATCH]  # the run, then the check


def test_a_correct_large_point_passes_on_a_sample_of_its_rows(tmp_path: Path, limit) -> None:  # type: ignore[no-untyped-def]
    seen: list[np.ndarray] = []
    row = m.measure(job(scaled(tmp_path, seen)), FakeGpu(), FAST, META)
    assert row["status"] == "ok" and row["reason"] == ""
    assert row["verified"] == f"sampled:{rowcheck.SAMPLE_ROWS}/{BATCH}"
    assert [len(x) for x in seen] == [BATCH, rowcheck.SAMPLE_ROWS]


def test_one_wrong_late_row_fails_the_row(tmp_path: Path, limit) -> None:  # type: ignore[no-untyped-def]
    row = m.measure(job(scaled(tmp_path, [])), FakeGpu(wrong_rows(BATCH - 1, BATCH - 1)),
                    FAST, META)
    assert row["status"] == "failed" and row["verified"] == "no" and row["median_us"] > 0
    # The element is named as in the whole output, and the check says it was a sample.
    assert row["reason"].startswith("y: FAILED") and f"[{BATCH - 1}, 0]" in row["reason"]
    assert f"on {rowcheck.SAMPLE_ROWS} of {BATCH} rows (batch)" in row["reason"]


@pytest.mark.parametrize("start", [1, 400, 930])
def test_a_run_of_wrong_rows_anywhere_fails_the_row(tmp_path: Path, limit, start: int) -> None:  # type: ignore[no-untyped-def]
    stretch = math.ceil((BATCH - 2) / (rowcheck.SAMPLE_ROWS - 2))
    row = m.measure(job(scaled(tmp_path, [])),
                    FakeGpu(wrong_rows(start, start + 2 * stretch - 1)), FAST, META)
    assert row["status"] == "failed" and row["verified"] == "no"


def test_the_rows_checked_are_fixed_by_the_point(tmp_path: Path, limit,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Which rows a check picks (not their values, which follow the inputs) depends on the
    seed and the point alone, from a generator apart from the inputs' own."""
    from harness.contract.rng import point_rng

    picked: list[np.ndarray] = []
    real = rowcheck.chosen

    def spy(*args: Any) -> Any:
        idx = real(*args)
        picked.append(idx)
        return idx

    monkeypatch.setattr(rowcheck, "chosen", spy)
    st = scaled(tmp_path, [])
    # The other point keeps the row count (in_f, not batch, moves): picks that ignored the
    # point would be the same rows there.
    other = Job(st, st.variants[0], st.point(batch=BATCH, in_f=IN_F + 1))
    for cfg, j in ((FAST, job(st)), (FAST, job(st)), (dataclasses.replace(FAST, seed=1), job(st)),
                   (FAST, other)):
        m.measure(j, FakeGpu(), cfg, META)
    a, again, seed1, other_point = picked
    assert a is not None and len(a) == rowcheck.SAMPLE_ROWS == len(other_point)
    assert np.array_equal(a, again)  # measured again: the same rows
    assert not np.array_equal(a, seed1) and not np.array_equal(a, other_point)
    inputs_own = rowcheck.pick_rows(BATCH, rowcheck.SAMPLE_ROWS,
                                    point_rng(0, st.name, "normal", job(st).point))
    assert not np.array_equal(a, inputs_own)  # not the inputs' stream


def test_a_stage_without_rows_is_checked_whole_above_the_limit(tmp_path: Path, limit) -> None:  # type: ignore[no-untyped-def]
    seen: list[np.ndarray] = []
    st = scaled(tmp_path, seen, rows=None)
    row = m.measure(job(st), FakeGpu(), FAST, META)
    assert row["status"] == "ok" and row["verified"] == "yes"
    assert [len(x) for x in seen] == [BATCH, BATCH]
    row = m.measure(job(st), FakeGpu(wrong_rows(BATCH - 3, BATCH - 3)), FAST, META)
    assert row["status"] == "failed" and row["verified"] == "no"


def test_few_rows_are_all_checked(tmp_path: Path, limit) -> None:  # type: ignore[no-untyped-def]
    seen: list[np.ndarray] = []
    st = scaled(tmp_path, seen)
    point = st.point(batch=rowcheck.SAMPLE_ROWS, in_f=100)  # over the limit, 64 rows
    row = m.measure(Job(st, st.variants[0], point), FakeGpu(), FAST, META)
    assert row["verified"] == "yes" and [len(x) for x in seen] == [64, 64]


@pytest.mark.parametrize(("rows", "why"), [
    (Rows("batch", {"x": 1}, {"y": 0}),
     "plugin scaled: rows: input x is float32[1000, 4], without 1000 rows (batch) along "
     "dimension 1"),
    (Rows("batch", {"x": 0}, {"y": 0, "z": 0}),
     "plugin scaled: rows names output z, which the run has not"),
    (Rows("batch", {"xx": 0}, {"y": 0}),
     "plugin scaled: rows names input xx, which the run has not"),
])
def test_a_wrong_rows_declaration_is_a_failed_row(tmp_path: Path, limit, rows: Rows,  # type: ignore[no-untyped-def]
                                                  why: str) -> None:
    row = m.measure(job(scaled(tmp_path, [], rows=rows)), FakeGpu(), FAST, META)
    assert (row["status"], row["verified"], row["reason"]) == ("failed", "no", why)


def test_every_output_must_have_its_rows_named() -> None:
    part = rowcheck.cut(Rows("batch", {}, {"y": 0}), {"batch": 3},
                        {}, {"y": np.zeros(3), "t": np.zeros(1)}, np.array([0, 2]), "two")
    assert part.problems == ["plugin two: rows names no dimension of rows for output t"]


def test_nothing_checked_is_never_yes(tmp_path: Path, limit) -> None:  # type: ignore[no-untyped-def]
    st = scaled(tmp_path, [])
    assert "verified" not in m.measure(job(st), FakeGpu(), dataclasses.replace(FAST, verify=False),
                                       META)
    assert "verified" not in m.measure(job(st), NumpyRunner(), FAST, META)  # the reference itself


def test_pick_rows_spans_the_rows() -> None:
    n, k = 10_000, rowcheck.SAMPLE_ROWS
    stretch = math.ceil((n - 2) / (k - 2))
    for seed in range(20):
        idx = rowcheck.pick_rows(n, k, np.random.default_rng(seed))
        assert len(idx) == k and idx[0] == 0 and idx[-1] == n - 1
        assert np.all(np.diff(idx) > 0) and np.all(np.diff(idx) < 2 * stretch + 1)
    assert np.array_equal(rowcheck.pick_rows(5, k, np.random.default_rng(0)), np.arange(5))
    assert np.array_equal(rowcheck.pick_rows(n, k, np.random.default_rng(3)),
                          rowcheck.pick_rows(n, k, np.random.default_rng(3)))


def test_a_bad_declaration_stops_the_plugin_loading(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stage scaled: rows: axis 'rows' is not an axis"):
        scaled(tmp_path, [], rows=Rows("rows", {}, {"y": 0}))
    with pytest.raises(ValueError, match="rows: output 'y' has dimension -1"):
        scaled(tmp_path, [], rows=Rows("batch", {}, {"y": -1}))
    with pytest.raises(ValueError, match="compute_peak 'int4' is not one of int8_dense"):
        scaled(tmp_path, [], compute_peak="int4")


# The plugins' declarations: their references on a sample of rows are those rows of the
# full reference, at every validation case.

def _declared(reg: Any) -> list[Stage]:
    return [st for st in reg.stages.values() if st.rows is not None]


def test_gemm_and_int_gemm_declare_their_rows(reg) -> None:  # type: ignore[no-untyped-def]
    assert {st.name for st in _declared(reg)} >= {"gemm", "int_gemm"}
    assert not reg.get("find_min_max").rows  # a global min/max: its rows are not independent


def test_a_declared_reference_on_sampled_rows_is_those_rows_of_the_full_one(reg) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    for st in _declared(reg):
        for v in st.variants:
            for case in (*st.cases, *v.cases):
                fam = next(f for f in st.families if v.accepts(f))
                p = st.point(v, **case)
                ins = st.make_inputs(np.random.default_rng(1), fam, p)
                if st.check_inputs is not None and st.check_inputs(ins, p):
                    continue
                n = int(p[st.rows.axis])
                idx = np.unique(rng.integers(0, n, size=min(n, 5)))
                full = st.expected(ins, p, v, NumpyRunner().run(st, v, ins, p).outputs)
                part = rowcheck.cut(st.rows, p, ins, full, idx, st.name)
                assert not part.problems, (st.name, part.problems)
                got = st.expected(part.inputs, part.point, v, part.outputs)
                for name in st.outputs(p):
                    want = np.take(np.asarray(full[name]), idx, axis=st.rows.outputs[name])
                    np.testing.assert_allclose(got[name], want, rtol=1e-12, atol=0,
                                               err_msg=f"{st.name} {v.name} {case} {name}")


def test_int_gemm_is_checked_on_sampled_rows(reg, limit) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("int_gemm")
    v = st.variant("int8")
    j = Job(st, v, st.point(v, batch=200, out_f=64, in_f=256))

    def last_row(outs: dict[str, np.ndarray]) -> None:
        outs["out"][-1, 7] *= 1.01

    row = m.measure(j, FakeGpu(), FAST, META)
    assert row["status"] == "ok" and row["verified"] == "sampled:64/200"
    row = m.measure(j, FakeGpu(last_row), FAST, META)
    assert row["status"] == "failed" and row["verified"] == "no" and "[199, 7]" in row["reason"]


# A pipeline that declares its rows: the gemm stage alone, run by the host context.

def _gemm_pipeline(reg: Any, rows: Rows | None) -> Pipeline:
    gemm = reg.get("gemm")

    def run(ctx, bufs, p):  # type: ignore[no-untyped-def]
        b, o = int(p["batch"]), int(p["out_f"])
        out = ctx.alloc((b, o), np.float32)
        ctx.mark("start", 0)
        ctx.step("gemm", "default", 0, {**bufs, "out": out}, batch=b, out_f=o,
                 in_f=p["in_f"], group_size=p["group_size"])
        ctx.mark("end", 0)
        return PipelineTrace({"out": (out, (b, o), np.dtype(np.float32))}, {},
                             {"total": (("start", "end"),)})

    def check(ins, p, got, host):  # type: ignore[no-untyped-def]
        ref = gemm.reference(ins, p, gemm.variants[0])["out"]
        return [NormRel(1e-5, "fp32 sums").compare("out", got["out"], ref)]

    return Pipeline(name="gemm_alone", steps=("gemm",), axes=gemm.axes,
                    families=gemm.families, make_inputs=gemm.make_inputs, run=run,
                    check=check, reference=lambda ins, p: {}, bytes_moved=lambda p: 0,
                    flops=lambda p: 0, cases=({},), rows=rows,
                    variants=(Variant("default"),))


def test_a_pipeline_that_declares_rows_is_checked_on_a_sample(reg, limit) -> None:  # type: ignore[no-untyped-def]
    pipe = _gemm_pipeline(reg, Rows("batch", {"x_rec": 0}, {"out": 0}))
    j = Job(pipe, pipe.variants[0], pipe.point(batch=300, out_f=8, in_f=16))
    cfg = m.BenchConfig(timing=TimingConfig(budget_s=1e-9))

    def last_row(outs: dict[str, np.ndarray]) -> None:
        outs["out"][-1] += 1.0

    row = m.measure(j, HostRunner(), cfg, META, reg.stages)
    assert row["status"] == "ok" and row["verified"] == "sampled:64/300"
    row = m.measure(j, HostRunner(corrupt=last_row), cfg, META, reg.stages)
    assert row["status"] == "failed" and row["verified"] == "no"
    assert "on 64 of 300 rows (batch)" in row["reason"]
    whole = dataclasses.replace(pipe, rows=None)
    row = m.measure(Job(whole, whole.variants[0], j.point), HostRunner(), cfg, META,
                    reg.stages)
    assert row["verified"] == "yes"


def test_at_the_real_limit_one_wrong_last_row_fails(tmp_path: Path) -> None:
    """No limit patched: 2^20 rows of 64 int8 in and out (2^27 elements, 64 MiB each), the
    reference judged on 64 rows of them."""
    (tmp_path / "xored.cu").write_text("// never compiled\n")
    seen: list[int] = []

    def reference(ins, p, v):  # type: ignore[no-untyped-def]
        seen.append(len(ins["x"]))
        return {"y": ins["x"] ^ ins["s"]}

    st = Stage(
        name="xored", entry_points=("xored",), axes=(Axis("batch", 8), Axis("in_f", 64)),
        families=("normal",),
        make_inputs=lambda rng, fam, p: {
            "x": rng.integers(-128, 128, (p["batch"], p["in_f"]), dtype=np.int8),
            "s": rng.integers(-128, 128, p["in_f"], dtype=np.int8)},
        outputs=lambda p: {"y": ((p["batch"], p["in_f"]), np.dtype(np.int8))},
        reference=reference, enqueue=lambda launch, bufs, p, v: None,
        bytes_moved=lambda p: 2 * p["batch"] * p["in_f"], flops=lambda p: 0,
        tolerances={"y": Exact("integers")}, cases=({},),
        rows=Rows("batch", {"x": 0}, {"y": 0}), kernel_dir=tmp_path)
    n = 2**20

    def last(outs: dict[str, np.ndarray]) -> None:
        outs["y"][-1, -1] ^= 1

    row = m.measure(job(st, n), FakeGpu(last), FAST, META)
    assert row["status"] == "failed" and f"[{n - 1}, 63]" in row["reason"]
    assert seen == [n, rowcheck.SAMPLE_ROWS]
    assert m.measure(job(st, n), FakeGpu(), FAST, META)["verified"] == f"sampled:64/{n}"


def test_a_reference_that_raises_is_a_failed_row_not_a_crash(tmp_path: Path) -> None:
    st = scaled(tmp_path, [])
    calls = []

    def once(ins, p, v):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) > 1:  # the kernel's stand-in runs it first
            raise ValueError("operands could not be broadcast")
        return {"y": ins["x"] * ins["s"]}

    row = m.measure(job(dataclasses.replace(st, reference=once)), FakeGpu(), FAST, META)
    assert row["status"] == "failed" and "verified" not in row  # nothing was checked
    assert row["reason"] == "checking the outputs raised ValueError: operands could not be " \
                            "broadcast"


def test_a_reference_too_big_for_the_host_is_an_oom_row(tmp_path: Path) -> None:
    """MemoryError while checking: an ``oom`` row that says so (the time is not kept: a
    row without a check is no result), not a failed kernel."""
    st = scaled(tmp_path, [])
    calls = []

    def once(ins, p, v):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) > 1:
            raise MemoryError
        return {"y": ins["x"] * ins["s"]}

    row = m.measure(job(dataclasses.replace(st, reference=once)), FakeGpu(), FAST, META)
    assert row["status"] == "oom" and "verified" not in row
    assert row["reason"].startswith("out of host memory checking the outputs")
    assert "median_us" not in row


def test_every_row_can_be_picked() -> None:
    """Over many seeds the picks reach every row (none is never checked), each inner pick
    within its own stretch of the rows between the first and the last."""
    n, k = 1000, rowcheck.SAMPLE_ROWS
    seen: set[int] = set()
    for seed in range(400):
        idx = rowcheck.pick_rows(n, k, np.random.default_rng(seed))
        assert idx[0] == 0 and idx[-1] == n - 1 and len(idx) == k
        seen.update(int(i) for i in idx)
    assert seen == set(range(n))
    edges = np.linspace(1, n - 1, k - 1).astype(np.int64)
    inner = rowcheck.pick_rows(n, k, np.random.default_rng(0))[1:-1]
    assert all(lo <= i < hi for i, lo, hi in zip(inner, edges[:-1], edges[1:], strict=True))


def test_a_run_at_exactly_the_limit_is_checked_whole(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of exactly FULL_CHECK_LIMIT elements (inputs and outputs together: the toy's
    x, s and y at batch 100) is checked whole; one element fewer allowed, it is sampled."""
    st = scaled(tmp_path, [])
    size = 2 * 100 * IN_F + IN_F
    monkeypatch.setattr(rowcheck, "FULL_CHECK_LIMIT", size)
    assert m.measure(job(st, 100), FakeGpu(), FAST, META)["verified"] == "yes"
    monkeypatch.setattr(rowcheck, "FULL_CHECK_LIMIT", size - 1)
    assert m.measure(job(st, 100), FakeGpu(), FAST, META)["verified"] == \
        f"sampled:{rowcheck.SAMPLE_ROWS}/100"


def test_a_dimension_past_an_array_s_last_is_a_problem_not_a_crash() -> None:
    """rows naming dimension 1 of a 1-D array: said as any array without the rows there."""
    part = rowcheck.cut(Rows("batch", {"x": 1}, {"y": 0}), {"batch": 3},
                        {"x": np.zeros(3, np.float32)}, {"y": np.zeros(3)}, np.array([0, 2]),
                        "one")
    assert part.problems == ["plugin one: rows: input x is float32[3], without 3 rows (batch) "
                             "along dimension 1"]
