"""What PyCUDA does not wrap, from the CUDA driver through ctypes: TMA tensor maps
(``cuTensorMapEncodeTiled``), a kernel's parameter layout (``cuFuncGetParamInfo``), its
occupancy, a programmatic dependent launch (``cuLaunchKernelEx``), and a device's SM count
without a context.

A kernel that takes a ``const __grid_constant__ CUtensorMap`` (128 bytes, 64-byte aligned)
gets its parameters at offsets ptxas chose, which need not be the packed offsets PyCUDA
assumes: the launcher then builds the whole parameter block from the driver's layout.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from harness.errors import HarnessError

#: CUtensorMapDataType of the element types a tensor map may hold.
TMA_DTYPES = {np.dtype(np.uint8): 0, np.dtype(np.int8): 0, np.dtype(np.uint16): 1,
              np.dtype(np.int16): 1, np.dtype(np.uint32): 2, np.dtype(np.int32): 3,
              np.dtype(np.float32): 7}
#: CUtensorMapSwizzle by the swizzle span in bytes.
SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}
L2_PROMOTION_256B = 3
TENSOR_MAP_BYTES = 128

_lib: Any = None


def libcuda() -> Any:
    """The driver library (already loaded by PyCUDA in this process)."""
    global _lib
    if _lib is None:
        try:
            _lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise HarnessError(f"the CUDA driver library cannot be loaded: {exc}") from exc
    return _lib


#: ``CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT``.
_MULTIPROCESSOR_COUNT = 16


def multiprocessors(device: int) -> int:
    """The SMs of CUDA device ``device``, asked of the driver (``cuDeviceGetAttribute``)
    without creating a context: what a parent process needs to predict the launches of a
    stage whose kernels follow the SM count, before a child runs them."""
    lib = libcuda()
    if lib.cuInit(0) != 0:
        raise HarnessError("the CUDA driver did not initialise (cuInit)")
    dev, n = ctypes.c_int(0), ctypes.c_int(0)
    if lib.cuDeviceGet(ctypes.byref(dev), ctypes.c_int(device)) != 0:
        raise HarnessError(f"no CUDA device {device}")
    if lib.cuDeviceGetAttribute(ctypes.byref(n), _MULTIPROCESSOR_COUNT, dev) != 0:
        raise HarnessError(f"CUDA device {device} did not report its multiprocessors")
    return int(n.value)


def tensor_map_2d(ptr: int, dtype: np.dtype, rows: int, cols: int, box_rows: int,
                  box_cols: int, swizzle: int = 128) -> np.void:
    """A CUtensorMap over a row-major ``rows x cols`` tensor at device address ``ptr``,
    loaded in boxes of ``box_rows x box_cols`` with the given swizzle span; reads out of
    bounds fill zeros. Returned as a 128-byte ``np.void``: the launcher passes it by value."""
    dt = np.dtype(dtype)
    if dt not in TMA_DTYPES or swizzle not in SWIZZLES:
        raise HarnessError(f"tensor map of {dt} with swizzle {swizzle} is not supported")
    lib = libcuda()
    raw = ctypes.create_string_buffer(TENSOR_MAP_BYTES + 64)
    addr = (ctypes.addressof(raw) + 63) & ~63
    fn = lib.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    err = fn(ctypes.c_void_p(addr), TMA_DTYPES[dt], 2, ctypes.c_void_p(ptr),
             (ctypes.c_uint64 * 2)(cols, rows), (ctypes.c_uint64 * 1)(cols * dt.itemsize),
             (ctypes.c_uint32 * 2)(box_cols, box_rows), (ctypes.c_uint32 * 2)(1, 1),
             0, SWIZZLES[swizzle], L2_PROMOTION_256B, 0)
    if err != 0:
        raise HarnessError(f"cuTensorMapEncodeTiled failed (CUresult {err}) for a "
                           f"{rows}x{cols} {dt} tensor in {box_rows}x{box_cols} boxes")
    return np.frombuffer(ctypes.string_at(addr, TENSOR_MAP_BYTES),
                         dtype=np.dtype((np.void, TENSOR_MAP_BYTES)))[0]


class DriverKernel:
    """Kernel ``name`` of ``cubin``, loaded once more in the current context (its module
    unloaded with :meth:`close`): what the driver calls PyCUDA does not wrap (the
    parameter layout, occupancy, ``cuLaunchKernelEx``) need its ``CUfunction``, which PyCUDA
    does not expose. ``why`` says what for, in the error where the module does not load."""

    def __init__(self, cubin: bytes, name: str, why: str = "launch it") -> None:
        self.name = name
        self._lib = libcuda()
        self._mod = ctypes.c_void_p()
        if self._lib.cuModuleLoadData(ctypes.byref(self._mod), ctypes.c_char_p(cubin)) != 0:
            raise HarnessError(f"cannot load the module of {name} to {why}")
        self._loaded = True
        #: The kernel's ``CUfunction``.
        self.handle = ctypes.c_void_p()
        if self._lib.cuModuleGetFunction(ctypes.byref(self.handle), self._mod,
                                         name.encode()) != 0:
            self.close()
            raise HarnessError(f"no kernel {name!r} in its module")
        self._shared = 0

    def set_max_shared(self, shared: int) -> None:
        """Let the kernel take ``shared`` bytes of dynamic shared memory (past 48 KB a
        kernel must opt in; the occupancy queries count what the launch would take)."""
        if self._lib.cuFuncSetAttribute(self.handle, _MAX_DYNAMIC_SHARED,
                                        ctypes.c_int(shared)) != 0:
            raise HarnessError(f"{self.name}: {shared} bytes of dynamic shared memory refused")
        self._shared = shared

    def launch_dependent(self, grid: Sequence[int], block: Sequence[int], shared: int,
                         stream: int, params: bytes) -> None:
        """Launch on ``stream`` (a ``CUstream`` handle) as the programmatic dependent of the
        kernel before it there (``cuLaunchKernelEx`` with programmatic stream
        serialization): the grid may start once every block of that kernel has triggered
        (``griddepcontrol.launch_dependents``) or ended, so the kernel must wait
        (``griddepcontrol.wait``) before it reads what that kernel writes. ``params`` is the
        whole parameter block, laid out as the kernel expects."""
        if shared > self._shared:  # the most dynamic shared memory asked so far, opted in to
            self.set_max_shared(shared)
        attr = _LaunchAttribute(_PROGRAMMATIC_STREAM_SERIALIZATION)
        attr.value[0] = 1  # programmaticStreamSerializationAllowed (the low int, little-endian)
        g, b = (*grid, 1, 1)[:3], (*block, 1, 1)[:3]
        cfg = _LaunchConfig(*g, *b, shared, ctypes.c_void_p(stream),
                            ctypes.cast(ctypes.pointer(attr), ctypes.c_void_p), 1)
        buf = ctypes.create_string_buffer(params, len(params))
        size = ctypes.c_size_t(len(params))
        extra = (ctypes.c_void_p * 5)(_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                                      _PARAM_BUFFER_SIZE, ctypes.addressof(size), _PARAM_END)
        err = self._lib.cuLaunchKernelEx(ctypes.byref(cfg), self.handle, None, extra)
        if err != 0:
            raise HarnessError(f"{self.name}: the dependent launch failed (cuLaunchKernelEx, "
                               f"CUresult {err})")

    def close(self) -> None:
        """Unload the module (once)."""
        if self._loaded:
            self._lib.cuModuleUnload(self._mod)
            self._loaded = False


@contextlib.contextmanager
def _function(cubin: bytes, name: str, why: str) -> Iterator[DriverKernel]:
    """Kernel ``name`` of ``cubin``, loaded once more in the current context to ask the
    driver ``why``, and unloaded after."""
    kernel = DriverKernel(cubin, name, why)
    try:
        yield kernel
    finally:
        kernel.close()


def param_layout(cubin: bytes, name: str, count: int) -> list[tuple[int, int]]:
    """``(offset, size)`` of each of the ``count`` parameters of kernel ``name`` in
    ``cubin``, as the driver reports them. Only indices below ``count`` are asked for: a
    question past the last parameter is an API error that compute-sanitizer reports.
    A launch that gives more arguments than the kernel takes is refused either way; one
    that gives fewer only where the driver answers ``cuFuncGetParamCount`` (the H200's
    580 driver did not), since finding the end otherwise means asking past it."""
    lib = libcuda()
    with _function(cubin, name, "read its parameters") as kernel:
        fn = kernel.handle
        known = _param_count(lib, fn)
        if known is not None and known != count:
            raise HarnessError(f"{name} takes {known} parameters, the launch gives {count}")
        layout = []
        for i in range(count):
            off, size = ctypes.c_size_t(0), ctypes.c_size_t(0)
            err = lib.cuFuncGetParamInfo(fn, ctypes.c_size_t(i), ctypes.byref(off),
                                         ctypes.byref(size))
            if err != 0:
                raise HarnessError(f"{name} has no parameter {i} (cuFuncGetParamInfo, "
                                   f"CUresult {err}); the launch gives {count}")
            layout.append((off.value, size.value))
        return layout


def _param_count(lib: ctypes.CDLL, fn: ctypes.c_void_p) -> int | None:
    """How many parameters kernel ``fn`` takes (``cuFuncGetParamCount``), or None where the
    driver lacks that call or refuses it."""
    try:
        get_count = lib.cuFuncGetParamCount
    except AttributeError:
        return None
    n = ctypes.c_size_t(0)
    if get_count(fn, ctypes.byref(n)) != 0:
        return None
    return n.value


class _LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (cuda.h): a launch's shape, for the occupancy queries and the
    dependent launch."""

    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


