"""Stand-ins for ``pycuda.driver`` and cuda-python's driver bindings, so the pycuda backend's
CPU-side logic (allocation, poison, guard bands, launch order, sampling, pipelines) is tested
without a GPU.

Device memory is one NumPy byte array; every operation, asynchronous or not, happens when it
is called, in call order (one in-order stream is what the backend relies on), and is logged.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from harness.contract.stage import Axis, Stage, Variant
from harness.contract.tolerance import Exact

#: What every fake event pair measures, in ms (so every sample is 12.5 µs).
EVENT_MS = 0.0125
#: The fake device's nominal SM clock, and what its clock kernel measures, in MHz.
SM_CLOCK_MHZ = 1980


class Alloc:
    """A device allocation: ``int()`` is its address, ``free()`` releases it once."""

    def __init__(self, drv: FakeDriver, addr: int, nbytes: int) -> None:
        self.drv, self.addr, self.nbytes, self.freed = drv, addr, nbytes, False

    def __int__(self) -> int:
        return self.addr

    def free(self) -> None:
        assert not self.freed, f"allocation at {self.addr} freed twice"
        self.freed = True
        self.drv.log.append(("free", self.addr))


class _HostAllocation(bytearray):
    """Page-locked host memory as PyCUDA's ``HostAllocation``: its device pointer."""

    device_ptr = 0

    def get_device_pointer(self) -> int:
        return self.device_ptr


class FakeDriver:
    """Enough of ``pycuda.driver`` for the backend, on a byte array of ``size`` bytes."""

    class MemoryError(Exception):  # pycuda.driver calls it so
        pass

    def __init__(self, size: int = 1 << 20) -> None:
        self.mem = np.zeros(size, dtype=np.uint8)
        self.allocs: list[Alloc] = []
        #: Mapped host memory by device pointer (``pagelocked_zeros`` with ``DEVICEMAP``).
        self.host: dict[int, np.ndarray] = {}
        self.log: list[tuple[Any, ...]] = []
        self._next = 256
        drv = self

        class Stream:
            def __init__(self) -> None:
                self.handle = 1000 + len(drv.streams)
                drv.streams.append(self)

            def synchronize(self) -> None:
                drv.log.append(("sync", self.handle))

            def wait_for_event(self, ev: Any) -> None:
                drv.log.append(("wait", self.handle, ev.name))

        class Event:
            def __init__(self) -> None:
                self.name = f"event{len(drv.events)}"
                drv.events.append(self)

            def record(self, stream: Any) -> None:
                drv.log.append(("record", self.name, stream.handle))

            def synchronize(self) -> None:
                drv.log.append(("event_sync", self.name))

            def time_till(self, other: Any) -> float:
                return EVENT_MS

        self.streams: list[Any] = []
        self.events: list[Any] = []
        self.Stream = Stream
        self.Event = Event

    # -- memory --------------------------------------------------------------------------
    def mem_alloc(self, nbytes: int) -> Alloc:
        assert nbytes >= 1, "CUDA refuses a zero-byte allocation"
        if self._next + nbytes > self.mem.size:
            raise self.MemoryError("cuMemAlloc failed: out of memory")
        a = Alloc(self, self._next, nbytes)
        self._next += (nbytes + 255) // 256 * 256
        self.allocs.append(a)
        return a

    def live(self) -> list[Alloc]:
        """Allocations not freed yet."""
        return [a for a in self.allocs if not a.freed]

    def bytes_at(self, addr: Any, nbytes: int) -> np.ndarray:
        """A view of device memory (what a fake kernel reads and writes)."""
        a = int(addr)
        return self.mem[a:a + nbytes]

    def array_at(self, addr: Any, n: int, dtype: Any) -> np.ndarray:
        """``n`` elements of ``dtype`` at ``addr``, as a writable view."""
        return self.bytes_at(addr, n * np.dtype(dtype).itemsize).view(dtype)

    def memset_d32(self, buf: Any, value: int, count: int) -> None:
        self.log.append(("memset_d32", int(buf), value, count))
        self.bytes_at(buf, 4 * count).view("<u4")[:] = value

    def memset_d8(self, buf: Any, value: int, count: int) -> None:
        self.log.append(("memset_d8", int(buf), value, count))
        self.bytes_at(buf, count)[:] = value

    def memset_d32_async(self, buf: Any, value: int, count: int, stream: Any) -> None:
        self.memset_d32(buf, value, count)
        self.log[-1] = ("memset_d32_async", *self.log[-1][1:], stream.handle)

    def memset_d8_async(self, buf: Any, value: int, count: int, stream: Any) -> None:
        self.memset_d8(buf, value, count)
        self.log[-1] = ("memset_d8_async", *self.log[-1][1:], stream.handle)

    def memcpy_htod(self, dst: Any, src: np.ndarray) -> None:
        self.log.append(("htod", int(dst), src.nbytes))
        self.bytes_at(dst, src.nbytes)[:] = np.ascontiguousarray(src).reshape(-1).view(np.uint8)

    def memcpy_dtoh(self, dst: np.ndarray, src: Any) -> None:
        self.log.append(("dtoh", int(src), dst.nbytes))
        dst.reshape(-1).view(np.uint8)[:] = self.bytes_at(src, dst.nbytes)

    def memcpy_dtoh_async(self, dst: np.ndarray, src: Any, stream: Any) -> None:
        self.memcpy_dtoh(dst, src)

    def memcpy_dtod_async(self, dst: Any, src: Any, nbytes: int, stream: Any) -> None:
        self.log.append(("dtod", int(dst), int(src), nbytes, stream.handle))
        self.bytes_at(dst, nbytes)[:] = self.bytes_at(src, nbytes)

    def pagelocked_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    host_alloc_flags = SimpleNamespace(DEVICEMAP=2)

    def pagelocked_zeros(self, shape: tuple[int, ...], dtype: Any,
                         mem_flags: int = 0) -> np.ndarray:
        """Zeroed host memory; mapped (``DEVICEMAP``): its ``base`` has a device pointer,
        through which fake kernels reach it (:attr:`host`)."""
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        buf = _HostAllocation(nbytes)
        buf.device_ptr = 0x7F000000 + 4096 * len(self.host) if mem_flags else 0
        a = np.ndarray(shape, dtype=dtype, buffer=buf)
        if mem_flags:
            self.host[buf.device_ptr] = a
        self.log.append(("pagelocked_zeros", shape, mem_flags))
        return a

    def ops(self, *names: str) -> list[tuple[Any, ...]]:
        """The logged operations called one of ``names``, in order."""
        return [e for e in self.log if e[0] in names]


