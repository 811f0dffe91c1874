"""Measuring one job into its row, for a stage and for a pipeline, with fake backends:
statuses, the checked outputs, the derived columns."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.contract.backend import RunResult
from harness.contract.timing import Clocks, Timing, TimingConfig
from harness.engine import measure as m
from harness.engine import rowcheck
from harness.engine.jobs import plan
from harness.results import pipeline_rows
from harness.results import rows as results
from harness.results.provenance import RunMeta
from tests.engine.host import HostRunner

FAST = m.BenchConfig(timing=TimingConfig(warmup=0, min_samples=5, max_samples=100))
META = RunMeta(gpu="Fake GPU", driver="1", cuda="13.0", git_sha="abc", command="t",
               peak_gbps=1000.0)


class FakeGpu:
    """Pretends to be the pycuda backend: reference outputs, a fixed 100 µs median."""

    backend = "pycuda"

    def __init__(self, corrupt=None, raise_exc: BaseException | None = None,
                 converged: bool = True) -> None:
        self.corrupt, self.raise_exc, self.timed = corrupt, raise_exc, 0
        self.converged = converged

    def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
        self.timed = getattr(self, "timed", 0) + 1
        if self.raise_exc is not None:
            raise self.raise_exc
        res = NumpyRunner().run(stage, variant, inputs, point)
        if self.corrupt:
            self.corrupt(res.outputs)
        return RunResult(res.outputs, dict(inputs)), \
            Timing(100.0, 99.0, 101.0, 0.5, 50, self.converged)

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, MemoryError)


@pytest.fixture
def jobs(reg):  # type: ignore[no-untyped-def]
    return plan([reg.get("dynamic_spikes")], ["batch=1,4", "in_f=64"])


def test_ok_row_derives_bandwidth_from_declared_bytes(jobs) -> None:  # type: ignore[no-untyped-def]
    row = m.measure(jobs[1], FakeGpu(), FAST, META)
    assert row["status"] == "ok" and row["verified"] == "yes" and row["reason"] == ""
    assert row["bytes"] == 8 * 4 * 64 + 16
    assert row["gbps"] == pytest.approx(row["bytes"] / 100e-6 / 1e9)
    assert row["pct_peak"] == pytest.approx(100 * row["gbps"] / 1000.0)
    assert row["batch"] == 4 and row["in_f"] == 64 and row["out_f"] == ""
    assert row["kernel_hash"] and row["git_sha"] == "abc" and row["l2"] == "cold"
    assert set(row) <= set(results.COLUMNS)


def test_noise_above_target_is_said(jobs) -> None:  # type: ignore[no-untyped-def]
    row = m.measure(jobs[0], FakeGpu(converged=False), FAST, META)
    assert row["status"] == "ok" and row["reason"] == m.NOT_CONVERGED


CLOCK_COLUMNS = ("clock_mhz_median", "clock_mhz_min", "clock_mhz_nominal", "throttled_samples")


def test_the_sm_clock_and_its_throttled_samples_reach_the_row(jobs) -> None:  # type: ignore[no-untyped-def]
    clocks = Clocks(1900.0, 1500.0, 1980.0, throttled=3, throttled_min_mhz=990.0)

    class Clocked(FakeGpu):
        def time(self, *args):  # type: ignore[no-untyped-def]
            res, t = super().time(*args)
            return res, dataclasses.replace(t, clocks=clocks)

    row = m.measure(jobs[0], Clocked(), FAST, META)
    assert row["status"] == "ok" and row["reason"] == clocks.note() != ""
    assert tuple(row[c] for c in CLOCK_COLUMNS) == (1900.0, 1500.0, 1980.0, 3)
    clocks = dataclasses.replace(clocks, throttled=0, throttled_min_mhz=None)
    row = m.measure(jobs[0], Clocked(), FAST, META)
    assert row["reason"] == "" and row["throttled_samples"] == 0
    # Without a clock (the NumPy references) the columns stay empty.
    assert not set(CLOCK_COLUMNS) & set(m.measure(jobs[0], FakeGpu(), FAST, META))


def test_wrong_output_is_a_failed_row_that_keeps_its_time(jobs) -> None:  # type: ignore[no-untyped-def]
    def off(outs: dict) -> None:
        outs["q"][0, 0] += 1

    row = m.measure(jobs[0], FakeGpu(off), FAST, META)
    assert row["status"] == "failed" and row["verified"] == "no"
    assert "q: FAILED" in row["reason"] and row["median_us"] > 0
    ok = m.measure(jobs[0], FakeGpu(), FAST, META)
    assert m.speedup(ok, [row]) == ""  # never a speedup against a wrong answer
    unchecked = m.measure(jobs[0], FakeGpu(off), dataclasses.replace(FAST, verify=False), META)
    assert unchecked["status"] == "ok" and "verified" not in unchecked


UNGATED_NOTE = ("50 of 50 samples timed without the gate (the work synchronises inside its "
                "launch): host time can be inside")


def test_a_failed_rows_time_keeps_what_is_known_of_it(jobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A wrong answer's row keeps its time and the notes on it (not converged, host time
    inside): a slow peer that also fails is not shown as a clean GPU time. With a reason
    limit the failure overflows, the failure's examples are what is cut."""
    def off(outs: dict) -> None:
        outs["q"][:] += 1  # every value wrong: the failure lists examples

    class Ungated(FakeGpu):
        def time(self, *args):  # type: ignore[no-untyped-def]
            res, t = super().time(*args)
            return res, dataclasses.replace(t, ungated=t.samples, converged=False)

    row = m.measure(jobs[1], Ungated(off), FAST, META)
    assert row["status"] == "failed" and row["reason"].startswith("q: FAILED")
    assert row["reason"].endswith(f"{m.NOT_CONVERGED}; {UNGATED_NOTE}")
    monkeypatch.setattr(m, "REASON_CHARS", 350)  # the failure no longer fits beside them
    cut = m.measure(jobs[1], Ungated(off), FAST, META)
    assert cut["reason"].startswith("q: FAILED") and "...; " in cut["reason"]
    assert cut["reason"].endswith(UNGATED_NOTE) and len(cut["reason"]) == 350 - m.PREFIX_ROOM
    # Without notes the failure alone, as before.
    plain = m.measure(jobs[1], FakeGpu(off), FAST, META)
    assert plain["reason"].startswith("q: FAILED") and "gate" not in plain["reason"]


