"""The memory guard: whether a job fits, decided before its inputs are built.

A point too large for the machine must become an ``oom`` row, not a process the kernel's
OOM killer ends (with every later row lost and no word said). So before a job's inputs are
drawn its footprint is estimated from what the target declares, as functions of the point:

- on the device, its inputs, outputs and workspace (what the backend allocates, exactly);
- on the host, ``HOST_FACTOR`` times its inputs and outputs: the inputs, their pristine
  copy, the outputs read back, the reference's outputs and its temporaries (the built-in
  stages' references peak at 2.5 to 7 times). Where Linux lets the peak resident size be
  reset (``/proc/self/clear_refs``), each job's peak is measured, and from then on the
  target is estimated by the largest ratio it took (times ``LEARN_MARGIN``): a reference
  that needs more than the factor says (one that unpacks bits into int64 takes 33 times)
  is caught by its smaller points, one that needs less is not refused points it can run.

A stage's inputs are counted from its ``inputs`` declaration, or, where it declares none,
from ``bytes_moved`` (which reads every input once); a pipeline's inputs and outputs from
its ``bytes_moved``. Free host memory is the kernel's ``MemAvailable``, or less where a
cgroup limit leaves less room; free device memory is what the backend reports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.contract.stage import Pipeline, Point, Stage, workspace

#: Host bytes a run holds at its peak, per byte of its declared inputs and outputs.
HOST_FACTOR = 8.0
#: A learnt peak is taken times this (a larger point of the same target peaks a little
#: higher than its smaller points, relative to its size, and page sizes round up).
LEARN_MARGIN = 1.25
#: Only jobs declaring at least this many bytes teach a factor: below it, the allocator's
#: and the interpreter's own megabytes would swamp the ratio.
LEARN_BYTES = 16 << 20
#: The share of the free memory a job may plan to use.
USABLE = 0.9

_PROC = Path("/proc/self")
_MEMINFO = Path("/proc/meminfo")
_CGROUP = Path("/sys/fs/cgroup")


def _specs_bytes(specs: dict[str, tuple[tuple[int, ...], Any]]) -> int:
    return sum(int(np.prod(shape, dtype=object)) * np.dtype(dt).itemsize
               for shape, dt in specs.values())


@dataclass(frozen=True)
class Footprint:
    """What a job is estimated to need: its declared bytes, and host and device bytes."""

    #: Inputs and outputs, as declared (what the host factor multiplies).
    declared: int
    #: Host bytes at the peak of the run.
    host: int
    #: Device bytes of the run's buffers.
    device: int


def footprint(target: Stage | Pipeline, point: Point, factor: float = HOST_FACTOR
              ) -> Footprint:
    """The job's estimated footprint at ``point`` (host: ``factor`` times the declared
    inputs and outputs)."""
    if isinstance(target, Pipeline):
        declared = int(target.bytes_moved(point))
        return Footprint(declared, int(factor * declared), declared)
    ins = _specs_bytes(target.inputs(point)) if target.inputs is not None \
        else int(target.bytes_moved(point))
    outs = _specs_bytes(target.outputs(point))
    work = _specs_bytes(workspace(target, point))
    return Footprint(ins + outs, int(factor * (ins + outs)), ins + outs + work)


def _kib_field(path: Path, name: str) -> int | None:
    """A ``Name:  123 kB`` field of a /proc file, in bytes (None where there is none)."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None  # absent, unreadable, or "max" (no limit)


def _cgroup_room() -> int | None:
    """Bytes the process's memory cgroup has left under its limit (the unified hierarchy,
    then the per-controller one), or None when there is no limit to be found."""
    try:
        lines = (_PROC / "cgroup").read_text().splitlines()
    except OSError:
        return None
    root = _CGROUP
    for line in lines:
        hier, controllers, rel = [*line.split(":", 2), "", ""][:3]
        rel = rel.lstrip("/")
        if hier == "0" and not controllers:  # the unified hierarchy
            limit, used = root / rel / "memory.max", root / rel / "memory.current"
        elif "memory" in controllers.split(","):
            base = root / "memory" / rel
            if not base.is_dir():
                base = root / "memory"
            limit, used = base / "memory.limit_in_bytes", base / "memory.usage_in_bytes"
        else:
            continue
        lim, cur = _read_int(limit), _read_int(used)
        if lim is not None and cur is not None and lim < 1 << 60:
            return max(0, lim - cur)
    return None


