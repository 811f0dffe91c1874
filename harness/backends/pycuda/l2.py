"""What is enqueued ahead of a timed region: an L2 flush (cold timing) or a stream hold
(warm timing, and before each timed pipeline run), both the backend's own kernels
(``timing.cu``).

Either keeps the GPU busy while the host enqueues the events and the launch. That hides the
host's time only while the host is the faster; a sample's gate (``gate``) holds the start
until the host is done, so the hold is left for what the gate cannot hold (pipelines, and
work that synchronises inside its launch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.backends.pycuda.buffers import alloc
from harness.backends.pycuda.compile import compile_timing_kernels


class FlushAndHold:
    """The flush and the hold of one device, on one stream; the kernels are compiled and
    the flush buffer allocated on first use, then kept for the process."""

    def __init__(self, drv: Any, stream: Any, arch: str, l2_bytes: int, sm_count: int) -> None:
        self.drv = drv
        self.stream = stream
        self._arch = arch
        self._l2_bytes = l2_bytes
        self._sm_count = sm_count
        self._kernels: tuple[Any, Any, Any] | None = None
        self._flush: Any = None
        self._sink: Any = None
        self._vecs = 0

    def _compiled(self) -> tuple[Any, Any, Any]:
        if self._kernels is None:
            mod = compile_timing_kernels(self._arch)
            delay, flush = mod.get_function("harness_delay"), mod.get_function("harness_flush")
            delay.prepare("Q")
            flush.prepare("PqP")
            self._kernels = (mod, delay, flush)
        return self._kernels

    def hold(self, ns: int) -> None:
        """Enqueue the delay kernel: the stream stays busy for ``ns`` nanoseconds."""
        self._compiled()[1].prepared_async_call((1, 1, 1), (1, 1, 1), self.stream,
                                                np.uint64(ns))

    def flush(self) -> None:
        """Enqueue a read of 4x the L2 on the stream: what the last run left is evicted, and
        the lines that replace it are clean (no write-back inside the next timed region)."""
        if self._flush is None:
            nbytes = 4 * self._l2_bytes
            self._flush = alloc(self.drv, nbytes)
            self._sink = alloc(self.drv, 4)
            self.drv.memset_d8(self._flush, 0, nbytes)
            self._vecs = nbytes // 16
        self._compiled()[2].prepared_async_call(
            (4 * self._sm_count, 1, 1), (512, 1, 1), self.stream,
            int(self._flush), np.int64(self._vecs), int(self._sink))