def test_a_drained_row_says_what_was_taken_off(jobs) -> None:  # type: ignore[no-untyped-def]
    """The flush time a drained timing took off each sample is in the row's reason, so the
    figure can be checked against the events; a plain row says nothing of it."""
    class Drained(FakeGpu):
        def time(self, *args):  # type: ignore[no-untyped-def]
            res, t = super().time(*args)
            return res, dataclasses.replace(t, taken_off_us=70.91)

    row = m.measure(jobs[1], Drained(), FAST, META)
    assert row["status"] == "ok"
    assert "drained: 70.91 µs of L2 flush taken off each sample" in row["reason"]
    assert "drained" not in m.measure(jobs[1], FakeGpu(), FAST, META)["reason"]


def test_failed_reason_cuts_the_failure_not_the_notes() -> None:
    notes = ["n" * 40, "m" * 40]
    tail = "; " + "n" * 40 + "; " + "m" * 40
    got = m._failed_reason("x" * 1000, notes)
    assert len(got) == m.REASON_CHARS - m.PREFIX_ROOM and got.endswith("x..." + tail)
    assert m._failed_reason("short", notes) == "short" + tail
    # Exactly at the limit: whole; one past it: cut.
    fits = "f" * (m.REASON_CHARS - m.PREFIX_ROOM - len(tail))
    assert m._failed_reason(fits, notes) == fits + tail
    over = m._failed_reason(fits + "g", notes)
    assert over.endswith("f..." + tail) and len(over) == m.REASON_CHARS - m.PREFIX_ROOM
    # Without notes the failure alone, cut at the row's own limit.
    assert m._failed_reason("y" * 1000, []) == "y" * m.REASON_CHARS
    # Notes alone: no separator before them.
    assert m._failed_reason("", notes) == tail[2:]


def test_failed_reason_keeps_the_start_of_the_failure_beside_long_notes() -> None:
    """Notes that would crowd the failure out give way: the failure's first FAILURE_KEPT
    characters stay, the notes are cut at their end, the whole within the limit."""
    got = m._failed_reason("z" * 1000, ["k" * 600])
    assert got.startswith("z" * (m.FAILURE_KEPT - 3) + "...; k")
    assert len(got) == m.REASON_CHARS - m.PREFIX_ROOM
    short = m._failed_reason("bad", ["k" * 600])
    assert short.startswith("bad; k") and len(short) == m.REASON_CHARS - m.PREFIX_ROOM


