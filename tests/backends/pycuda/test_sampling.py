"""One event-timed sample: the flush (cold) comes before the gate, the gate before the start
event, the launch between the events, the gate opened once the end event is enqueued, the
clock kernel after; the sample is the events' time in µs with the SM clock the kernel
measured (cycles over nanoseconds). A gate that opened by itself (the work synchronised
inside its launch) turns the gate off for the later samples, which the hold then covers."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from harness.backends.pycuda import sampling
from harness.backends.pycuda.gate import TIMEOUT_NS, Gate
from harness.backends.pycuda.l2 import FlushAndHold
from harness.backends.pycuda.runner import GpuRunner
from harness.backends.pycuda.sampling import CLOCK_NS, HOT_DELAY_NS, ClockProbe, event_sampler
from harness.contract.stage import Stage
from harness.contract.timing import Sample, TimingConfig
from tests.backends.pycuda.fakes import (
    EVENT_MS,
    SM_CLOCK_MHZ,
    FakeDriver,
    FakeModule,
    clock_kernel,
    timing_module,
)


def _sampler(drv: FakeDriver, cold: bool) -> tuple[object, Gate]:
    stream = drv.Stream()
    fh = FlushAndHold(drv, stream, "sm_90", 4096, 2)
    gate = Gate(drv, stream, "sm_90")
    real_open = gate.open

    def logged_open() -> None:
        drv.log.append(("open",))
        real_open()

    gate.open = logged_open  # type: ignore[method-assign]
    probe = ClockProbe(drv, stream, "sm_90", SM_CLOCK_MHZ)
    return event_sampler(drv, stream, fh, gate, probe,
                         lambda: drv.log.append(("work",)), cold), gate


def _order(drv: FakeDriver) -> list[str]:
    return [e[0] if e[0] != "launch" else e[1] for e in drv.log
            if e[0] in ("launch", "record", "work", "dtoh", "sync", "open")]


@pytest.mark.parametrize("cold", [True, False])
def test_the_gate_holds_the_start_until_the_run_is_enqueued(
        drv: FakeDriver, fake_compilers: None, cold: bool) -> None:
    sample, _ = _sampler(drv, cold)
    got = sample()
    assert isinstance(got, Sample) and got.us == pytest.approx(EVENT_MS * 1000.0)
    assert (got.clock_mhz, got.nominal_mhz, got.gated) == (SM_CLOCK_MHZ, SM_CLOCK_MHZ, True)
    sample()
    start, end = drv.events
    # The timed interval is untouched: nothing but the work between the events, the gate
    # opened once the end is enqueued, the next sample's flush after the clock's read-back.
    # A warm sample needs no hold: the gate covers the host.
    head = ["harness_flush"] if cold else []
    assert _order(drv) == [*head, "harness_gate", "record", "work", "record", "open",
                           "harness_clock", "dtoh", "sync"] * 2
    records = drv.ops("record")
    assert records[0][1:] == (start.name, drv.streams[0].handle)
    assert records[1][1:] == (end.name, drv.streams[0].handle)
    gates = [e for e in drv.ops("launch") if e[1] == "harness_gate"]
    flags = drv.host[gates[0][5][0]]
    assert gates[0][2:4] == ((1, 1, 1), (1, 1, 1))  # one thread
    assert gates[0][5][1] == np.uint64(TIMEOUT_NS)
    assert list(flags) == [1, 0]  # opened by the host, not by itself
    clock = [e for e in drv.ops("launch") if e[1] == "harness_clock"]
    assert clock[0][5][0] == np.uint64(CLOCK_NS)
    # The mapped words are allocated once and closed (zeroed) before every sample.
    assert len(drv.ops("pagelocked_zeros")) == 1


def test_the_gate_is_opened_even_when_the_launch_raises(drv: FakeDriver,
                                                          fake_compilers: None) -> None:
    stream = drv.Stream()
    gate = Gate(drv, stream, "sm_90")
    probe = ClockProbe(drv, stream, "sm_90", SM_CLOCK_MHZ)

    def broken() -> None:
        raise RuntimeError("launch failed")

    sample = event_sampler(drv, stream, FlushAndHold(drv, stream, "sm_90", 4096, 2), gate,
                           probe, broken, True)
    with pytest.raises(RuntimeError, match="launch failed"):
        sample()
    assert gate.opened_by_itself() is False
    flags = next(iter(drv.host.values()))
    assert flags[0] == 1  # the stream is not left waiting for the timeout


@pytest.mark.parametrize("cold", [True, False])
def test_a_gate_that_opened_by_itself_turns_the_gate_off(
        drv: FakeDriver, fake_compilers: None, monkeypatch: pytest.MonkeyPatch,
        cold: bool) -> None:
    """The work synchronised inside its launch: the gate timed out. That sample and the
    later ones are ungated, the warm ones behind the hold as before."""
    def timed_out(drv_: FakeDriver, grid: object, block: object, flags: int,
                  ns: np.uint64) -> None:
        drv_.host[flags][1] = 1

    def timing(arch: str) -> FakeModule:
        mod = timing_module(drv)
        mod.kernels["harness_gate"] = timed_out
        return mod

    from harness.backends.pycuda import gate as gate_mod
    monkeypatch.setattr(gate_mod, "compile_timing_kernels", timing)
    sample, _ = _sampler(drv, cold)
    assert sample().gated is False
    assert sample().gated is False
    order = _order(drv)
    assert order.count("harness_gate") == 1 and order.count("open") == 1
    second = order[order.index("sync") + 1:]
    assert second[0] == ("harness_flush" if cold else "harness_delay")
    if not cold:
        assert drv.ops("launch")[-2][5] == (np.uint64(HOT_DELAY_NS),)


def _probe_reading(drv: FakeDriver, monkeypatch: pytest.MonkeyPatch,
                   mhz: float) -> tuple[ClockProbe, float]:
    monkeypatch.setattr(sampling, "compile_timing_kernels", lambda arch: FakeModule(
        drv, {"harness_clock": clock_kernel(lambda: mhz)}))
    probe = ClockProbe(drv, drv.Stream(), "sm_90", 1980)
    probe.enqueue()
    return probe, probe.mhz()


@pytest.mark.parametrize("mhz", [1980.0, 1485.0, 345.0])
def test_the_probe_reads_cycles_over_microseconds(drv: FakeDriver,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  mhz: float) -> None:
    probe, got = _probe_reading(drv, monkeypatch, mhz)
    assert got == pytest.approx(mhz, rel=1e-9)
    # Compiled and allocated once: a second probe reuses both.
    probe.enqueue()
    assert len(drv.allocs) == 1 and len(drv.ops("launch")) == 2


def test_throttled_samples_are_discarded_from_a_timed_run(
        drv: FakeDriver, runner: GpuRunner, double: Stage,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The first three samples at half the nominal clock: the run goes on until twenty
    samples at full clock are kept, and the Timing says what was set aside."""
    mhz = itertools.chain([990.0] * 3, itertools.repeat(float(SM_CLOCK_MHZ)))

    def timing(arch: str) -> FakeModule:
        mod = timing_module(drv)
        mod.kernels["harness_clock"] = clock_kernel(lambda: next(mhz))
        return mod

    monkeypatch.setattr(sampling, "compile_timing_kernels", timing)
    cfg = TimingConfig(warmup=2, min_samples=20, max_samples=100, budget_s=1e9)
    _, t = runner.time(double, double.variant("default"), {"x": np.ones(8, np.float32)},
                       double.point(), cfg)
    assert t.samples == 20 and t.clocks is not None
    # One clock per sample, kept or not; none for the checked run or the warm-up.
    assert len([e for e in drv.ops("launch") if e[1] == "harness_clock"]) == 23
    assert (t.clocks.throttled, t.clocks.discarded, t.clocks.throttled_min_mhz) == \
        (3, True, 990.0)
    assert t.clocks.median_mhz == t.clocks.min_mhz == SM_CLOCK_MHZ
    assert t.clocks.nominal_mhz == SM_CLOCK_MHZ
    assert t.clocks.note() == ("3 sample(s) below 75 % of the 1980 MHz nominal clock, "
                               "lowest 990 MHz, discarded")


