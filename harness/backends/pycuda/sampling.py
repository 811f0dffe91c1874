"""One timed sample on the GPU: the work of one run between two CUDA events, with the L2
flush (cold) and the gate (``gate``: the start held until the host has enqueued the run)
ahead of it, and the SM clock measured after it (``contract.timing.Sample``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness.backends.pycuda.buffers import alloc
from harness.backends.pycuda.compile import compile_timing_kernels
from harness.backends.pycuda.gate import Gate
from harness.backends.pycuda.l2 import FlushAndHold
from harness.contract.timing import Sample

#: How long the delay kernel holds the stream before a warm sample of a work that the gate
#: cannot hold (one that synchronises inside its launch): longer than the host takes to
#: enqueue the events and the run's launches up to that point, so none of that lands in the
#: timed region (int_gemm with its tensor maps: under a 20 µs hold a kernel of 5.3 µs cold
#: measured 25 µs warm on the H200).
HOT_DELAY_NS = 100_000
#: How long the clock kernel counts SM cycles. Its two reads are each one loop turn (tens of
#: ns) after a tick of the global timer, and the turns cancel, so 10 µs keeps the error well
#: under 1 %; it adds about that much to each sample's wall time, none to its events.
CLOCK_NS = 10_000
#: Samples of the L2 flush alone (behind a flush, so it evicts clean lines only) whose
#: median a drained sample takes off: the flush is a read of 4x the L2 at the copy peak,
#: steady to ~0.05 % between points (70.88-70.93 µs on the H100).
DRAIN_FLUSHES = 21


class ClockProbe:
    """The SM clock of one device, measured on one stream by the clock kernel
    (``timing.cu``); compiled and its 16 bytes allocated on first use, then kept."""

    def __init__(self, drv: Any, stream: Any, arch: str, nominal_mhz: float) -> None:
        self.drv = drv
        self.stream = stream
        #: The device's nominal SM clock (``CLOCK_RATE``), what a reading is judged against.
        self.nominal_mhz = float(nominal_mhz)
        self._arch = arch
        self._kernel: Any = None
        self._out: Any = None
        self._host: np.ndarray | None = None

    def enqueue(self) -> None:
        """Enqueue the clock kernel and the copy of its cycles and nanoseconds to the host;
        :meth:`mhz` reads them once the stream is synchronised."""
        if self._kernel is None:
            self._kernel = compile_timing_kernels(self._arch).get_function("harness_clock")
            self._kernel.prepare("QP")
            self._out = alloc(self.drv, 16)
            self._host = self.drv.pagelocked_empty((2,), np.uint64)
        self._kernel.prepared_async_call((1, 1, 1), (1, 1, 1), self.stream,
                                         np.uint64(CLOCK_NS), int(self._out))
        self.drv.memcpy_dtoh_async(self._host, self._out, self.stream)

    def mhz(self) -> float:
        """The clock the last probe measured: cycles over microseconds."""
        assert self._host is not None, "enqueue() first"
        cycles, ns = (int(v) for v in self._host)
        return 1000.0 * cycles / ns


def flush_alone_us(drv: Any, stream: Any, prelude: FlushAndHold, gate: Gate,
                   probe: ClockProbe) -> float:
    """The median of :data:`DRAIN_FLUSHES` cold samples of the L2 flush itself (µs): each
    behind a flush and gated as any sample is, the time a drained sample's trailing flush
    takes where the run left nothing dirty."""
    flush = event_sampler(drv, stream, prelude, gate, probe, prelude.flush, cold=True)
    return float(np.median([flush().us for _ in range(DRAIN_FLUSHES)]))


def event_sampler(drv: Any, stream: Any, prelude: FlushAndHold, gate: Gate, probe: ClockProbe,
                  enqueue: Callable[[], None], cold: bool,
                  drain: bool = False) -> Callable[[], Sample]:
    """A function returning one sample of ``enqueue`` on ``stream`` (µs) with the SM clock
    measured after it (what ``harness.contract.timing.measure`` calls); its two events are
    made once.

    Each sample is gated: the start event waits until the host has enqueued the whole
    run, so the events time the GPU's work alone. A work that synchronises inside its
    launch would hold the gate shut; the gate then opens by itself, and this sample and
    every later one are timed without it (``Sample.gated`` False), behind the flush or the
    stream hold as before.

    ``drain`` (cold only): the L2 is flushed again after the run, before the end event, so
    that the run's dirty lines are written back inside the sample, and the flush's own time
    (:func:`flush_alone_us`, measured here, when the sampler is made: after the caller's
    warm-up) is taken off.
    """
    if drain and not cold:
        raise ValueError("a drained sample is a cold one")
    flush_us = flush_alone_us(drv, stream, prelude, gate, probe) if drain else 0.0
    start, end = drv.Event(), drv.Event()
    gated = True

    def sample() -> Sample:
        nonlocal gated
        if cold:
            prelude.flush()
        elif not gated:
            prelude.hold(HOT_DELAY_NS)
        this_gated = gated
        if this_gated:
            gate.close()
        try:
            start.record(stream)
            enqueue()
            if drain:
                prelude.flush()
            end.record(stream)
        finally:
            if this_gated:
                gate.open()
        # The clock kernel comes after the end event, so the timed interval is exactly what
        # it was without it, and before the next sample's flush, so the order flush, start,
        # work, end is kept too. It reads no memory and writes one 16-byte line: a cold
        # sample's flush evicts that line (its write-back lands in the flush, not in the
        # next timed region); a warm sample loses nothing but that line of what the work
        # left in L2. It reads the clock just after the work, not during it: the GPU's
        # clock management acts over milliseconds, so that is the clock the work ran at
        # (nvbench brackets the sample instead, which the global timer's tick cannot
        # resolve for a sample of a few µs).
        probe.enqueue()
        stream.synchronize()
        if this_gated and gate.opened_by_itself():
            gated = this_gated = False
        return Sample(start.time_till(end) * 1000.0 - flush_us, probe.mhz(),
                      probe.nominal_mhz, gated=this_gated, taken_off_us=flush_us)

    return sample
