"""``harness calibrate``: the device's copy bandwidth measured, the peak that ``pct_peak`` is
a percentage of: a device-to-device copy, bytes read plus bytes written over the median time,
stored by :mod:`harness.results.calibration`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contract.timing import TimingConfig
from harness.engine import devices
from harness.results import calibration, provenance

#: 2 GiB each way: far beyond the L2, long enough that launch overhead is noise.
COPY_BYTES = 2 << 30


@dataclass(frozen=True)
class Calibration:
    """A measured copy bandwidth and where its record was stored."""

    record: dict[str, Any]
    path: Path


def calibrate(device: int = 0, nbytes: int = COPY_BYTES) -> Calibration:
    """``harness calibrate``: time a device-to-device copy of ``nbytes`` (L2 flushed before
    each sample) and store its record as the GPU's calibration."""
    gpu = devices.open_gpu(device)
    t, gbps = gpu.copy_bandwidth(nbytes, TimingConfig(budget_s=3.0))
    info = gpu.device.info
    rec = {"gpu": info.name, "device": info.as_dict(), "bytes_each_way": nbytes,
           "median_us": t.median_us, "p10_us": t.p10_us, "p90_us": t.p90_us,
           "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps,
           "method": "memcpy_dtod_async, L2 flushed, bytes read + written over median",
           "date": provenance.now(), "git_sha": provenance.git_sha()}
    return Calibration(rec, calibration.save(rec, info.slug))
