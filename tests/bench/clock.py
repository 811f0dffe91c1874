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

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from harness.contract.timing import Sample, TimingConfig, throttled

#: The name pytest-benchmark records as a benchmark's timer (``options.timer`` in its
#: JSON): a saved run timed by another clock is no baseline for these rounds.
EVENT_CLOCK = "cuda_event_clock"

_elapsed = [0.0]  # seconds of event time the rounds have added, since the process began


def cuda_event_clock() -> float:
    """pytest-benchmark's timer: the seconds of CUDA event time the rounds have added up
    (:func:`event_round`); nothing else moves it."""
    return _elapsed[0]


assert cuda_event_clock.__name__ == EVENT_CLOCK


#: Samples a round takes at most while its SM clock is throttled, before it keeps one.
THROTTLE_RETRIES = 10


def event_round(sample: Callable[[], Sample], counts: dict[str, int] | None = None,
                fraction: float = TimingConfig.throttle_fraction) -> Callable[[], None]:
    """A round for ``benchmark.pedantic``: one ``sample`` (a runner's ``sampler``), the clock
    moved on by its time. A sample timed without the gate (the work synchronised inside its
    launch, so host time is inside) is an error, not a round. A sample whose SM clock ran
    below ``fraction`` of the nominal is discarded and taken again, as ``harness bench``
    discards it, up to :data:`THROTTLE_RETRIES` times (then the last is kept): ``counts``
    gains how many were discarded (``throttled_discarded``) and kept (``throttled_kept``),
    for the benchmark's ``extra_info``."""
    said = counts if counts is not None else {}
    said.setdefault("throttled_discarded", 0)
    said.setdefault("throttled_kept", 0)

    def once() -> None:
        for attempt in range(THROTTLE_RETRIES + 1):
            s = sample()
            if not s.gated:
                raise RuntimeError("the work synchronised inside its launch: its sample was "
                                   "timed without the gate, so host time is inside it")
            if not throttled(s, fraction):
                break
            if attempt == THROTTLE_RETRIES:
                said["throttled_kept"] += 1
            else:
                said["throttled_discarded"] += 1
        _elapsed[0] += s.us * 1e-6

    return once


@contextlib.contextmanager
def stage_rounds(runner: Any, stage: Any, variant: Any, inputs: Mapping[str, Any], point: Any,
                 counts: dict[str, int] | None = None) -> Iterator[Callable[[], None]]:
    """The rounds of one stage point on ``runner`` (a GPU runner: ``bound``, ``stream``,
    ``sampler``), its buffers held while the block runs. The stage is launched once and
    synchronised before the sampler is made, as ``harness bench``'s checked run comes first:
    a launcher's first use does host work (int_gemm's reads its kernels' ``__constant__``
    configuration back by a synchronous copy, and their parameter layout from the cubin)
    that would hold the gate shut until it opened by itself, and a sampler that once ran
    ungated stays so."""
    with runner.bound(stage, variant, inputs, point) as launch:
        launch()
        runner.stream.synchronize()
        yield event_round(runner.sampler(launch, cold=True), counts)
