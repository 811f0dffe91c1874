"""One event-timed sample: the flush (cold) or the hold (warm) comes before the start event,
the launch between the events, and the sample is the events' time in µs."""

from __future__ import annotations

import numpy as np
import pytest

from harness.backends.pycuda.l2 import FlushAndHold
from harness.backends.pycuda.sampling import HOT_DELAY_NS, event_sampler
from harness.contract.timing import TimingConfig
from tests.backends.pycuda.fakes import EVENT_MS, FakeDriver


@pytest.mark.parametrize("cold, first", [(True, "harness_flush"), (False, "harness_delay")])
def test_the_prelude_comes_before_the_start_event(drv: FakeDriver, fake_compilers: None,
                                                   cold: bool, first: str) -> None:
    stream = drv.Stream()
    fh = FlushAndHold(drv, stream, "sm_90", 4096, 2)
    sample = event_sampler(drv, stream, fh, lambda: drv.log.append(("work",)), cold)
    assert sample() == pytest.approx(EVENT_MS * 1000.0)
    sample()
    start, end = drv.events
    order = [e[0] if e[0] != "launch" else e[1] for e in drv.log
             if e[0] in ("launch", "record", "work", "event_sync")]
    assert order == [first, "record", "work", "record", "event_sync"] * 2
    records = drv.ops("record")
    assert records[0][1:] == (start.name, stream.handle)
    assert records[1][1:] == (end.name, stream.handle)
    if not cold:
        assert drv.ops("launch")[0][5] == (np.uint64(HOT_DELAY_NS),)


@pytest.mark.gpu
def test_event_timer_measures_a_known_delay(gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """The delay kernel spins 200 µs by the global timer: the events must say so (±5 %)."""
    from harness.contract import timing

    def launch() -> None:
        gpu_runner.prelude.hold(200_000)

    launch()
    gpu_runner.stream.synchronize()
    t = timing.measure(gpu_runner.sampler(launch, cold=True), TimingConfig(budget_s=1.0))
    assert 195.0 < t.median_us < 215.0, t
