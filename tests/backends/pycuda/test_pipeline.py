"""Pipelines on the pycuda backend. On the CPU, a two-step toy pipeline on the fake driver:
a first run, then the checked run with its scratch poisoned before it begins, the timed runs
reuse it and are held (and flushed, cold) first, intervals add up, nothing leaks. On the GPU,
the real pipeline."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from harness.backends.pycuda.buffers import POISON32
from harness.backends.pycuda.compile import ModuleCache
from harness.backends.pycuda.pipeline import PIPELINE_HOLD_NS, GpuPipelineContext
from harness.backends.pycuda.runner import GpuRunner
from harness.contract.stage import PipelineTrace, Stage
from harness.errors import HarnessError
from tests.backends.pycuda.fakes import EVENT_MS, FakeDriver, double_stage

N = 5


def twice(stage: Stage, seen: list[Any]) -> Any:
    """A pipeline: y = 2x on stream 0, a host read of y, z = 2y on stream 1 after an event."""

    def run(ctx: Any, bufs: Any, point: Any) -> PipelineTrace:
        ctx.mark("start", 0)
        y = ctx.alloc((N,), np.float32)
        seen.append(ctx.read(y, (N,), np.float32, 0))  # before any kernel wrote it
        ctx.step("double", "default", 0, {"x": bufs["x"], "y": y}, n=N, unknown_axis=1)
        first = float(ctx.read(y, (N,), np.float32, 0)[0])
        ctx.mark("mid", 0)
        ctx.wait("mid", 1)
        z = ctx.alloc((N,), np.float32)
        ctx.step("double", "default", 1, {"x": y, "y": z}, n=N)
        ctx.mark("end", 1)
        return PipelineTrace({"z": (z, (N,), np.dtype(np.float32))}, {"first": first},
                             {"total": (("start", "end"),),
                              "parts": (("start", "mid"), ("mid", "end"))})

    return SimpleNamespace(name="twice", run=run)


def test_a_pipeline_s_buffers_lie_behind_a_spacer_held_throughout(
        drv: FakeDriver, runner: GpuRunner, double: Stage) -> None:
    x = np.arange(N, dtype=np.float32) + 1
    first = len(drv.allocs)
    outs, _, _ = runner.pipeline(twice(double, []), {"double": double}, {"x": x}, {},
                                 repeats=2, cold=False, spacer_bytes=8192)
    assert outs["z"].tolist() == (4 * x).tolist()
    spacer = next(a for a in drv.allocs[first:] if a.nbytes == 8192)
    later = [a for a in drv.allocs[first:] if a.addr > spacer.addr]
    assert [a.nbytes for a in later].count(4 * N) == 3  # x, y and z behind it
    freed = [e[1] for e in drv.log if e[0] == "free"]
    assert freed.index(spacer.addr) > max(freed.index(a.addr) for a in later)


@pytest.mark.parametrize("cold", [True, False])
def test_a_pipeline_runs_checked_then_timed(drv: FakeDriver, runner: GpuRunner,
                                            double: Stage, cold: bool) -> None:
    seen: list[np.ndarray] = []
    x = np.arange(N, dtype=np.float32) + 1
    outs, host, per = runner.pipeline(twice(double, seen), {"double": double}, {"x": x},
                                      {}, repeats=4, cold=cold, warmup=2)
    assert outs["z"].tolist() == (4 * x).tolist() and host == {"first": 2.0}
    assert per == {"total": [EVENT_MS * 1000] * 4, "parts": [2 * EVENT_MS * 1000] * 4}
    # A first run, then the checked run, whose scratch was poisoned before it began; the
    # timed runs' not.
    assert seen[1].view(np.uint32).tolist() == [POISON32] * N
    assert len(seen) == 8 and not any(POISON32 in s.view(np.uint32) for s in seen[2:])
    assert len(drv.ops("memset_d32")) == 2  # y and z, once
    # Nothing synchronous between the checked run's steps: its poison all came before its
    # first launch, as a timed run's steps follow each other.
    ops = [(i, e) for i, e in enumerate(drv.log) if e[0] in ("launch", "memset_d32")]
    doubles = [i for i, e in ops if e[0] == "launch" and e[1] == "double"]
    assert max(i for i, e in ops if e[0] == "memset_d32") < doubles[2]
    # Scratch is pooled: the runs after the first allocate nothing.
    scratch = [a for a in drv.allocs if a.nbytes == 4 * N]
    assert len(scratch) == 3  # x, y, z
    names = [e[1] for e in drv.ops("launch")]
    runs = 2 + 2 + 4
    assert names.count("double") == 2 * runs
    assert names.count("harness_delay") == runs - 2
    assert names.count("harness_flush") == (runs - 2 if cold else 0)
    hold = next(e for e in drv.ops("launch") if e[1] == "harness_delay")
    assert hold[5] == (np.uint64(PIPELINE_HOLD_NS),)
    assert drv.ops("compile").count(("compile", "double", "default", "sm_90")) == 1
    assert not [a for a in drv.live() if a.nbytes == 4 * N]


def test_steps_run_on_their_stream_and_get_their_workspace(drv: FakeDriver, fake_compilers: None,
                                                          tmp_path: Path) -> None:
    st = double_stage(tmp_path, workspace=lambda p: {"tmp": ((p["n"],), np.dtype(np.int8))})
    main = drv.Stream()
    ctx = GpuPipelineContext(drv, main, ModuleCache("sm_90"), {"double": st}, 132)
    assert ctx.streams[0] is main and ctx.streams[1] is not main
    x = ctx.alloc((3,), np.float32)
    y = ctx.alloc((3,), np.float32)
    ctx.poison = True
    ctx.step("double", "default", 1, {"x": x, "y": y}, n=3)
    ctx.step("double", "default", 1, {"x": x, "y": y}, n=3)
    launches = drv.ops("launch")
    assert [e[4] for e in launches] == [ctx.streams[1].handle] * 2
    assert drv.ops("memset_d8") == [("memset_d8", int(drv.allocs[2]), 0xA5, 3),
                                    ("memset_d8", int(drv.allocs[3]), 0xA5, 3)]
    assert ctx.launcher("double", "default", 1) is ctx.launcher("double", "default", 1)
    # A step's persistent grid is sized by the device's SMs, as a stage's alone is.
    assert ctx.launcher("double", "default", 0).sm_count == 132
    ctx.recycle()
    assert ctx.alloc((3,), np.int8) in drv.allocs[2:]  # same size: from the pool
    assert len(drv.allocs) == 4
    ctx.free()
    assert drv.live() == []


def test_a_zeroed_workspace_is_zeroed_once_and_kept_across_runs(
        drv: FakeDriver, fake_compilers: None, tmp_path: Path) -> None:
    """A step's zeroed workspace (split-K tickets, say) is one buffer zeroed when made: the
    kernel leaves it zero, so later runs hold no synchronous memset between launches."""
    import dataclasses

    st = dataclasses.replace(
        double_stage(tmp_path, workspace=lambda p: {"tickets": ((p["n"],), np.dtype(np.uint32))}),
        zeroed=("tickets",))
    ctx = GpuPipelineContext(drv, drv.Stream(), ModuleCache("sm_90"), {"double": st}, 132)
    x = ctx.alloc((3,), np.float32)
    y = ctx.alloc((3,), np.float32)
    for _ in range(3):
        ctx.poison = True
        ctx.step("double", "default", 0, {"x": x, "y": y}, n=3)
        ctx.recycle()
    assert drv.ops("memset_d8") == [("memset_d8", int(drv.allocs[2]), 0, 12)]
    assert len(drv.allocs) == 3
    ctx.free()
    assert drv.live() == []


def test_read_mark_wait_and_elapsed(drv: FakeDriver) -> None:
    ctx = GpuPipelineContext(drv, drv.Stream(), ModuleCache("sm_90"), {}, 132)
    buf = ctx.alloc((2, 2), np.int32)
    drv.array_at(buf, 4, np.int32)[:] = [1, 2, 3, 4]
    got = ctx.read(buf, (2, 2), np.int32, 1)
    assert got.tolist() == [[1, 2], [3, 4]]
    assert drv.log[-1] == ("sync", ctx.streams[1].handle)
    ctx.mark("a", 0)
    ctx.mark("a", 1)  # the same event, recorded again
    ctx.wait("a", 1)
    assert len(drv.events) == 1
    assert drv.log[-1] == ("wait", ctx.streams[1].handle, drv.events[0].name)
    assert ctx.elapsed_us("a", "a") == pytest.approx(EVENT_MS * 1000)


@pytest.mark.gpu
def test_pipeline_round_trips_on_every_family(reg, gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """decode(encode(q)) == q and |x_rec - x| <= vth/2 on real runs (every mode)."""
    from harness.engine import validate

    pipe = reg.pipelines["spike_quant_gemm"]
    cases = [c for v in pipe.variants
             for c in validate.validate(pipe, v, gpu_runner, seeds=1, stages=reg.stages)]
    assert cases and all(c.ok for c in cases), next(c.describe() for c in cases if not c.ok)
    names = {c.output for case in cases for c in case.comparisons}
    assert {"decode(encode(q)) == q", "|x_rec - x| <= vth/2"} <= names


@pytest.mark.gpu
def test_weight_path_overlaps_the_activation_path(reg, gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """Two streams: the end-to-end time is less than the two paths' times added up."""
    pipe = reg.pipelines["spike_quant_gemm"]
    p = pipe.point(batch=16384, out_f=18944)
    ins = pipe.make_inputs(np.random.default_rng(0), "normal", p)
    _, _, per = gpu_runner.pipeline(pipe, reg.stages, ins, p, repeats=10, cold=True)
    med = {k: float(np.median(v)) for k, v in per.items()}
    serial = med["dynamic_spikes"] + med["encoding_total"] + med["weight_quant"]
    assert med["total"] < 0.95 * serial, med


