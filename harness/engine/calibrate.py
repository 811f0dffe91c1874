"""``harness calibrate``: the device's memory bandwidth measured. The copy of ``COPY_BYTES``
(bytes read plus bytes written over the median time) is the GPU's calibration, the peak that
``pct_peak`` is a percentage of; any other size, a fill (bytes written only: the ceiling of
a kernel that mostly writes), a mix (``reads`` units read to ``writes`` written: the
ceiling of a pass with that traffic) or a read (the same kernel writing nothing) is stored
beside it and never replaces it
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
    "mix": Kind("harness_mix<reads> kernel: a thread's int4 of each of `reads` planes "
                "read, their xor written to `writes` planes, L2 flushed, bytes read + "
                "written over median",
                "bytes_read", "read + write"),
    "read": Kind("harness_mix<reads> kernel, no plane written: a thread's int4 of each "
                 "of `reads` planes read, L2 flushed, bytes read over median",
                 "bytes_read", "bytes read"),
}
#: Device memory left beside a measurement's buffers: the L2 flush's buffer (a few times the
#: L2) and the timing helpers' own, allocated at the first sample.
HEADROOM = 512 << 20
#: The writes a byte read of the mix by default: activation_fused's pass 2, q8 in and six
#: int8 planes out (T = 6).
MIX_WRITES = 6
#: The planes a thread of the read reads by default: 64 bytes in flight, as a kernel that
#: streams its operand in 16-byte loads four deep.
READ_PLANES = 4
#: The most planes a thread of the mix reads: ``timing.cu`` has an entry point for each
#: count up to this, ``harness_mix1`` ... ``harness_mix8``, its reads unrolled.
MIX_MAX_READS = 8


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
              writes: int | None = None, reads: int | None = None) -> Calibration:
    """``harness calibrate``: time a copy, a fill, a read/write mix or a read of ``nbytes``
    and store its record: as the GPU's calibration for the copy of COPY_BYTES, else in a
    file of its own beside it. For the mix ``nbytes`` is the bytes read, as ``reads``
    planes, each unit of a plane written ``writes`` times (``reads = 1, writes = 6`` is
    activation_fused's pass 2, ``reads = 4, writes = 1`` its pass 1); for the read the
    same with nothing written (the ceiling of a kernel that only reads, such as int_gemm at
    small M). L2 flushed before each sample."""
    if kind not in KINDS:
        raise BadInput(f"unknown --kind {kind!r} (kinds: {', '.join(KINDS)})")
    if kind == "write" and nbytes % 4:
        raise BadInput(f"--bytes {nbytes}: a fill writes 32-bit words, so a multiple of 4")
    planes = kind in ("mix", "read")  # the harness_mix kernel's kinds
    if kind != "mix" and writes is not None:
        raise BadInput(f"--writes sets the mix's planes written: not for --kind {kind}")
    if not planes and reads is not None:
        raise BadInput(f"--reads sets the planes read of the mix or the read: not for --kind "
                       f"{kind}")
    w = 0 if kind == "read" else MIX_WRITES if writes is None else writes
    r = (READ_PLANES if kind == "read" else 1) if reads is None else reads
    if kind == "mix" and w < 1:
        raise BadInput(f"--writes {w}: at least 1")
    if planes and not 1 <= r <= MIX_MAX_READS:
        raise BadInput(f"--reads {r}: 1 to {MIX_MAX_READS}")
    if planes and nbytes % (16 * r):
        raise BadInput(f"--bytes {nbytes}: the {kind} takes {r} plane(s) of 16-byte units, "
                       f"so a multiple of {16 * r}")
    gpu = devices.open_gpu(device)
    need = {"copy": 2 * nbytes, "write": nbytes, "mix": nbytes + nbytes // r * w,
            "read": nbytes + nbytes // r}[kind]  # (the read's guarded store has a plane)
    free = gpu.free_device_bytes()
    if need + HEADROOM > free:  # refused whole, not an out-of-memory traceback mid-run
        raise BadInput(f"--bytes {nbytes}{_plane_flags(kind, r, w)}: the "
                       f"{kind} needs {need / 2**30:.2f} GiB of device memory and "
                       f"{HEADROOM >> 20} MiB beside it (the L2 flush's buffer and the "
                       f"timing helpers'), "
                       f"{free / 2**30:.2f} GiB are free")
    cfg = TimingConfig(budget_s=3.0)
    if planes:
        t, gbps = gpu.mix_bandwidth(nbytes, r, w, cfg)
    else:
        t, gbps = (gpu.copy_bandwidth if kind == "copy" else gpu.write_bandwidth)(nbytes, cfg)
    info = gpu.device.info
    rec = record(info, kind, nbytes, t, gbps,
                 **({"reads": r, "writes": w} if kind == "mix" else
                    {"reads": r} if kind == "read" else {}))
    is_peak = kind == "copy" and nbytes == COPY_BYTES
    label = (f"mix{w}" if r == 1 else f"mix{r}to{w}") if kind == "mix" else \
        (kind if r == READ_PLANES else f"read{r}") if kind == "read" else kind
    name = calibration.FILE if is_peak else calibration.beside(label, nbytes)
    return Calibration(rec, calibration.save(rec, info.slug, name=name), is_peak)


def _plane_flags(kind: str, reads: int, writes: int) -> str:
    """The mix's or the read's options as given on the command line, for a refusal's line."""
    if kind == "read":
        return f" --reads {reads}"
    if kind != "mix":
        return ""
    return (f" --reads {reads}" if reads != 1 else "") + f" --writes {writes}"