#: A fake kernel: ``fn(drv, grid, block, *args)`` with pointers as addresses (ints).
Kernel = Callable[..., None]


class FakeFunction:
    """A module function: ``prepare`` then ``prepared_async_call``, which runs ``fn``."""

    def __init__(self, drv: FakeDriver, name: str, fn: Kernel) -> None:
        self.drv, self.name, self.fn = drv, name, fn
        self.prepared: list[str] = []

    def prepare(self, sig: str) -> None:
        self.prepared.append(sig)

    def prepared_async_call(self, grid: tuple[int, ...], block: tuple[int, ...], stream: Any,
                            *args: Any, shared_size: int = 0) -> None:
        # As PyCUDA does: the arguments packed by the prepared format, so a format that
        # disagrees with them (their number, or a value its letter cannot hold) fails here.
        struct.pack(self.prepared[-1], *args)
        self.drv.log.append(("launch", self.name, grid, block, stream.handle, args))
        self.fn(self.drv, grid, block, *args)


class FakeModule:
    """A compiled module holding the given fake kernels."""

    def __init__(self, drv: FakeDriver, kernels: dict[str, Kernel]) -> None:
        self.drv = drv
        self.kernels = kernels
        self.functions: dict[str, FakeFunction] = {}

    def get_function(self, name: str) -> FakeFunction:
        if name not in self.kernels:
            raise LookupError(f"cuModuleGetFunction failed: named symbol not found ({name})")
        self.functions.setdefault(name, FakeFunction(self.drv, name, self.kernels[name]))
        return self.functions[name]


def clock_kernel(mhz: Callable[[], float]) -> Kernel:
    """A fake ``harness_clock``: writes the cycles and nanoseconds of a clock of ``mhz()``."""
    def kernel(drv: FakeDriver, grid: Any, block: Any, ns: np.uint64, out: int) -> None:
        drv.array_at(out, 2, np.uint64)[:] = [round(int(ns) * mhz() / 1000), int(ns)]
    return kernel


def mix_kernel(reads: int) -> Kernel:
    """A fake ``harness_mix<reads>``: unit i of each of the ``reads`` planes of ``src``
    (``16 n`` bytes apart), xor-ed, into each of ``writes`` planes of ``dst`` (the launch
    covering every unit)."""
    def kernel(drv: FakeDriver, grid: Any, block: Any, src: int, dst: int, n: np.int64,
               writes: np.int32) -> None:
        assert grid[0] * block[0] >= int(n), (grid, block, n)
        planes = drv.array_at(src, 16 * int(n) * reads, np.uint8).reshape(reads, -1)
        out = drv.array_at(dst, 16 * int(n) * int(writes), np.uint8)
        out[:] = np.tile(np.bitwise_xor.reduce(planes, axis=0), int(writes))
    return kernel


