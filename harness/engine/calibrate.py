"""``harness calibrate``: the device's memory bandwidth measured. The copy of ``COPY_BYTES``
(bytes read plus bytes written over the median time) is the GPU's calibration, the peak that
``pct_peak`` is a percentage of; any other size, or a fill (bytes written only: the ceiling
of a kernel that mostly writes), is stored beside it and never replaces it
(:mod:`harness.results.calibration`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contract.timing import TimingConfig
from harness.engine import devices
from harness.errors import BadInput
from harness.results import calibration, provenance

#: 2 GiB each way: far beyond the L2, long enough that launch overhead is noise.
COPY_BYTES = 2 << 30
#: What a kind of measurement does and how its bytes are counted.
KINDS = {
    "copy": "memcpy_dtod_async, L2 flushed, bytes read + written over median",
    "write": "memset_d32_async, L2 flushed, bytes written over median",
}


@dataclass(frozen=True)
class Calibration:
    """A measured bandwidth, where its record was stored, and whether it is the GPU's peak
    (the copy of COPY_BYTES) or a record beside it."""

    record: dict[str, Any]
    path: Path
    is_peak: bool


def calibrate(device: int = 0, nbytes: int = COPY_BYTES, kind: str = "copy") -> Calibration:
    """``harness calibrate``: time a copy or a fill of ``nbytes`` (L2 flushed before each
    sample) and store its record: as the GPU's calibration for the copy of COPY_BYTES, else
    in a file of its own beside it."""
    if kind not in KINDS:
        raise BadInput(f"unknown --kind {kind!r} (kinds: {', '.join(KINDS)})")
    gpu = devices.open_gpu(device)
    cfg = TimingConfig(budget_s=3.0)
    t, gbps = (gpu.copy_bandwidth if kind == "copy" else gpu.write_bandwidth)(nbytes, cfg)
    info = gpu.device.info
    rec = {"gpu": info.name, "device": info.as_dict(), "kind": kind,
           "bytes_each_way" if kind == "copy" else "bytes_written": nbytes,
           "median_us": t.median_us, "p10_us": t.p10_us, "p90_us": t.p90_us,
           "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps,
           "method": KINDS[kind], "date": provenance.now(), "git_sha": provenance.git_sha()}
    is_peak = kind == "copy" and nbytes == COPY_BYTES
    name = calibration.FILE if is_peak else calibration.beside(kind, nbytes)
    return Calibration(rec, calibration.save(rec, info.slug, name=name), is_peak)