#: ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``.
_MAX_DYNAMIC_SHARED = 8


@contextlib.contextmanager
def _occupancy_of(cubin: bytes, name: str, shared: int) -> Iterator[ctypes.c_void_p]:
    """Kernel ``name``, loaded to ask its occupancy at ``shared`` bytes of dynamic shared
    memory (set on it first: the driver counts what the launch would take)."""
    with _function(cubin, name, "ask its occupancy") as kernel:
        kernel.set_max_shared(shared)
        yield kernel.handle


def max_active_clusters(cubin: bytes, name: str, cluster: int, threads: int,
                        shared: int) -> int:
    """How many clusters of kernel ``name`` (its cluster size fixed at compile time,
    ``cluster`` CTAs) of ``threads`` threads and ``shared`` bytes of dynamic shared memory
    the device runs at once (``cuOccupancyMaxActiveClusters``): a persistent grid of more
    would leave the rest to run after the first ones finish."""
    lib = libcuda()
    with _occupancy_of(cubin, name, shared) as fn:
        cfg = _LaunchConfig(cluster, 1, 1, threads, 1, 1, shared, None, None, 0)
        n = ctypes.c_int(0)
        err = lib.cuOccupancyMaxActiveClusters(ctypes.byref(n), fn, ctypes.byref(cfg))
        if err != 0:
            raise HarnessError(f"cuOccupancyMaxActiveClusters failed (CUresult {err}) for "
                               f"{name} in clusters of {cluster}")
        return int(n.value)