def timing_module(drv: FakeDriver) -> FakeModule:
    """The backend's timing kernels: the delay, the flush and the gate only show up in the
    log (the host opens every gate in time), the clock kernel measures the nominal clock,
    the mix writes its planes' xor into each plane."""
    return FakeModule(drv, {"harness_delay": lambda *a: None, "harness_flush": lambda *a: None,
                            "harness_gate": lambda *a: None,
                            "harness_clock": clock_kernel(lambda: SM_CLOCK_MHZ),
                            **{f"harness_mix{r}": mix_kernel(r) for r in range(1, 9)}})


def fake_device(drv: FakeDriver, l2_bytes: int = 4096, sm_count: int = 2) -> Any:
    """What GpuRunner reads of a ``context.Device``."""
    return SimpleNamespace(driver=drv, info=SimpleNamespace(
        arch="sm_90", l2_bytes=l2_bytes, sm_count=sm_count, sm_clock_mhz=SM_CLOCK_MHZ))


# -- a toy stage: y = 2 x, with kernels that get it right or wrong -----------------------
def _double(skip: int = 0, overrun: int = 0) -> Kernel:
    def kernel(drv: FakeDriver, grid: Any, block: Any, x: int, y: int, n: np.int32) -> None:
        m = int(n)
        src = drv.array_at(x, m, np.float32).copy()
        out = drv.array_at(y, m + overrun, np.float32)
        out[: m - skip] = 2 * src[: m - skip]
        out[m:] = 1.0
    return kernel


#: Variant name -> the fake kernel compiled for it.
DOUBLE_KERNELS = {"default": _double(), "skips_last": _double(skip=1),
                  "overruns": _double(overrun=1)}


def double_stage(kernel_dir: Path, **changes: Any) -> Stage:
    """A stage ``y = 2 x`` over ``n`` float32 whose kernel file lives in ``kernel_dir``."""
    (kernel_dir / "double.cu").write_text("// compiled by the fakes\n")

    def enqueue(launch: Any, bufs: Any, p: Any, v: Any) -> None:
        launch("double", (1, 1, 1), (launch.block, 1, 1), bufs["x"], bufs["y"],
               np.int32(p["n"]))

    st = Stage(
        name="double", entry_points=("double",), axes=(Axis("n", 8),), families=("normal",),
        make_inputs=lambda rng, fam, p: {
            "x": rng.standard_normal(p["n"]).astype(np.float32)},
        outputs=lambda p: {"y": ((p["n"],), np.dtype(np.float32))},
        reference=lambda ins, p, v: {"y": 2 * ins["x"]},
        enqueue=enqueue, bytes_moved=lambda p: 8 * p["n"], flops=lambda p: p["n"],
        tolerances={"y": Exact("2 x in float32: one exact doubling")}, cases=(),
        variants=tuple(Variant(n) for n in DOUBLE_KERNELS),
        kernel_dir=kernel_dir)
    return dataclasses.replace(st, **changes)


def compile_double(drv: FakeDriver) -> Callable[[Stage, Variant, str], FakeModule]:
    """A stand-in for ``compile_module``: the variant's fake kernel in a module; counts."""
    def compile_module(stage: Stage, variant: Variant, arch: str) -> FakeModule:
        drv.log.append(("compile", stage.name, variant.name, arch))
        return FakeModule(drv, {"double": DOUBLE_KERNELS[variant.name]})
    return compile_module


class FakeGraphDriver:
    """Enough of cuda.bindings.driver to see a capture begun, ended, replayed, reported."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUstreamCaptureMode:
        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 2

    def __init__(self, fail_in: str = "") -> None:
        self.fail_in = fail_in
        self.calls: list[str] = []

    def CUstream(self, h: int) -> int:
        return h

    def _r(self, name: str, *value: object) -> tuple[object, ...]:
        self.calls.append(name)
        return (900 if name == self.fail_in else 0, *value)

    def cuStreamBeginCapture(self, s, mode):  # type: ignore[no-untyped-def]
        return self._r("begin")

    def cuStreamEndCapture(self, s):  # type: ignore[no-untyped-def]
        return self._r("end", "graph")

    def cuGraphInstantiate(self, g, flags):  # type: ignore[no-untyped-def]
        return self._r("instantiate", "exe")

    def cuGraphDestroy(self, g):  # type: ignore[no-untyped-def]
        return self._r("destroy")

    def cuGraphLaunch(self, exe, s):  # type: ignore[no-untyped-def]
        return self._r("launch")

    def cuGraphExecDestroy(self, exe):  # type: ignore[no-untyped-def]
        return self._r("exec_destroy")

    def cuGetErrorName(self, err):  # type: ignore[no-untyped-def]
        return (0, b"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")
