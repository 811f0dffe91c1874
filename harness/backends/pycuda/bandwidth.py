"""The device's memory bandwidth, timed on the device (``harness calibrate``): a copy (the
peak that a row's ``% of peak`` refers to), a fill (writes only: the ceiling of a kernel
that mostly writes), or a read/write mix (``timing.cu``'s ``harness_mix``: some planes
read to some written, none for a read: the ceiling of a pass with that traffic)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from harness.backends.pycuda.buffers import alloc
from harness.contract.timing import Sample, Timing, TimingConfig, measure

#: Makes a sampler of some work: ``(enqueue, cold) -> sample`` (the runner's ``sampler``).
Sampler = Callable[[Callable[[], None], bool], Callable[[], Sample]]


def _timed(sampler: Sampler, work: Callable[[], None], stream: Any,
           cfg: TimingConfig) -> Timing:
    """``work`` warmed up outside the samples (at least once), then measured."""
    for _ in range(max(cfg.warmup, 1)):
        work()
    stream.synchronize()
    return measure(sampler(work, cfg.cold), cfg)


@contextlib.contextmanager
def _allocated(drv: Any, *sizes: int) -> Iterator[list[Any]]:
    """Device buffers of these sizes, every one freed on leaving, those already allocated
    too when a later allocation fails."""
    with contextlib.ExitStack() as stack:
        bufs = []
        for n in sizes:
            buf = alloc(drv, n)
            stack.callback(buf.free)
            bufs.append(buf)
        yield bufs


def copy_bandwidth(drv: Any, stream: Any, sampler: Sampler, nbytes: int,
                   cfg: TimingConfig) -> tuple[Timing, float]:
    """Device-to-device copy of ``nbytes``; returns the timing and GB/s (read + write)."""
    with _allocated(drv, nbytes, nbytes) as (src, dst):
        drv.memset_d8(src, 1, nbytes)
        t = _timed(sampler, lambda: drv.memcpy_dtod_async(dst, src, nbytes, stream), stream,
                   cfg)
    return t, 2 * nbytes / (t.median_us * 1e-6) / 1e9


def write_bandwidth(drv: Any, stream: Any, sampler: Sampler, nbytes: int,
                    cfg: TimingConfig) -> tuple[Timing, float]:
    """A fill of ``nbytes`` (rounded down to whole 32-bit words) by the driver's memset;
    returns the timing and GB/s (bytes written)."""
    words = nbytes // 4
    with _allocated(drv, 4 * words) as (dst,):
        t = _timed(sampler, lambda: drv.memset_d32_async(dst, 0x3F800000, words, stream),
                   stream, cfg)
    return t, 4 * words / (t.median_us * 1e-6) / 1e9


#: Threads a block of ``harness_mix<R>``: one int4 each, one step a block (the kernels'
#: ``__launch_bounds__`` assume it).
MIX_BLOCK = 256


def mix_bandwidth(drv: Any, stream: Any, sampler: Sampler, kernel: Any, nbytes: int,
                  reads: int, writes: int, cfg: TimingConfig) -> tuple[Timing, float]:
    """``nbytes`` read as ``reads`` planes of whole 16-byte units, each thread's units
    xor-ed and written to ``writes`` planes (none: a read), by ``kernel`` (the
    ``harness_mix<reads>`` entry point, a prepared call like the backend's other helpers);
    returns the timing and GB/s (bytes read + written)."""
    import numpy as np

    units = nbytes // (16 * reads)  # a plane's units: one a thread
    grid = (-(-units // MIX_BLOCK), 1, 1)
    kernel.prepare("PPqi")
    # With no plane written (a read) dst still gets one: the kernel's guarded store.
    with _allocated(drv, 16 * units * reads, 16 * units * max(writes, 1)) as (src, dst):
        drv.memset_d8(src, 1, 16 * units * reads)
        t = _timed(sampler, lambda: kernel.prepared_async_call(
            grid, (MIX_BLOCK, 1, 1), stream, int(src), int(dst), np.int64(units),
            np.int32(writes)), stream, cfg)
    return t, 16 * units * (reads + writes) / (t.median_us * 1e-6) / 1e9
