"""The ``pycuda`` backend's runner. On the CPU, on the fake driver: it is a Backend; a run is
poisoned, launched, synchronised and read back; a timed run checks one launch, re-uploads
what the kernel may change, warms up and samples (or replays a graph). On the GPU (marked
``gpu``, run by scripts/gpu-check.sh): every stage validates, poison and guards catch bad
kernels, events agree with ncu."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.backends.pycuda import graphs
from harness.backends.pycuda.buffers import POISON32, POISONS32
from harness.backends.pycuda.runner import GpuRunner
from harness.contract.stage import Stage
from harness.contract.timing import TimingConfig
from harness.engine import validate
from tests.backends.conformance import assert_is_backend
from tests.backends.pycuda.fakes import EVENT_MS, FakeDriver, FakeGraphDriver, fake_device

FAST = TimingConfig(warmup=2, min_samples=5, max_samples=5)


def test_the_gpu_runner_is_a_backend(drv: FakeDriver) -> None:
    assert_is_backend(GpuRunner(fake_device(drv)), "pycuda")
    assert drv.log == []  # nothing compiled or allocated until it is asked to run


def test_a_run_is_poisoned_launched_and_read_back(drv: FakeDriver, runner: GpuRunner,
                                                  double: Stage) -> None:
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    res = runner.run(double, double.variant("default"), {"x": x}, double.point())
    assert res.outputs["y"].tolist() == (2 * x).tolist()
    assert res.inputs_after["x"].tolist() == x.tolist() and res.guard_damage == {"y": 0}
    assert res.again["y"].tolist() == res.outputs["y"].tolist()
    order = [e[0] for e in drv.log if e[0] in ("memset_d32_async", "launch", "sync", "dtoh",
                                                "htod")]
    # the run, then again on the inputs uploaded anew under the second poison
    once = ["memset_d32_async", "launch", "sync", "dtoh", "dtoh", "dtoh"]
    assert order == ["htod", *once, "htod", *once]
    assert drv.live() == []


def test_an_unwritten_element_keeps_the_poison_and_an_overrun_hits_the_guard(
        runner: GpuRunner, double: Stage) -> None:
    x = np.ones(8, dtype=np.float32)
    short = runner.run(double, double.variant("skips_last"), {"x": x}, double.point())
    assert short.outputs["y"][-1:].view(np.uint32).tolist() == [POISON32]
    assert short.again["y"][-1:].view(np.uint32).tolist() == [POISONS32[1]] != [POISON32]
    _, problems = validate.judge(double, double.variant("skips_last"), double.point(),
                                 {"x": x}, short)
    assert problems == ("output y: 1 element(s) differ between two runs under different "
                        "poisons (left unwritten, or not deterministic)",)
    over = runner.run(double, double.variant("overruns"), {"x": x}, double.point())
    assert over.guard_damage == {"y": 4}
    _, problems = validate.judge(double, double.variant("overruns"), double.point(),
                                     {"x": x}, over)
    assert problems == ("wrote past the end of y: 4 byte(s) of the guard band after it "
                        "changed",)


def test_out_of_memory_is_recognised_and_frees_what_it_took(runner: GpuRunner,
                                                            double: Stage) -> None:
    x = np.ones(200_000, dtype=np.float32)
    with pytest.raises(FakeDriver.MemoryError) as exc:
        runner.run(double, double.variant("default"), {"x": x}, double.point(n=200_000))
    assert runner.is_oom(exc.value)
    assert runner.is_oom(RuntimeError("cuLaunchKernel failed: out of memory"))
    assert not runner.is_oom(RuntimeError("invalid argument"))
    assert runner.drv.live() == []


@pytest.mark.parametrize("cold, prelude", [(True, ["harness_flush", "harness_gate"]),
                                            (False, ["harness_gate"])])
def test_a_timed_run_checks_one_launch_then_warms_up_then_samples(
        drv: FakeDriver, runner: GpuRunner, double: Stage, cold: bool,
        prelude: list[str]) -> None:
    x = np.arange(8, dtype=np.float32)
    res, t = runner.time(double, double.variant("default"), {"x": x}, double.point(),
                         dataclasses.replace(FAST, cold=cold))
    assert res.outputs["y"].tolist() == (2 * x).tolist()
    assert t.samples == 5 and t.median_us == pytest.approx(EVENT_MS * 1000)
    assert t.launch == "stream"
    kinds = [e[1] if e[0] == "launch" else e[0] for e in drv.log
             if e[0] in ("launch", "htod", "record", "memset_d32_async")]
    assert kinds == (["htod", "memset_d32_async", "double", "double", "double"]
                     + [*prelude, "record", "double", "record", "harness_clock"] * 5)
    # What stays is the clock's 16 bytes, the flush buffer and its sink, kept for the
    # runner's lifetime.
    assert sorted(a.nbytes for a in drv.live()) == ([4, 16, 4 * 4096] if cold else [16])


def test_a_spacer_is_held_while_the_buffers_are_allocated_and_used_then_freed(
        drv: FakeDriver, runner: GpuRunner, double: Stage) -> None:
    x = np.arange(8, dtype=np.float32)
    runner.time(double, double.variant("default"), {"x": x}, double.point(), FAST)
    first = len(drv.allocs)  # the runner's own buffers (flush, clock) are made by now
    res, _ = runner.time(double, double.variant("default"), {"x": x}, double.point(),
                         dataclasses.replace(FAST, spacer_bytes=4096))
    assert res.outputs["y"].tolist() == (2 * x).tolist()
    spacer, *bufs = drv.allocs[first:]
    assert spacer.nbytes == 4096 and spacer.freed
    assert bufs and all(b.freed for b in bufs)
    freed = [e[1] for e in drv.log if e[0] == "free"]
    assert freed.index(spacer.addr) > max(freed.index(b.addr) for b in bufs)  # held throughout
    n = len(drv.allocs)
    runner.time(double, double.variant("default"), {"x": x}, double.point(), FAST)
    assert all(a.nbytes != 4096 for a in drv.allocs[n:])  # none without a spacer asked


@pytest.mark.parametrize("change", [{"mutates": ("x",)}, {"inplace": {"y": "x"}}])
def test_inputs_a_kernel_may_change_are_restored_before_the_warm_up(
        drv: FakeDriver, runner: GpuRunner, double: Stage, change: dict) -> None:
    st = dataclasses.replace(double, **change)
    runner.time(st, st.variant("default"), {"x": np.ones(8, np.float32)}, st.point(), FAST)
    kinds = [e[1] if e[0] == "launch" else e[0] for e in drv.log if e[0] in ("launch", "htod")]
    assert kinds[:4] == ["htod", "double", "htod", "double"]


def test_graph_timing_replays_one_capture(drv: FakeDriver, runner: GpuRunner, double: Stage,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    cu = FakeGraphDriver()
    monkeypatch.setattr(graphs, "load_driver", lambda: cu)
    res, t = runner.time(double, double.variant("default"), {"x": np.ones(8, np.float32)},
                         double.point(), dataclasses.replace(FAST, graph=True))
    assert t.launch == "graph" and res.outputs["y"].tolist() == [2.0] * 8
    # Captured once (the launch recorded inside), uploaded by one replay, then one per sample.
    assert cu.calls == ["begin", "end", "instantiate", "destroy"] + ["launch"] * 6 \
        + ["exec_destroy"]


def test_launches_runs_back_to_back_then_waits(drv: FakeDriver, runner: GpuRunner,
                                               double: Stage) -> None:
    runner.launches(double, double.variant("default"), {"x": np.ones(8, np.float32)},
                    double.point(), 3)
    kinds = [e[1] if e[0] == "launch" else e[0] for e in drv.log if e[0] in ("launch", "sync")]
    assert kinds == ["double"] * 3 + ["sync"]
    assert drv.live() == []


@pytest.mark.parametrize("graph", [False, True])
def test_a_constant_is_copied_in_the_checked_run_only(
        drv: FakeDriver, runner: GpuRunner, double: Stage, graph: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage whose enqueue reads a ``__constant__`` (a synchronous copy) makes that copy
    once, in the checked run: never between a sample's events, nor in a graph capture."""
    import sys
    import types

    from tests.backends.pycuda import fakes

    monkeypatch.setattr(fakes.FakeModule, "get_global", lambda self, name: (0x40, 4),
                        raising=False)
    fake_pycuda = types.ModuleType("pycuda")
    fake_pycuda.driver = types.SimpleNamespace(  # type: ignore[attr-defined]
        memcpy_dtoh=lambda dest, src: drv.log.append(("constant", src)) or dest.fill(1))
    monkeypatch.setitem(sys.modules, "pycuda", fake_pycuda)
    monkeypatch.setattr(graphs, "load_driver", lambda: FakeGraphDriver())

    def enqueue(launch, bufs, p, v):  # type: ignore[no-untyped-def]
        assert launch.constant("cfg")[0] == 1
        double.enqueue(launch, bufs, p, v)

    st = dataclasses.replace(double, enqueue=enqueue)
    runner.time(st, st.variant("default"), {"x": np.ones(8, np.float32)}, st.point(),
                dataclasses.replace(FAST, graph=graph))
    kinds = [e[0] if e[0] != "launch" else e[1] for e in drv.log
             if e[0] in ("constant", "launch", "record")]
    assert kinds.count("constant") == 1 and kinds.index("constant") < kinds.index("record")


