"""The device's copy bandwidth: the peak that a row's ``% of peak`` refers to
(``harness calibrate``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.backends.pycuda.buffers import alloc
from harness.contract.timing import Sample, Timing, TimingConfig, measure

#: Makes a sampler of some work: ``(enqueue, cold) -> sample`` (the runner's ``sampler``).
Sampler = Callable[[Callable[[], None], bool], Callable[[], Sample]]


def copy_bandwidth(drv: Any, stream: Any, sampler: Sampler, nbytes: int,
                   cfg: TimingConfig) -> tuple[Timing, float]:
    """Device-to-device copy of ``nbytes``; returns the timing and GB/s (read + write)."""
    src, dst = alloc(drv, nbytes), alloc(drv, nbytes)
    try:
        drv.memset_d8(src, 1, nbytes)

        def copy() -> None:
            drv.memcpy_dtod_async(dst, src, nbytes, stream)

        for _ in range(max(cfg.warmup, 1)):
            copy()
        stream.synchronize()
        t = measure(sampler(copy, cfg.cold), cfg)
    finally:
        src.free()
        dst.free()
    return t, 2 * nbytes / (t.median_us * 1e-6) / 1e9