def max_active_blocks(cubin: bytes, name: str, threads: int, shared: int) -> int:
    """How many blocks of kernel ``name`` of ``threads`` threads and ``shared`` bytes of
    dynamic shared memory one SM of the device holds at once
    (``cuOccupancyMaxActiveBlocksPerMultiprocessor``: its registers, shared memory and the
    SM's threads, as this build and this device have them)."""
    lib = libcuda()
    with _occupancy_of(cubin, name, shared) as fn:
        n = ctypes.c_int(0)
        err = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(n), fn, ctypes.c_int(threads), ctypes.c_size_t(shared))
        if err != 0:
            raise HarnessError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed (CUresult "
                               f"{err}) for {name} in blocks of {threads}")
        return int(n.value)


class _LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute`` (cuda.h): an attribute's id, padded to 8 bytes, and its value,
    a 64-byte union aligned to 8 (the attribute used here is one int at its start)."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                ("value", ctypes.c_uint64 * 8)]


#: ``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION``.
_PROGRAMMATIC_STREAM_SERIALIZATION = 6
#: ``CU_LAUNCH_PARAM_END``, ``_BUFFER_POINTER`` and ``_BUFFER_SIZE``: the ``extra`` keys of
#: a launch whose parameters come as one block (as PyCUDA's launches pass them).
_PARAM_END, _PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE = 0, 1, 2


def pack_params(layout: Sequence[tuple[int, int]], values: Sequence[bytes]) -> np.void:
    """One parameter block laid out as the kernel expects, as an ``np.void``."""
    if len(layout) != len(values):
        raise HarnessError(f"the kernel takes {len(layout)} parameters, {len(values)} given")
    buf = bytearray(max((o + n for o, n in layout), default=0))
    for i, ((off, size), v) in enumerate(zip(layout, values, strict=True)):
        if len(v) != size:
            raise HarnessError(f"parameter {i} is {size} bytes, {len(v)} given")
        buf[off:off + size] = v
    return np.frombuffer(bytes(buf), dtype=np.dtype((np.void, len(buf))))[0]