@pytest.mark.gpu
def test_every_stage_variant_validates(reg, gpu_runner) -> None:
    for st in reg.stages.values():
        for v in st.variants:
            bad = [c for c in validate.validate(st, v, gpu_runner, seeds=1) if not c.ok]
            assert not bad, bad[0].describe()


@pytest.mark.gpu
def test_integer_outputs_are_deterministic(reg, gpu_runner) -> None:
    st = reg.get("dynamic_spikes")
    p = st.point(batch=257, in_f=3584)
    x = st.make_inputs(np.random.default_rng(5), "llm", p)
    a = gpu_runner.run(st, st.variants[0], x, p).outputs
    b = gpu_runner.run(st, st.variants[0], x, p).outputs
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name


@pytest.mark.gpu
def test_poison_catches_a_kernel_that_skips_rows(reg, gpu_runner) -> None:
    """Launching one block fewer than rows must leave poison that validation rejects."""
    st = reg.get("dynamic_spikes")

    def short_enqueue(launch, bufs, p, v):  # type: ignore[no-untyped-def]
        b = int(p["batch"]) - 1
        launch("dynamic_spikes", (b, 1, 1), (launch.block, 1, 1), bufs["x"], bufs["q"],
               bufs["vth"], np.int32(b), np.int32(p["in_f"]), np.float32(p["k"]),
               np.float32(p["vth_min"]), np.float32(p["vth_max"]))

    broken = dataclasses.replace(st, enqueue=short_enqueue)
    p = st.point(batch=4, in_f=64)
    x = st.make_inputs(np.random.default_rng(0), "normal", p)
    res = gpu_runner.run(broken, st.variants[0], x, p)
    assert np.isnan(res.outputs["vth"][-1]) and not np.isnan(res.outputs["vth"][:-1]).any()
    comps, problems = validate.judge(broken, st.variants[0], p, x, res)
    assert comps == () and problems == tuple(
        f"output {name}: {n} element(s) differ between two runs under different poisons "
        "(left unwritten, or not deterministic)" for name, n in (("q", 64), ("vth", 1)))