@pytest.mark.gpu
def test_event_timer_measures_a_known_delay(gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """The delay kernel spins 200 µs by the global timer: the events must say so (±5 %);
    the clock kernel reads a clock between 10 % and 150 % of the nominal one."""
    from harness.contract import timing

    def launch() -> None:
        gpu_runner.prelude.hold(200_000)

    launch()
    gpu_runner.stream.synchronize()
    t = timing.measure(gpu_runner.sampler(launch, cold=True), TimingConfig(budget_s=1.0))
    assert 195.0 < t.median_us < 215.0, t
    nominal = gpu_runner.clock.nominal_mhz
    assert t.clocks is not None and 0.1 * nominal < t.clocks.median_mhz < 1.5 * nominal, t


@pytest.mark.gpu
def test_the_gate_keeps_a_slow_host_out_of_the_sample(gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """A host that takes 2 ms to enqueue a 20 µs delay (far longer than the flush before
    it): the gate holds the start, so the events still say 20 µs."""
    import time

    from harness.contract import timing

    def launch() -> None:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.002:
            pass
        gpu_runner.prelude.hold(20_000)

    t = timing.measure(gpu_runner.sampler(launch, cold=True),
                       TimingConfig(budget_s=1.0, max_samples=40))
    assert 19.0 < t.median_us < 30.0 and t.ungated == 0, t


@pytest.mark.gpu
def test_a_work_that_synchronises_is_timed_without_the_gate(gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """A launch that waits for the GPU inside itself would hold a gate shut: the gate opens
    by itself once, and every sample is reported ungated."""
    from harness.contract import timing

    def launch() -> None:
        gpu_runner.prelude.hold(20_000)
        gpu_runner.stream.synchronize()

    t = timing.measure(gpu_runner.sampler(launch, cold=True),
                       TimingConfig(budget_s=1.0, max_samples=30, min_samples=20))
    assert t.ungated == t.samples and t.median_us >= 19.0, t


def test_a_drained_sample_flushes_again_inside_the_events_and_takes_the_flush_off(
        drv: FakeDriver, fake_compilers: None, monkeypatch: pytest.MonkeyPatch) -> None:
    stream = drv.Stream()
    fh = FlushAndHold(drv, stream, "sm_90", 4096, 2)
    probe = ClockProbe(drv, stream, "sm_90", SM_CLOCK_MHZ)
    n = sampling.DRAIN_FLUSHES
    # the flushes alone: 70 µs, one outlier the median ignores; then the samples: 95 µs
    times = iter([0.070] * (n - 1) + [0.500] + [0.095] * 2)
    monkeypatch.setattr(drv, "Event", _timed_events(drv.Event, times))
    sample = event_sampler(drv, stream, fh, Gate(drv, stream, "sm_90"), probe,
                           lambda: drv.log.append(("work",)), cold=True, drain=True)
    # made: the flush alone, behind a flush and gated as a sample is (a cold sample of the
    # flush itself, its clock read after), DRAIN_FLUSHES times
    alone = ["harness_flush", "harness_gate", "record", "harness_flush", "record",
             "harness_clock", "dtoh", "sync"] * n
    assert _order(drv) == alone
    drv.log.clear()
    # a sample: flush, gate, start, the work and a second flush, end; 95 - the median 70
    drained = ["harness_flush", "harness_gate", "record", "work", "harness_flush", "record",
               "harness_clock", "dtoh", "sync"]
    first = sample()
    assert first.us == pytest.approx(25.0) and first.taken_off_us == pytest.approx(70.0)
    assert _order(drv) == drained
    drv.log.clear()
    assert sample().us == pytest.approx(25.0)  # the flush is measured once a sampler
    assert _order(drv) == drained


def _timed_events(make: Any, times: Any) -> Any:
    """``drv.Event`` whose events' ``time_till`` reads the next of ``times`` (ms)."""
    def event() -> Any:
        ev = make()
        ev.time_till = lambda other: next(times)
        return ev
    return event


def test_a_drained_sample_is_a_cold_one(drv: FakeDriver, fake_compilers: None) -> None:
    stream = drv.Stream()
    with pytest.raises(ValueError, match="cold"):
        event_sampler(drv, stream, FlushAndHold(drv, stream, "sm_90", 4096, 2),
                      Gate(drv, stream, "sm_90"), ClockProbe(drv, stream, "sm_90", 1),
                      lambda: None, cold=False, drain=True)
    with pytest.raises(ValueError, match="drain needs cold"):
        TimingConfig(cold=False, drain=True)
    assert TimingConfig(cold=True, drain=True).l2 == "drained"
    assert TimingConfig(cold=True).l2 == "cold" and TimingConfig(cold=False).l2 == "hot"
