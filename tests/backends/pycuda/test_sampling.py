"""One event-timed sample: the flush (cold) or the hold (warm) comes before the start event,
the launch between the events, the clock kernel after the end event; the sample is the
events' time in µs with the SM clock the kernel measured (cycles over nanoseconds)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness.backends.pycuda import sampling
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


@pytest.mark.parametrize("cold, first", [(True, "harness_flush"), (False, "harness_delay")])
def test_the_prelude_comes_before_the_start_event_and_the_clock_after_the_end(
        drv: FakeDriver, fake_compilers: None, cold: bool, first: str) -> None:
    stream = drv.Stream()
    fh = FlushAndHold(drv, stream, "sm_90", 4096, 2)
    probe = ClockProbe(drv, stream, "sm_90", SM_CLOCK_MHZ)
    sample = event_sampler(drv, stream, fh, probe, lambda: drv.log.append(("work",)), cold)
    got = sample()
    assert isinstance(got, Sample) and got.us == pytest.approx(EVENT_MS * 1000.0)
    assert (got.clock_mhz, got.nominal_mhz) == (SM_CLOCK_MHZ, SM_CLOCK_MHZ)
    sample()
    start, end = drv.events
    order = [e[0] if e[0] != "launch" else e[1] for e in drv.log
             if e[0] in ("launch", "record", "work", "dtoh", "sync")]
    # The timed interval is untouched: nothing but the work between the events, and the
    # next sample's prelude follows the clock's read-back.
    assert order == [first, "record", "work", "record", "harness_clock", "dtoh", "sync"] * 2
    records = drv.ops("record")
    assert records[0][1:] == (start.name, stream.handle)
    assert records[1][1:] == (end.name, stream.handle)
    clock = [e for e in drv.ops("launch") if e[1] == "harness_clock"]
    assert clock[0][2:5] == ((1, 1, 1), (1, 1, 1), stream.handle)  # one thread
    assert clock[0][5][0] == np.uint64(CLOCK_NS)
    if not cold:
        assert drv.ops("launch")[0][5] == (np.uint64(HOT_DELAY_NS),)


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