@pytest.mark.gpu
def test_wrong_rounding_variant_is_rejected(reg, gpu_runner) -> None:
    """The away kernel judged as half-to-even must fail on the edge family's ties (an
    edge draw whose rows include the ties row: the two roundings' references differ)."""
    st = reg.get("dynamic_spikes")
    p = st.point(batch=6, in_f=3584)
    away, even = st.variant("away"), st.variant("default")
    for seed in range(50):
        x = st.make_inputs(np.random.default_rng(seed), "edge", p)
        if not np.array_equal(st.expected(x, p, away, None)["q"],
                              st.expected(x, p, even, None)["q"]):
            break
    else:
        pytest.fail("no edge draw of 50 holds a .5 tie")
    res = gpu_runner.run(st, away, x, p)
    comps, _ = validate.judge(st, even, p, x, res)
    q = next(c for c in comps if c.output == "q")
    assert not q.ok and q.mismatches > 0


@pytest.mark.gpu
@pytest.mark.parametrize("batch", [8192, 65536])
def test_event_timing_agrees_with_ncu(reg, gpu_runner, tmp_path, batch: int) -> None:
    """At launches of 50 µs or more, the harness's cold event median and ncu's
    gpu__time_duration of the same kernel at the same point agree within 5 %."""
    import shutil

    from harness.engine import jobs, measure, profile
    from harness.results.provenance import RunMeta

    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    st = reg.get("dynamic_spikes")
    job = jobs.plan([st], [f"batch={batch}"])[0]
    row = measure.measure(job, gpu_runner, measure.BenchConfig(), RunMeta())
    assert row["status"] == "ok" and row["median_us"] >= 50, row
    prof = profile.profile(reg, st.name, sweep=[f"batch={batch}"], out_dir=tmp_path)
    ncu_us = prof.rows[0]["duration"]
    print(f"batch {batch}: events {row['median_us']:.2f} us, ncu {ncu_us:.2f} us")
    assert abs(row["median_us"] - ncu_us) / ncu_us < 0.05, (row["median_us"], ncu_us)