def test_a_target_below_the_timers_floor_is_said_in_the_reason(jobs) -> None:  # type: ignore[no-untyped-def]
    """A row whose samples sit on one step met a --max-noise below the floor there (more
    samples cannot lower it): ok, and its reason says its noise is the floor's."""
    import dataclasses

    from harness.contract.timing import Timing

    class OneStep(FakeGpu):
        def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
            got, _ = super().time(stage, variant, inputs, point, cfg)
            return got, Timing(3.84, 3.84, 3.84, 0.24, 20, True)

    cfg = dataclasses.replace(FAST, timing=dataclasses.replace(FAST.timing,
                                                               target_noise_pct=0.1))
    row = m.measure(jobs[0], OneStep(), cfg, META)
    assert row["status"] == "ok" and row["reason"] == m.AT_FLOOR


def _numpy_error() -> ValueError:
    """A ValueError numpy raises deep inside itself, for a call made here."""
    try:
        np.pad(np.zeros(3), ((1, 2, 3),))
    except ValueError as exc:
        return exc
    raise AssertionError("numpy took the bad pad width")


def test_oom_and_errors_become_statuses(jobs) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import HarnessError

    row = m.measure(jobs[0], FakeGpu(raise_exc=MemoryError("cuMemAlloc")), FAST, META)
    assert row["status"] == "oom" and row["reason"] == "out of memory: cuMemAlloc"
    row = m.measure(jobs[0], FakeGpu(raise_exc=RuntimeError("launch failed")), FAST, META)
    # the reason names where it was raised: whose mistake it was (here, the stand-in GPU's)
    assert row["status"] == "failed" and re.fullmatch(
        r"RuntimeError at test_measure\.py:\d+ in time: launch failed", row["reason"])
    # raised inside numpy for a bad call of ours: the call is named, not numpy's internals
    row = m.measure(jobs[0], FakeGpu(raise_exc=_numpy_error()), FAST, META)
    assert re.match(r"ValueError at test_measure\.py:\d+ in _numpy_error: ", row["reason"])
    row = m.measure(jobs[0], FakeGpu(raise_exc=HarnessError("x" * 900)), FAST, META)
    assert row["status"] == "failed" and row["reason"] == "x" * m.REASON_CHARS


def test_inputs_are_the_sweeps_own(jobs) -> None:  # type: ignore[no-untyped-def]
    """Drawn by point_rng: the same for the same (seed, stage, family, point), other for
    another seed or point."""
    from harness.contract.rng import point_rng

    j = jobs[1]
    a = m.job_inputs(j, FAST)["x"]
    assert np.array_equal(a, m.job_inputs(j, FAST)["x"])
    want = j.target.make_inputs(point_rng(0, j.target.name, "normal", j.point), "normal",
                                j.point)["x"]
    assert np.array_equal(a, want)
    assert not np.array_equal(a, m.job_inputs(j, dataclasses.replace(FAST, seed=1))["x"])


def test_nonfinite_input_is_a_skipped_row(jobs) -> None:  # type: ignore[no-untyped-def]
    def nan_inputs(rng, fam, p):  # type: ignore[no-untyped-def]
        return {"x": np.full((p["batch"], p["in_f"]), np.inf, np.float32)}

    job = dataclasses.replace(jobs[0], target=dataclasses.replace(jobs[0].target,
                                                                  make_inputs=nan_inputs))
    runner = FakeGpu()
    row = m.measure(job, runner, FAST, META)
    assert row["status"] == "skipped" and "x has 64 non-finite" in row["reason"]
    assert runner.timed == 0


@pytest.fixture
def pipe_job(reg):  # type: ignore[no-untyped-def]
    pipe = reg.pipelines["spike_quant_gemm"]
    return plan([pipe], ["batch=2", "in_f=16", "out_f=8"])[0]


PIPE_CFG = m.BenchConfig(family="ramp", timing=TimingConfig(budget_s=1e-9))


