"""pytest-benchmark's clock for the GPU benchmarks: the kernels' CUDA event time.

pytest-benchmark times a round by reading its timer before and after the round's function.
With the host's clock that interval holds the launch and the stream synchronisation: at a
few µs of kernel, most of the round and most of its noise, so a 10 % gate would judge the
host. Here the timer is a clock that only the rounds move: each round takes one sample as
``harness bench`` does (the L2 flushed, the start gated until the launch is enqueued, CUDA
events around the work) and moves the clock on by that sample's time. The interval
pytest-benchmark records for a round is then the work's event time, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.contract.timing import Sample

#: The name pytest-benchmark records as a benchmark's timer (``options.timer`` in its
#: JSON): a saved run timed by another clock is no baseline for these rounds.
EVENT_CLOCK = "cuda_event_clock"

_elapsed = [0.0]  # seconds of event time the rounds have added, since the process began


def cuda_event_clock() -> float:
    """pytest-benchmark's timer: the seconds of CUDA event time the rounds have added up
    (:func:`event_round`); nothing else moves it."""
    return _elapsed[0]


assert cuda_event_clock.__name__ == EVENT_CLOCK


def event_round(sample: Callable[[], Sample]) -> Callable[[], None]:
    """A round for ``benchmark.pedantic``: one ``sample`` (a runner's ``sampler``), the clock
    moved on by its time. A sample timed without the gate (the work synchronised inside its
    launch, so host time is inside) is an error, not a round."""

    def once() -> None:
        s = sample()
        if not s.gated:
            raise RuntimeError("the work synchronised inside its launch: its sample was timed "
                               "without the gate, so host time is inside it")
        _elapsed[0] += s.us * 1e-6

    return once