@pytest.mark.gpu
def test_the_spike_linear_layer_captures_as_one_graph(reg, gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """x -> activation_fused -> int_gemm enqueues nothing the host waits on: after one
    stream run, the whole layer captures as one CUDA graph whose replay gives the same out."""
    from harness.backends.pycuda import graphs
    from harness.backends.pycuda.buffers import alloc

    pipe = reg.pipelines["spike_linear"]
    drv = gpu_runner.drv
    for batch in (1, 12, 1024):
        p = pipe.point(batch=batch, out_f=3584)
        ins = pipe.make_inputs(np.random.default_rng(0), "normal", p)
        ctx = GpuPipelineContext(drv, gpu_runner.stream, gpu_runner.modules, reg.stages,
                                 gpu_runner.device.info.sm_count)
        dev = {k: alloc(drv, a.nbytes) for k, a in ins.items()}
        try:
            for k, a in ins.items():
                drv.memcpy_htod(dev[k], np.ascontiguousarray(a))
            trace = pipe.run(ctx, dev, p)  # allocates the pool and the zeroed tickets
            gpu_runner.stream.synchronize()
            buf, shape, dtype = trace.outputs["out"]
            first = np.empty(shape, dtype)
            drv.memcpy_dtoh(first, buf)
            ctx.recycle()
            captured: list[PipelineTrace] = []
            g = graphs.Graph(gpu_runner.stream,
                             lambda c=ctx, d=dev, q=p, t=captured: t.append(pipe.run(c, d, q)))
            buf = captured[0].outputs["out"][0]
            drv.memset_d8(buf, 0xFF, first.nbytes)  # nothing ran yet: the replay writes it
            try:
                g.launch()
                gpu_runner.stream.synchronize()
            finally:
                g.close()
            again = np.empty(shape, dtype)
            drv.memcpy_dtoh(again, buf)
            assert again.tobytes() == first.tobytes(), batch
        finally:
            ctx.free()
            for b in dev.values():
                b.free()


def staged_like(seen: list[Any]) -> Any:
    """A pipeline shaped as the seed's: two kernels under the hold, a host read, then an
    interval of one kernel, the join, an interval of two kernels, the end."""

    def run(ctx: Any, bufs: Any, point: Any) -> PipelineTrace:
        y = ctx.alloc((N,), np.float32)
        ctx.mark("start", 0)
        ctx.step("double", "default", 0, {"x": bufs["x"], "y": y}, n=N)
        ctx.mark("first_end", 0)
        seen.append(ctx.read(y, (N,), np.float32, 0))  # the host's decision
        ctx.mark("enc_start", 0)
        ctx.step("double", "default", 0, {"x": y, "y": y}, n=N)
        ctx.mark("enc_end", 0)
        ctx.mark("pair_start", 0)
        ctx.step("double", "default", 0, {"x": y, "y": y}, n=N)
        ctx.step("double", "default", 0, {"x": y, "y": y}, n=N)
        ctx.mark("pair_end", 0)
        ctx.mark("end", 0)
        return PipelineTrace({"y": (y, (N,), np.dtype(np.float32))}, {},
                             {"total": (("start", "end"),), "enc": (("enc_start", "enc_end"),),
                              "pair": (("pair_start", "pair_end"),)})

    return SimpleNamespace(name="staged_like", run=run)


def _stream0_order(drv: FakeDriver, runner: GpuRunner, ctx: Any) -> list[str]:
    """Stream 0's launches, event records (by mark name; ``passed`` for the event after a
    gate) and gate openings in the last run."""
    names = {ev.name: n for n, ev in ctx.events.items()}
    if ctx._passed is not None:
        names[ctx._passed.name] = "passed"
    stream = runner.stream.handle
    ops = [e for e in drv.log if e[0] in ("launch", "record", "gate_open")
           and (e[0] == "gate_open" or (e[2] if e[0] == "record" else e[4]) == stream)]
    last = max(i for i, e in enumerate(ops) if e[0] == "launch" and e[1] == "harness_delay")
    return [names.get(e[1], e[1]) if e[0] == "record" else
            "open" if e[0] == "gate_open" else e[1] for e in ops[last + 1:]]


def test_an_interval_after_the_host_read_runs_behind_the_gate(
        drv: FakeDriver, runner: GpuRunner, double: Stage,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After the host read, each interval's first mark waits behind the gate, opened once
    its kernels are enqueued and its last mark recorded: the host's launch time falls
    between intervals, not inside one. Before a gate is closed the host waits for the
    device to pass the last one (they share their flags). Before the read (the hold) and in
    the checked run nothing is gated."""
    from harness.backends.pycuda import pipeline as pl

    made: list[Any] = []

    class Kept(pl.GpuPipelineContext):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            made.append(self)

    monkeypatch.setattr(pl, "GpuPipelineContext", Kept)
    monkeypatch.setattr(runner.gate, "open", lambda: drv.log.append(("gate_open",)))
    x = np.arange(N, dtype=np.float32) + 1
    outs, _, per = runner.pipeline(staged_like([]), {"double": double}, {"x": x}, {},
                                   repeats=2, cold=False, warmup=1)
    assert outs["y"].tolist() == (16 * x).tolist() and len(per["enc"]) == 2
    ctx = made[0]
    assert _stream0_order(drv, runner, ctx) == [
        "start", "double", "first_end",
        "harness_gate", "passed", "enc_start", "double", "enc_end", "open",
        "harness_gate", "passed", "pair_start", "double", "double", "pair_end", "open",
        "harness_gate", "passed", "end", "open"]
    # Each gate after the first of a run waited for the last one to be passed.
    last_run = drv.log[max(i for i, e in enumerate(drv.log)
                           if e[0] == "launch" and e[1] == "harness_delay"):]
    waits = [e for e in last_run if e == ("event_sync", ctx._passed.name)]
    gates = [e for e in last_run if e[0] == "launch" and e[1] == "harness_gate"]
    assert len(gates) == 3 and len(waits) == 2
    launches = [e[1] for e in drv.ops("launch")]
    # The first run and the checked run, before any hold: neither gated.
    checked = launches[:launches.index("harness_delay")]
    assert "harness_gate" not in checked and checked.count("double") == 8


def test_a_gate_that_opened_by_itself_fails_the_run(drv: FakeDriver, runner: GpuRunner,
                                                    double: Stage,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.gate, "opened_by_itself", lambda: True)
    with pytest.raises(HarnessError, match="a gate after the stream caught up with the host "
                                           "opened by itself"):
        runner.pipeline(staged_like([]), {"double": double},
                        {"x": np.ones(N, np.float32)}, {}, repeats=1, cold=False)


def test_a_host_read_behind_a_closed_gate_opens_it_first(drv: FakeDriver, fake_compilers: None,
                                                         tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A read right after an interval's first mark and step (before its last mark) would
    wait for a stream the gate holds: the gate is opened before the read's copy."""
    from harness.backends.pycuda.gate import Gate

    st = double_stage(tmp_path)
    main = drv.Stream()
    gate = Gate(drv, main, "sm_90")
    monkeypatch.setattr(gate, "open", lambda: drv.log.append(("gate_open",)))
    ctx = GpuPipelineContext(drv, main, ModuleCache("sm_90"), {"double": st}, 132, gate)
    y = ctx.alloc((N,), np.float32)
    ctx._gating, ctx._read = True, True  # a timed run, after its first read
    ctx.mark("a", 0)
    ctx.step("double", "default", 0, {"x": y, "y": y}, n=N)
    ctx.read(y, (N,), np.float32, 0)
    ops = [e[0] if e[0] != "launch" else e[1] for e in drv.log
           if e[0] in ("launch", "gate_open", "sync")]
    assert ops[-4:] == ["harness_gate", "double", "gate_open", "sync"], ops
    assert ctx._passed is not None  # the gate's own event, recorded after it


class SpyLauncher:
    """A step's launcher that records its launches and what the context asks of it."""

    block, sm_count = 128, 132

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def __call__(self, name: str, *args: Any, **kw: Any) -> None:
        self.calls.append(f"launch {name}")

    def follow(self) -> None:
        self.calls.append("follow")

    def follow_none(self) -> None:
        self.calls.append("taken back")

    def close(self) -> None:
        self.calls.append("close")


def test_an_early_step_lets_its_launcher_follow_once_and_free_closes_it(
        drv: FakeDriver, fake_compilers: None, tmp_path: Path) -> None:
    """``step(early=True)`` gives the step's launcher leave to launch its first kernel as
    the previous kernel's dependent, and takes it back after the step, even when the
    stage's enqueue raises; a step without it gets none. ``free`` waits for the streams,
    then closes every launcher (the modules loaded for dependent launches)."""
    import dataclasses

    calls: list[str] = []
    st = double_stage(tmp_path)
    ctx = GpuPipelineContext(drv, drv.Stream(), ModuleCache("sm_90"), {"double": st}, 132)
    ctx._launchers[("double", "default", 0)] = SpyLauncher(calls)  # type: ignore[assignment]
    x, y = ctx.alloc((3,), np.float32), ctx.alloc((3,), np.float32)
    ctx.step("double", "default", 0, {"x": x, "y": y}, n=3)
    ctx.step("double", "default", 0, {"x": x, "y": y}, early=True, n=3)
    assert calls == ["launch double", "taken back", "follow", "launch double", "taken back"]

    def boom(launch: Any, bufs: Any, p: Any, v: Any) -> None:
        raise HarnessError("enqueue failed")

    bad = dataclasses.replace(st, enqueue=boom)
    ctx.stages = {"double": bad}
    ctx._steps.clear()
    calls.clear()
    with pytest.raises(HarnessError, match="enqueue failed"):
        ctx.step("double", "default", 0, {"x": x, "y": y}, early=True, n=3)
    assert calls == ["follow", "taken back"]
    ctx.free()
    assert calls[-1] == "close"
    syncs = [i for i, e in enumerate(drv.log) if e[0] == "sync"]
    assert len(syncs) == 2 and max(syncs) < max(i for i, e in enumerate(drv.log)
                                                if e[0] == "free")


def test_scratch_poisoned_ahead_goes_where_the_run_asks_the_same(
        drv: FakeDriver, fake_compilers: None, tmp_path: Path) -> None:
    """``poison_ahead`` poisons, before the run, the scratch the last run asked for, and
    hands it out in order where the run asks the same size and type; a request it did not
    foresee is poisoned as it is handed out (while ``poison`` is set); what is left over
    goes back to the pool."""
    ctx = GpuPipelineContext(drv, drv.Stream(), ModuleCache("sm_90"), {}, 132)
    a, b = ctx.alloc((4,), np.float32), ctx.alloc((4,), np.int8)
    ctx.recycle()
    before = len(drv.log)
    ctx.poison_ahead()
    ahead = drv.log[before:]
    assert [e[0] for e in ahead] == ["memset_d32", "memset_d8"]
    ctx.poison = True
    got = ctx.alloc((4,), np.float32)
    assert len(drv.log) == before + 2  # handed out poisoned already: no memset now
    unforeseen = ctx.alloc((2,), np.float32)
    assert drv.log[-1][0] == "memset_d32" and int(unforeseen) not in (int(a), int(b))
    assert int(got) in (int(a), int(b))
    ctx.recycle()  # the int8 buffer poisoned ahead and never asked for returns to the pool
    assert int(ctx.alloc((4,), np.int8)) in (int(a), int(b))
    ctx.free()
    assert drv.live() == []


def test_scratch_poisoned_ahead_is_matched_by_size_and_type_in_any_order(
        drv: FakeDriver, fake_compilers: None, tmp_path: Path) -> None:
    """A run that asks in another order than the last still gets each buffer poisoned
    ahead, by size and type: 16 bytes of int8 never get the 16 bytes poisoned as float32."""
    ctx = GpuPipelineContext(drv, drv.Stream(), ModuleCache("sm_90"), {}, 132)
    ctx.alloc((4,), np.float32)
    ctx.alloc((16,), np.int8)
    ctx.recycle()
    before = len(drv.log)
    ctx.poison_ahead()
    by_word = {e[0]: e[1] for e in drv.log[before:]}  # memset_d32 / memset_d8 -> address
    ctx.poison = True
    before = len(drv.log)
    assert int(ctx.alloc((16,), np.int8)) == by_word["memset_d8"]  # asked first now
    assert int(ctx.alloc((4,), np.float32)) == by_word["memset_d32"]
    assert len(drv.log) == before  # both poisoned ahead: no memset between steps
    ctx.free()
    assert drv.live() == []
