"""The gate before a timed region: a one-thread kernel (``timing.cu``'s ``harness_gate``,
nvbench's blocking kernel) that holds the stream until the host has enqueued the start
event, the work and the end event, then opens.

The L2 flush (cold) or the stream hold (warm) ahead of a sample hide the host's launch
overhead only while the host is faster than they are; a slow host (a Python launch that
builds tensor maps, a busy machine) otherwise puts its own time between the events, and
more in one process than in another. Behind the gate the events time the GPU's work alone,
whatever the host does. A gate left closed opens by itself after :data:`TIMEOUT_NS` and
says so: the work then waited on the GPU inside its own launch (a host synchronisation),
and the sampler times it without the gate from then on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.backends.pycuda.compile import compile_timing_kernels

#: How long a closed gate waits for the host before it opens by itself (50 ms: far beyond
#: any launch, short enough that a work that synchronises costs one such wait a point).
TIMEOUT_NS = 50_000_000


class Gate:
    """The gate of one stream; its kernel is compiled and its two host-mapped words
    (open, opened by itself) allocated on first use, then kept."""

    def __init__(self, drv: Any, stream: Any, arch: str) -> None:
        self.drv = drv
        self.stream = stream
        self._arch = arch
        self._kernel: Any = None
        self._flags: np.ndarray | None = None
        self._device_ptr = 0

    def close(self) -> None:
        """Enqueue the gate: what is enqueued after it waits until :meth:`open`."""
        if self._kernel is None:
            self._kernel = compile_timing_kernels(self._arch).get_function("harness_gate")
            self._kernel.prepare("PQ")
            self._flags = self.drv.pagelocked_zeros(
                (2,), np.int32, mem_flags=self.drv.host_alloc_flags.DEVICEMAP)
            self._device_ptr = int(self._flags.base.get_device_pointer())
        assert self._flags is not None
        self._flags[:] = 0
        self._kernel.prepared_async_call((1, 1, 1), (1, 1, 1), self.stream, self._device_ptr,
                                         np.uint64(TIMEOUT_NS))

    def open(self) -> None:
        """Let the stream go on (the host has enqueued what the gate held back)."""
        assert self._flags is not None, "close() first"
        self._flags[0] = 1

    def opened_by_itself(self) -> bool:
        """Whether the last gate timed out instead of being opened (read once the stream
        is synchronised)."""
        assert self._flags is not None, "close() first"
        return bool(self._flags[1])