@pytest.mark.gpu
def test_the_device_holds_the_act_grid_blocks_the_launch_bounds_promise(reg, gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """The driver's occupancy count of act_grid's default build is at least GRID_MINB blocks
    an SM (the plugin's grid is the lesser of the two, so on this device it is the one
    the launch bounds promise)."""
    st = reg.get("activation_fused")
    v = st.variant("unidirectional")
    launcher = gpu_runner.launcher(st, v)
    minb = int(dict(v.defines)["GRID_MINB"])
    assert launcher.max_active_blocks("act_grid", st.block_for(v)) >= minb


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ("unidirectional", "bidirectional", "twos_complement"))
def test_fused_activation_path_is_bit_identical_to_the_staged_kernels(
        reg, gpu_runner, mode: str) -> None:  # type: ignore[no-untyped-def]
    """activation_fused (both layouts) against dynamic_spikes -> find_min_max ->
    transform_absmax -> spike_encode run on the same x: the same vth bits, the same
    [qmin, qmax, o, T], the same planes, and the packed planes decode to the staged q."""
    from harness.spikes import spec

    def run(name: str, variant: str, ins: dict, **at):  # type: ignore[no-untyped-def]
        st = reg.get(name)
        v = st.variant(variant)
        names = {a.name for a in st.axes}
        p = st.point(v, **{k: val for k, val in at.items() if k in names})
        return gpu_runner.run(st, v, ins, p).outputs

    fused = reg.get("activation_fused")
    for fam in ("normal", "llm", "ramp", "edge"):
        # act_one (a full cache, less, a partial packed word, past the cache), act_rows
        # (several rows, also past the cache), act_small (F % 4 != 0, wider than act_one's
        # cluster), act_grid in the int8 layout (a row a block, short rows, two and four
        # rows a block; the packed layout takes the two passes there), and the two passes
        for b, f in ((1, 3584), (1, 4096), (1, 100), (1, 4100), (1, 130), (1, 32772),
                     (3, 3584), (8, 3584), (3, 100), (4, 4100), (9, 3584), (40, 100),
                     (600, 3584), (2000, 1024), (300, 130), (64, 4100), (7, 5)):
            at = {"batch": b, "in_f": f, "k": 3.0, "mode": mode}
            x = fused.make_inputs(np.random.default_rng([b, f]), fam,
                                  fused.point(fused.variant(mode), **at))["x"]
            q = run("dynamic_spikes", "default", {"x": x}, **at)
            mm = run("find_min_max", "default", {"q": q["q"]}, **at)["mm"]
            tr = run("transform_absmax", "default", {"q": q["q"], "mm": mm}, **at)
            t = spec.planes(int(tr["amax"][0]), mode)
            planes = run("spike_encode", mode, {"v": tr["v"]}, planes=t, **at)["spikes"]
            stats = np.array([mm[0], mm[1], tr["o"][0], t], np.int32)
            for layout, name in (("int8", mode), ("packed", f"packed_{mode}")):
                pt = fused.point(fused.variant(name), **at)
                got = fused.trim(gpu_runner.run(fused, fused.variant(name), {"x": x}, pt)
                                 .outputs, pt)
                where = f"{name} {fam} batch={b} in_f={f}"
                assert got["vth"].tobytes() == q["vth"].tobytes(), where
                assert np.array_equal(got["stats"], stats), (where, got["stats"], stats)
                if layout == "int8":
                    assert np.array_equal(got["spikes"], planes), where
                else:
                    qd = run("spike_decode_packed", mode,
                             {"packed": got["packed"], "o": stats[2:3].copy()},
                             planes=t, **at)["q"]
                    assert np.array_equal(qd, q["q"]), where


@pytest.mark.gpu
def test_graph_mode_times_one_replay_of_the_stage(reg, gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """--graph: both activation_fused kernels captured once, replayed per sample; the run
    read back for checking is still a plain, poisoned launch that validates."""
    st = reg.get("activation_fused")
    v = st.variants[0]
    for batch in (1, 64):
        p = st.point(v, batch=batch)
        ins = st.make_inputs(np.random.default_rng(batch), "normal", p)
        res, t = gpu_runner.time(st, v, {k: a.copy() for k, a in ins.items()}, p,
                                 TimingConfig(budget_s=0.3, graph=True))
        comps, problems = validate.judge(st, v, p, ins, res)
        assert not problems and all(c.ok for c in comps), problems
        assert t.launch == "graph" and t.median_us > 0
        s = gpu_runner.time(st, v, ins, p, TimingConfig(budget_s=0.3))[1]
        print(f"activation_fused batch {batch}: graph replay {t.median_us:.2f} us "
              f"(noise {t.noise_pct:.2f}%), stream launches {s.median_us:.2f} us "
              f"(noise {s.noise_pct:.2f}%)")
