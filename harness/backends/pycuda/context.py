"""The one module that creates a CUDA context.

PyCUDA is imported here lazily, so every CPU-side part of the harness works without it;
a GPU command on a machine without PyCUDA, a driver or a device gets a one-line reason.
The context is the device's primary context, which other CUDA libraries (torch) share.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from harness.errors import GpuUnavailable


def load_pycuda() -> ModuleType:
    """``pycuda.driver``, initialised; GpuUnavailable with the reason otherwise."""
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        raise GpuUnavailable(
            f"pycuda is not importable ({exc}); install the GPU extra: pip install '.[cuda]'"
        ) from exc
    try:
        drv.init()
    except Exception as exc:
        raise GpuUnavailable(f"the CUDA driver cannot be initialised: {exc}") from exc
    return drv


def gpu_available() -> tuple[bool, str]:
    """Whether a GPU can be used here, and if not, why (for skips and the CPU fallback)."""
    try:
        drv = load_pycuda()
        if drv.Device.count() == 0:
            return False, "no CUDA device is visible"
    except GpuUnavailable as exc:
        return False, str(exc)
    return True, ""


@dataclass(frozen=True)
class DeviceInfo:
    """What the harness records about the GPU next to every result."""

    index: int
    name: str
    cc: tuple[int, int]
    sm_count: int
    l2_bytes: int
    total_mem_bytes: int
    driver: str
    cuda: str
    sm_clock_mhz: int
    mem_clock_mhz: int
    mem_bus_bits: int

    @property
    def arch(self) -> str:
        """The nvcc target of this device, e.g. ``sm_90``."""
        return f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def slug(self) -> str:
        """A folder name for the GPU: ``NVIDIA H200`` -> ``h200``."""
        return gpu_slug(self.name)

    def as_dict(self) -> dict[str, Any]:
        """Plain fields for JSON."""
        return asdict(self)


def gpu_slug(name: str) -> str:
    """A folder name for a GPU name: lower case, vendor dropped, runs of others as '-'."""
    s = re.sub(r"^nvidia\s+", "", name.strip().lower())
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-") or "gpu"


def smi_query(index: int, field: str) -> str:
    """One ``nvidia-smi --query-gpu`` field of a device ('' when nvidia-smi is missing)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return ""
    try:
        out = subprocess.run(
            [exe, f"--id={index}", f"--query-gpu={field}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.splitlines()[0] if out else ""


class Device:
    """An open CUDA context on one GPU; ``close()`` (or process exit) releases it."""

    def __init__(self, index: int = 0) -> None:
        drv = load_pycuda()
        n = drv.Device.count()
        if n == 0:
            raise GpuUnavailable("no CUDA device is visible")
        if not 0 <= index < n:
            raise GpuUnavailable(f"device index {index} is out of range: {n} CUDA device(s), "
                                 f"0..{n - 1}")
        self.driver = drv
        dev = drv.Device(index)
        self._ctx = dev.retain_primary_context()
        self._ctx.push()
        self._open = True
        #: Whether the context is on this thread's context stack (``suspend``, ``current``).
        self._pushed = True
        atexit.register(self.close)
        a = dev.get_attributes()
        att = drv.device_attribute
        api = drv.get_driver_version()
        self.info = DeviceInfo(
            index=index, name=dev.name(), cc=dev.compute_capability(),
            sm_count=int(a[att.MULTIPROCESSOR_COUNT]), l2_bytes=int(a[att.L2_CACHE_SIZE]),
            total_mem_bytes=int(dev.total_memory()),
            driver=smi_query(index, "driver_version") or str(api),
            cuda=f"{api // 1000}.{(api % 1000) // 10}",
            sm_clock_mhz=int(a[att.CLOCK_RATE]) // 1000,
            mem_clock_mhz=int(a[att.MEMORY_CLOCK_RATE]) // 1000,
            mem_bus_bits=int(a[att.GLOBAL_MEMORY_BUS_WIDTH]),
        )

    def close(self) -> None:
        """Pop the context (idempotent)."""
        if self._open:
            self._open = False
            if self._pushed:
                self._pushed = False
                with contextlib.suppress(Exception):  # already torn down at interpreter exit
                    self._ctx.pop()

    def suspend(self) -> None:
        """Pop the context off this thread's stack, leaving it open; :meth:`current` makes it
        current again for a block. PyCUDA aborts the process when a thread ends with a
        context on its stack, and a Dask worker's task thread ends when the worker closes:
        so a worker holds its context on the thread only while a task runs."""
        if self._open and self._pushed:
            self._ctx.pop()
            self._pushed = False

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """The context current on this thread for the block (pushed and popped again when
        :meth:`suspend` had taken it off; as it is otherwise)."""
        if self._pushed or not self._open:
            yield
            return
        self._ctx.push()
        self._pushed = True
        try:
            yield
        finally:
            self._pushed = False
            self._ctx.pop()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