def test_pipeline_row(reg, pipe_job) -> None:  # type: ignore[no-untyped-def]
    from harness.results.ledger import pipeline_hash

    row = m.measure(pipe_job, HostRunner(), PIPE_CFG, META, reg.stages)
    assert set(row) <= set(pipeline_rows.COLUMNS)
    assert row["status"] == "ok" and row["verified"] == "yes"
    assert row["reason"] == m.NOT_CONVERGED  # the fake intervals never settle
    assert row["stage"] == "spike_quant_gemm" and row["backend"] == "pycuda"
    assert row["variant"] == pipe_job.variant.name and row["family"] == "ramp"
    assert row["kernel_hashes"] == pipeline_hash(pipe_job.target, reg.stages)
    assert row["samples"] == 20 and row["total_us"] == 10.5  # median of 1..20
    assert row["encoding_share_pct"] == pytest.approx(100.0)  # every fake interval alike


def test_pipeline_wrong_output_and_oom(reg, pipe_job, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def off(outs):  # type: ignore[no-untyped-def]
        outs["spikes"].flat[0] ^= 1

    row = m.measure(pipe_job, HostRunner(corrupt=off), PIPE_CFG, META, reg.stages)
    assert row["status"] == "failed" and row["verified"] == "no" and row["total_us"] > 0
    assert row["reason"].startswith("spikes: FAILED")

    class Oom(HostRunner):
        def pipeline(self, *a, **k):  # type: ignore[no-untyped-def]
            raise MemoryError("cuMemAlloc")

    row = m.measure(pipe_job, Oom(), PIPE_CFG, META, reg.stages)
    assert row["status"] == "oom" and "total_us" not in row
    # Above the limit a pipeline that declares no rows (a global min/max) is still checked
    # whole: nothing is waved through for being large.
    monkeypatch.setattr(rowcheck, "FULL_CHECK_LIMIT", 8)  # the point has 2 x 16 elements
    row = m.measure(pipe_job, HostRunner(corrupt=off), PIPE_CFG, META, reg.stages)
    assert row["status"] == "failed" and row["verified"] == "no"
    row = m.measure(pipe_job, HostRunner(), PIPE_CFG, META, reg.stages)
    assert row["status"] == "ok" and row["verified"] == "yes"


def test_a_job_that_cannot_fit_is_an_oom_row_before_its_inputs_are_built(jobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.engine import memory

    drawn = []
    job = dataclasses.replace(jobs[0], target=dataclasses.replace(
        jobs[0].target, make_inputs=lambda rng, fam, p: drawn.append(p) or {}))
    monkeypatch.setattr(memory, "host_available", lambda: 1024)
    runner = FakeGpu()
    row = m.measure(job, runner, FAST, META, guard=memory.MemoryGuard())
    assert row["status"] == "oom" and drawn == [] and runner.timed == 0
    assert row["reason"].startswith("out of memory (estimated before the inputs were built)")
    assert row["reason"].endswith("of host memory, 0.0 GiB available")


def test_a_plugin_that_exits_or_draws_other_inputs_is_a_failed_row(jobs) -> None:  # type: ignore[no-untyped-def]
    import sys

    def exits(rng, fam, p):  # type: ignore[no-untyped-def]
        sys.exit(0)

    def wide(rng, fam, p):  # type: ignore[no-untyped-def]
        return {"x": np.zeros((p["batch"], p["in_f"]), np.float64)}

    st = jobs[0].target
    for make, why in [(exits, "the plugin exited (SystemExit: 0)"),
                      (wide, "plugin dynamic_spikes: input x is float64[1, 64], declared "
                             "float32[1, 64]")]:
        job = dataclasses.replace(jobs[0], target=dataclasses.replace(st, make_inputs=make))
        runner = FakeGpu()
        row = m.measure(job, runner, FAST, META)
        assert (row["status"], row["reason"]) == ("failed", why) and runner.timed == 0


def test_host_memory_running_out_is_oom_on_any_backend(jobs) -> None:  # type: ignore[no-untyped-def]
    class Strict(FakeGpu):
        def is_oom(self, exc: BaseException) -> bool:
            return False  # only device errors, as the pycuda backend's

    row = m.measure(jobs[0], Strict(raise_exc=MemoryError("Unable to allocate")), FAST, META)
    assert row["status"] == "oom" and row["reason"] == "out of memory: Unable to allocate"


def test_a_row_that_fails_before_it_is_timed_keeps_the_launch_asked_for(jobs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A --graph point whose launch raises is a failed row at the graph point, so that the
    gate sets it against the ok graph row before (exit 1), not against nothing."""
    import dataclasses

    from harness.results import compare
    from harness.results.rows import CsvWriter

    graph = dataclasses.replace(FAST, timing=dataclasses.replace(FAST.timing, graph=True))

    class Graphed(FakeGpu):
        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            res, t = super().time(*a, **k)
            return res, dataclasses.replace(t, launch="graph")

    ok = m.measure(jobs[0], Graphed(), graph, META)
    bad = m.measure(jobs[0], FakeGpu(raise_exc=RuntimeError("cuGraphInstantiate failed")),
                    graph, META)
    assert (ok["launch"], bad["launch"], bad["status"]) == ("graph", "graph", "failed")
    assert m.measure(jobs[0], FakeGpu(raise_exc=RuntimeError("x")), FAST, META)["launch"] \
        == "stream"
    for name, row in (("old.csv", ok), ("new.csv", bad)):
        with CsvWriter(tmp_path / name) as w:
            w.write(row)
    report = compare.run(tmp_path / "old.csv", tmp_path / "new.csv")
    assert [v.new_status for v in report.rows] == ["failed"] and report.exit_code == 1


def test_every_build_of_a_variant_is_judged_against_one_reference(reg) -> None:  # type: ignore[no-untyped-def]
    """--define builds are judged as their declared variant (Kernel Tuner's one answer for
    every configuration) and share its reference at a point; another declared variant, or
    another point, has its own."""
    from harness.engine import jobs as planning
    from harness.engine.measure import PointMemo
    from harness.engine.validate import judged_as

    st = reg.get("spike_encode")
    got = planning.plan([st], ["batch=1,2"], ["all"], define_specs=["BLOCK=64,128"])
    by = {(j.variant.name, j.point["batch"]): j for j in got}
    tuned = by[("bidirectional[BLOCK=64]", 1)]
    assert judged_as(st, tuned.variant) is st.variant("bidirectional")
    plain = planning.plan([st], ["batch=1"], ["bidirectional"])[0]
    assert judged_as(st, plain.variant) is plain.variant
    memo = PointMemo()
    slot = memo.reference_slot(tuned, None)
    assert slot is not None
    assert memo.reference_slot(by[("bidirectional[BLOCK=128]", 1)], None) is slot
    assert memo.reference_slot(plain, None) is slot
    assert memo.reference_slot(by[("unidirectional[BLOCK=64]", 1)], None) is not slot
    assert memo.reference_slot(by[("bidirectional[BLOCK=64]", 2)], None) is not slot


def test_a_speedup_note_keeps_the_reason_within_its_limit() -> None:
    """Our row's note on a peer whose time can hold host time comes after a reason that may
    already be at its limit: the reason stays within it, the note whole at its end."""
    from harness.results.rows import ungated_note

    note = ("vs best peer: torch's time can hold host time (20 of 20 samples timed without "
            "the gate)")
    peer = {"status": "ok", "median_us": 30.0, "backend": "torch",
            "reason": ungated_note(20, 20)}
    # A row with a note of its own keeps it, the peer's note after it.
    row = {"status": "ok", "median_us": 10.0, "reason": m.NOT_CONVERGED}
    m.with_speedup(row, [peer])
    assert row["reason"] == f"{m.NOT_CONVERGED}; {note}"
    # A reason already at its limit: cut at its start's end, marked, the note whole.
    row = {"status": "ok", "median_us": 10.0, "reason": "r" * m.REASON_CHARS}
    m.with_speedup(row, [peer])
    assert row["speedup_vs_best_peer"] == 3.0 and len(row["reason"]) <= m.REASON_CHARS
    assert row["reason"].startswith("rrr") and row["reason"].endswith(note)


def test_a_row_above_its_noise_target_says_what_ended_its_sampling() -> None:
    """The samples' cap or the budget: throttled samples that were set aside count towards
    the cap (they were taken), so 3 kept and 2 discarded of a cap of 5 is the cap."""
    cfg = TimingConfig(min_samples=2, max_samples=5)
    at = Timing(100.0, 99.0, 101.0, 3.0, 5, False)
    assert m._not_converged(at, cfg) == m.NOT_CONVERGED_CAP
    assert m._not_converged(dataclasses.replace(at, samples=3), cfg) == m.NOT_CONVERGED
    clocks = Clocks(1980.0, 1900.0, 1980.0, 2, 900.0, 0.75, True)
    assert m._not_converged(dataclasses.replace(at, samples=3, clocks=clocks), cfg) == \
        m.NOT_CONVERGED_CAP
