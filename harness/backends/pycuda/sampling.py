"""One timed sample on the GPU: the work of one run between two CUDA events, with the L2
flush (cold) or the stream hold (warm) enqueued ahead of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.backends.pycuda.l2 import FlushAndHold

#: How long the delay kernel holds the stream before a warm sample (hides launch overhead).
HOT_DELAY_NS = 20_000


def event_sampler(drv: Any, stream: Any, prelude: FlushAndHold, enqueue: Callable[[], None],
                  cold: bool) -> Callable[[], float]:
    """A function returning one sample of ``enqueue`` on ``stream``, in µs (what
    ``harness.contract.timing.measure`` calls); its two events are made once."""
    start, end = drv.Event(), drv.Event()

    def sample() -> float:
        # The flush (or delay) keeps the GPU busy while the host enqueues the events
        # and the run's launches, so host launch overhead is not inside the timed region.
        if cold:
            prelude.flush()
        else:
            prelude.hold(HOT_DELAY_NS)
        start.record(stream)
        enqueue()
        end.record(stream)
        end.synchronize()
        return start.time_till(end) * 1000.0

    return sample
