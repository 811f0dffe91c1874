"""``harness calibrate``: the device's memory bandwidth measured. The copy of ``COPY_BYTES``
(bytes read plus bytes written over the median time) is the GPU's calibration, the peak that
``pct_peak`` is a percentage of; any other size, a fill (bytes written only: the ceiling of
a kernel that mostly writes), or a mix (one read to ``writes`` writes: the ceiling of a
pass with that traffic) is stored beside it and never replaces it
(:mod:`harness.results.calibration`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contract.timing import Timing, TimingConfig
from harness.engine import devices
from harness.errors import BadInput
from harness.results import calibration, provenance

#: 2 GiB each way: far beyond the L2, long enough that launch overhead is noise.
COPY_BYTES = 2 << 30


@dataclass(frozen=True)
class Kind:
    """A kind of measurement: what it times, the record's key for its size, and how its
    bytes are counted."""

    method: str
    size_key: str
    counted: str


KINDS = {
    "copy": Kind("memcpy_dtod_async, L2 flushed, bytes read + written over median",
                 "bytes_each_way", "read + write"),
    "write": Kind("memset_d32_async, L2 flushed, bytes written over median",
                  "bytes_written", "bytes written"),
    "mix": Kind("harness_mix kernel: each 16 bytes read written to `writes` planes, one "
                "int4 a thread, L2 flushed, bytes read + written over median",
                "bytes_read", "read + write"),
}
#: Device memory left beside a measurement's buffers: the L2 flush's buffer (a few times the
#: L2) and the timing helpers' own, allocated at the first sample.
HEADROOM = 512 << 20
#: The writes a byte read of the mix by default: activation_fused's pass 2, q8 in and six
#: int8 planes out (T = 6).
MIX_WRITES = 6


@dataclass(frozen=True)
class Calibration:
    """A measured bandwidth, where its record was stored, and whether it is the GPU's peak
    (the copy of COPY_BYTES) or a record beside it."""

    record: dict[str, Any]
    path: Path
    is_peak: bool


def record(info: Any, kind: str, nbytes: int, t: Timing, gbps: float,
           **extra: Any) -> dict[str, Any]:
    """A measurement's record as ``harness calibrate`` stores it (``extra`` adds keys, and a
    ``note`` is appended to the method)."""
    k = KINDS[kind]
    note = extra.pop("note", "")
    return {"gpu": info.name, **extra, "device": info.as_dict(), "kind": kind,
            k.size_key: nbytes, "median_us": t.median_us, "p10_us": t.p10_us,
            "p90_us": t.p90_us, "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps,
            "method": k.method + (f"; {note}" if note else ""), "date": provenance.now(),
            "git_sha": provenance.git_sha()}


def calibrate(device: int = 0, nbytes: int = COPY_BYTES, kind: str = "copy",
              writes: int | None = None) -> Calibration:
    """``harness calibrate``: time a copy, a fill or a read/write mix of ``nbytes`` (the
    bytes read, for the mix, each written ``writes`` times; L2 flushed before each sample)
    and store its record: as the GPU's calibration for the copy of COPY_BYTES, else in a
    file of its own beside it."""
    if kind not in KINDS:
        raise BadInput(f"unknown --kind {kind!r} (kinds: {', '.join(KINDS)})")
    if kind == "write" and nbytes % 4:
        raise BadInput(f"--bytes {nbytes}: a fill writes 32-bit words, so a multiple of 4")
    if kind != "mix" and writes is not None:
        raise BadInput(f"--writes sets the mix's writes a read: not for --kind {kind}")
    if kind == "mix" and nbytes % 16:
        raise BadInput(f"--bytes {nbytes}: the mix reads 16-byte units, so a multiple of 16")
    w = MIX_WRITES if writes is None else writes
    if kind == "mix" and w < 1:
        raise BadInput(f"--writes {w}: at least 1")
    gpu = devices.open_gpu(device)
    need = nbytes * {"copy": 2, "write": 1, "mix": 1 + w}[kind]
    free = gpu.free_device_bytes()
    if need + HEADROOM > free:  # refused whole, not an out-of-memory traceback mid-run
        raise BadInput(f"--bytes {nbytes}{f' --writes {w}' if kind == 'mix' else ''}: the "
                       f"{kind} needs {need / 2**30:.2f} GiB of device memory and "
                       f"{HEADROOM >> 20} MiB beside it (the L2 flush's buffer and the "
                       f"timing helpers'), "
                       f"{free / 2**30:.2f} GiB are free")
    cfg = TimingConfig(budget_s=3.0)
    if kind == "mix":
        t, gbps = gpu.mix_bandwidth(nbytes, w, cfg)
    else:
        t, gbps = (gpu.copy_bandwidth if kind == "copy" else gpu.write_bandwidth)(nbytes, cfg)
    info = gpu.device.info
    rec = record(info, kind, nbytes, t, gbps, **({"writes": w} if kind == "mix" else {}))
    is_peak = kind == "copy" and nbytes == COPY_BYTES
    label = f"mix{w}" if kind == "mix" else kind
    name = calibration.FILE if is_peak else calibration.beside(label, nbytes)
    return Calibration(rec, calibration.save(rec, info.slug, name=name), is_peak)
