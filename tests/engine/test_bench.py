"""Sweep planning and measurement with fake runners: rows, statuses, interruption."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.engine import bench
from harness.contract.timing import Timing, TimingConfig
from harness.contract.backend import RunResult
from harness.errors import BadInput
from harness.results import rows as results

FAST = bench.BenchConfig(timing=TimingConfig(warmup=0, min_samples=5, max_samples=5))
META = bench.RunMeta(gpu="Fake GPU", driver="1", cuda="13.0", git_sha="abc", command="t",
                     peak_gbps=1000.0)


class FakeGpu:
    """Pretends to be the pycuda backend: reference outputs, a fixed 100 µs median."""

    backend = "pycuda"

    def __init__(self, corrupt=None, raise_exc: BaseException | None = None) -> None:
        self.corrupt, self.raise_exc, self.calls = corrupt, raise_exc, 0

    def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.raise_exc is not None:
            raise self.raise_exc
        res = NumpyRunner().run(stage, variant, inputs, point)
        if self.corrupt:
            self.corrupt(res.outputs)
        return RunResult(res.outputs, dict(inputs)), Timing(100.0, 99.0, 101.0, 0.5, 50, True)

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, MemoryError)


@pytest.fixture
def jobs(reg):  # type: ignore[no-untyped-def]
    return bench.plan([reg.get("dynamic_spikes")], ["batch=1,4", "in_f=64"])


def test_plan_variants(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    assert {j.variant.name for j in bench.plan([st], ["batch=1"])} == {"default"}
    assert {j.variant.name for j in bench.plan([st], ["batch=1"], ["all"])} == {"default",
                                                                               "away"}
    with pytest.raises(BadInput, match="no variant 'fast'"):
        bench.plan([st], ["batch=1"], ["fast"])


def test_plan_define_tunes_every_chosen_variant(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    jobs = bench.plan([st], ["batch=1"], ["all"], define_specs=["BLOCK=128,512", "X=1"])
    got = {(j.variant.name, dict(j.variant.defines).get("BLOCK"), dict(j.variant.defines)["X"])
           for j in jobs}
    assert got == {("default[BLOCK=128,X=1]", "128", "1"), ("default[BLOCK=512,X=1]", "512", "1"),
                   ("away[BLOCK=128,X=1]", "128", "1"), ("away[BLOCK=512,X=1]", "512", "1")}
    away = next(j.variant for j in jobs if j.variant.name.startswith("away"))
    assert ("ROUNDING_AWAY", "1") in away.defines  # the variant's own defines are kept
    assert bench.parse_defines(["N=1,1,2"]) == {"N": ["1", "2"]}


def test_ok_row_derives_bandwidth_from_declared_bytes(jobs) -> None:  # type: ignore[no-untyped-def]
    row = bench.measure(jobs[1], FakeGpu(), FAST, META)
    assert row["status"] == "ok" and row["verified"] == "yes"
    assert row["bytes"] == 8 * 4 * 64 + 16
    assert row["gbps"] == pytest.approx(row["bytes"] / 100e-6 / 1e9)
    assert row["pct_peak"] == pytest.approx(100 * row["gbps"] / 1000.0)
    assert row["batch"] == 4 and row["in_f"] == 64 and row["out_f"] == ""
    assert row["kernel_hash"] and row["git_sha"] == "abc" and row["l2"] == "cold"


def test_wrong_output_is_a_failed_row_that_keeps_its_time(jobs) -> None:  # type: ignore[no-untyped-def]
    def off(outs: dict) -> None:
        outs["q"][0, 0] += 1

    row = bench.measure(jobs[0], FakeGpu(off), FAST, META)
    assert row["status"] == "failed" and row["verified"] == "no"
    assert "q: FAILED" in row["reason"] and row["median_us"] > 0
    ok = bench.measure(jobs[0], FakeGpu(), FAST, META)
    assert bench.speedup(ok, [row]) == ""  # never a speedup against a wrong answer


def test_oom_and_errors_become_statuses(jobs) -> None:  # type: ignore[no-untyped-def]
    assert bench.measure(jobs[0], FakeGpu(raise_exc=MemoryError("cuMemAlloc")), FAST,
                         META)["status"] == "oom"
    row = bench.measure(jobs[0], FakeGpu(raise_exc=RuntimeError("launch failed")), FAST, META)
    assert row["status"] == "failed" and "launch failed" in row["reason"]


def test_interrupted_sweep_keeps_finished_rows(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runner = FakeGpu()
    gen = bench.run(jobs, runner, FAST, META, tmp_path)
    next(gen)  # first row measured and written
    gen.close()  # as Ctrl-C would stop the loop
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert len(rows) == 1 and rows[0]["status"] == "ok"


def test_a_crash_mid_sweep_leaves_valid_csv(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    class Crashing(FakeGpu):
        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            if self.calls == 1:
                raise KeyboardInterrupt
            return super().time(*a, **k)

    with pytest.raises(KeyboardInterrupt):
        list(bench.run(jobs, Crashing(), FAST, META, tmp_path))
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [r["batch"] for r in rows] == ["1"]


def test_numpy_backend_rows(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = list(bench.run(jobs, NumpyRunner(), FAST, bench.RunMeta(gpu="cpu"), tmp_path))
    assert [r["backend"] for r in rows] == ["numpy", "numpy"]
    assert all(r["status"] == "ok" and r["pct_peak"] == "" for r in rows)


def test_inputs_are_reproducible(jobs) -> None:  # type: ignore[no-untyped-def]
    a = bench._inputs(jobs[1], FAST)["x"]
    b = bench._inputs(jobs[1], FAST)["x"]
    assert np.array_equal(a, b)


def test_nonfinite_input_is_a_skipped_row(jobs) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    def nan_inputs(rng, fam, p):  # type: ignore[no-untyped-def]
        return {"x": np.full((p["batch"], p["in_f"]), np.inf, np.float32)}

    job = dataclasses.replace(jobs[0], stage=dataclasses.replace(jobs[0].stage,
                                                                 make_inputs=nan_inputs))
    runner = FakeGpu()
    row = bench.measure(job, runner, FAST, META)
    assert row["status"] == "skipped" and "x has 64 non-finite" in row["reason"]
    assert runner.calls == 0