def host_available() -> int | None:
    """Bytes of host memory a job may still take (None where the system does not say)."""
    found = [v for v in (_kib_field(_MEMINFO, "MemAvailable"), _cgroup_room())
             if v is not None]
    return min(found) if found else None


def gib(n: float) -> str:
    """Bytes, for a reason cell: ``"3.2 GiB"``."""
    return f"{n / 2**30:.1f} GiB"


def _device_free(backend: Any) -> int | None:
    """The backend's free device memory, where it tells (``free_device_bytes()``)."""
    probe = getattr(backend, "free_device_bytes", None)
    if not callable(probe):
        return None
    try:
        return int(probe())
    except Exception:  # a driver that cannot say: the allocation itself will tell
        return None


class _PeakMeter:
    """The process's peak resident size over a span, where Linux lets it be reset."""

    def __init__(self) -> None:
        self.works = (_PROC / "clear_refs").exists()

    @contextlib.contextmanager
    def span(self) -> Iterator[list[int]]:
        """Yields a list that holds, after the span, the bytes the peak rose above the
        resident size at its start (empty where it cannot be measured)."""
        got: list[int] = []
        start = self._reset()
        try:
            yield got
        finally:
            peak = _kib_field(_PROC / "status", "VmHWM") if start is not None else None
            if start is not None and peak is not None:
                got.append(max(0, peak - start))

    def _reset(self) -> int | None:
        if not self.works:
            return None
        try:
            (_PROC / "clear_refs").write_text("5")  # 5: reset the peak resident size
        except OSError:
            self.works = False
            return None
        return _kib_field(_PROC / "status", "VmRSS")


@dataclass
class MemoryGuard:
    """Decides whether a job fits before its inputs are built, and learns from each job's
    measured peak (per backend and target: a reference's temporaries are its own)."""

    factors: dict[tuple[str, str], float] = field(default_factory=dict)
    meter: _PeakMeter = field(default_factory=_PeakMeter)

    def factor(self, backend: str, target: str) -> float:
        """The host factor of the target on the backend: what it took, once learnt, else
        ``HOST_FACTOR``."""
        return self.factors.get((backend, target), HOST_FACTOR)

    def refusal(self, backend: Any, target: Stage | Pipeline, point: Point) -> str | None:
        """Why the job cannot run (its estimate is above the free host or device memory),
        or None. ``backend`` may offer ``free_device_bytes()``: the device is checked too."""
        fp = footprint(target, point, self.factor(backend.backend, target.name))
        free = host_available()
        if free is not None and fp.host > USABLE * free:
            return (f"out of memory (estimated before the inputs were built): needs about "
                    f"{gib(fp.host)} of host memory, {gib(free)} available")
        dev = _device_free(backend)
        if dev is not None and fp.device > USABLE * dev:
            return (f"out of memory (estimated before the inputs were built): needs about "
                    f"{gib(fp.device)} of device memory, {gib(dev)} free")
        return None

    @contextlib.contextmanager
    def watch(self, backend: str, target: Stage | Pipeline, point: Point) -> Iterator[None]:
        """Measure the host peak of what runs inside, and learn the target's factor from it
        when the job is large enough to tell."""
        declared = footprint(target, point).declared
        with self.meter.span() as peak:
            yield
        if peak and declared >= LEARN_BYTES:
            ratio = LEARN_MARGIN * peak[0] / declared
            key = (backend, target.name)
            if ratio > self.factors.get(key, 0.0):
                self.factors[key] = ratio


#: The guard of this process: what it learns about a target's memory holds for the
#: process's life (the plugins do not change under it).
GUARD = MemoryGuard()
