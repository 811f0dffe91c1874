"""The device's measured copy bandwidth, the peak that ``pct_peak`` is a percentage of.

Stored as ``statistics/<gpu>/calibration.json`` by ``harness calibrate`` (on the GPU): a
device-to-device copy, bytes read plus bytes written over the median time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.timing import TimingConfig
from harness.results import files, provenance

FILE = "calibration.json"
#: 2 GiB each way: far beyond the L2, long enough that launch overhead is noise.
COPY_BYTES = 2 << 30


def path_for(slug: str, root: Path | None = None) -> Path:
    """Where the calibration of the GPU with this slug lives."""
    return (root or paths.statistics_dir()) / slug / FILE


def save(record: dict[str, Any], slug: str, root: Path | None = None) -> Path:
    """Write the calibration record as JSON, replacing the file whole (never half written)."""
    p = path_for(slug, root)
    return files.replace(p, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())


def load(slug: str, root: Path | None = None) -> dict[str, Any] | None:
    """The stored calibration, or None when the GPU was never calibrated."""
    p = path_for(slug, root)
    return json.loads(p.read_text()) if p.is_file() else None


@dataclass(frozen=True)
class Calibration:
    """A measured copy bandwidth and where its record was stored."""

    record: dict[str, Any]
    path: Path


def calibrate(device: int = 0, nbytes: int = COPY_BYTES) -> Calibration:
    """``harness calibrate``: time a device-to-device copy of ``nbytes`` (L2 flushed before
    each sample) and store its record as the GPU's calibration."""
    from harness.engine.devices import open_gpu

    gpu = open_gpu(device)
    t, gbps = gpu.copy_bandwidth(nbytes, TimingConfig(budget_s=3.0))
    info = gpu.device.info
    rec = {"gpu": info.name, "device": info.as_dict(), "bytes_each_way": nbytes,
           "median_us": t.median_us, "p10_us": t.p10_us, "p90_us": t.p90_us,
           "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps,
           "method": "memcpy_dtod_async, L2 flushed, bytes read + written over median",
           "date": provenance.now(), "git_sha": provenance.git_sha()}
    return Calibration(rec, save(rec, info.slug))
