"""The launcher a stage's ``enqueue`` calls: ``extern "C"`` functions of one compiled
module, launched on one stream as prepared calls (``harness.api.Launcher``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness.backends.pycuda import cudriver
from harness.contract.stage import Stage
from harness.errors import HarnessError

#: NumPy scalar type -> PyCUDA's ``prepare`` letter; a ``np.void`` (a struct passed by value,
#: such as a 128-byte CUtensorMap) is ``<size>s``; any other argument is a pointer ("P").
SIGNATURE = {np.dtype(np.int32): "i", np.dtype(np.uint32): "I", np.dtype(np.int64): "q",
             np.dtype(np.uint64): "Q", np.dtype(np.float32): "f", np.dtype(np.float64): "d"}
#: Dynamic shared memory a kernel gets without raising its limit.
DEFAULT_SHARED = 48 * 1024
#: Static shared memory counts against the 48 KB too: opt in early enough to cover it.
STATIC_SHARED_SLACK = 8 * 1024


def letter(arg: Any) -> str:
    """The ``prepare`` format of one launch argument."""
    if isinstance(arg, np.void):
        return f"{arg.dtype.itemsize}s"
    return SIGNATURE[arg.dtype] if isinstance(arg, np.generic) else "P"


def value(arg: Any) -> Any:
    """What ``prepared_async_call`` packs for one launch argument."""
    if isinstance(arg, np.void):
        return arg.tobytes()
    return arg if isinstance(arg, np.generic) else int(arg)


class ModuleLauncher:
    """Calls ``extern "C"`` functions of one module on one stream with prepared calls.

    A function is looked up and prepared once per argument signature: what a repeated
    launch costs on the host is the call itself.
    """

    def __init__(self, stage: Stage, module: Any, stream: Any, block: int, sm_count: int,
                 cubin: Callable[[], bytes] | None = None) -> None:
        #: Threads per block the module was compiled for (``-DBLOCK``).
        self.block = block
        #: Multiprocessors of the device (a persistent grid's size: never a default, a 0
        #: here once gave grids of no blocks).
        if sm_count < 1:
            raise ValueError(f"a launcher needs the device's SM count, not {sm_count}")
        self.sm_count = sm_count
        #: The module's cubin, asked for to read a kernel's parameter layout and occupancy
        #: and to load a kernel again for a dependent launch.
        self._cubin = cubin
        self._layouts: dict[str, list[tuple[int, int]]] = {}
        self._maps: dict[tuple[Any, ...], np.void] = {}
        self._stage = stage
        self._module = module
        self._stream = stream
        self._fns: dict[tuple[str, str], Any] = {}
        self._shared: dict[str, int] = {}
        self._constants: dict[tuple[Any, ...], np.ndarray] = {}
        self._dependents: dict[str, cudriver.DriverKernel] = {}
        #: The next launch may start under the kernel before it (``follow``), once.
        self._early = False

    def follow(self) -> None:
        """Let this launcher's next launch, if its kernel waits for the one before it
        (``waits``), be that kernel's programmatic dependent: its blocks may start while
        the kernel before it on the stream ends. Any launch takes the permission back."""
        self._early = True

    def follow_none(self) -> None:
        """Take back a permission :meth:`follow` gave and no launch used."""
        self._early = False

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], *args: Any,
                 shared: int = 0, waits: bool = False) -> None:
        """Launch function ``name`` (asynchronous); scalars as NumPy scalars, structs by
        value as ``np.void``, buffers as device allocations or addresses. ``waits``: the
        kernel reads nothing the kernel before it writes until ``griddepcontrol.wait``,
        so it may be launched as that kernel's dependent where :meth:`follow` allows."""
        early, self._early = self._early and waits, False
        if early:
            self._launch_dependent(name, grid, block, args, shared)
            return
        if any(isinstance(a, np.void) for a in args):
            # A struct by value (a CUtensorMap) sits where ptxas put it, not where packing
            # would: the whole block is built from the driver's layout.
            args = (self._param_block(name, args),)
        sig = "".join(letter(a) for a in args)
        fn = self._fns.get((name, sig))
        if fn is None:
            try:
                fn = self._module.get_function(name)
            except Exception as exc:
                raise HarnessError(f"{self._stage.name}: kernel has no extern \"C\" function "
                                   f"{name!r}") from exc
            fn.prepare(sig)
            self._fns[(name, sig)] = fn
        if shared > DEFAULT_SHARED - STATIC_SHARED_SLACK and self._shared.get(name, 0) < shared:
            # Above 48 KB a kernel must opt in to its dynamic shared memory, once.
            from pycuda import driver

            fn.set_attribute(driver.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
            self._shared[name] = shared
        vals = [value(a) for a in args]
        fn.prepared_async_call(tuple(grid), tuple(block), self._stream, *vals,
                               shared_size=shared)

    def _launch_dependent(self, name: str, grid: tuple[int, ...], block: tuple[int, ...],
                          args: tuple[Any, ...], shared: int) -> None:
        """``name`` launched through the driver as the dependent of the kernel before it,
        its parameter block laid out from the driver's layout (the kernel loaded once more
        for its ``CUfunction``, once a launcher)."""
        fn = self._dependents.get(name)
        if fn is None:
            if self._cubin is None:
                raise HarnessError(f"{self._stage.name}: no cubin to launch {name} as a "
                                   "dependent")
            fn = self._dependents[name] = cudriver.DriverKernel(self._cubin(), name)
        fn.launch_dependent(grid, block, shared, int(self._stream.handle),
                            self._param_block(name, args).tobytes())

    def close(self) -> None:
        """Unload the modules loaded for dependent launches."""
        for fn in self._dependents.values():
            fn.close()
        self._dependents.clear()

    def _param_block(self, name: str, args: tuple[Any, ...]) -> np.void:
        """``args`` as ``name``'s whole parameter block, laid out as the driver reports."""
        return cudriver.pack_params(self._layout(name, len(args)), [raw(a) for a in args])

    def _layout(self, name: str, count: int) -> list[tuple[int, int]]:
        if name not in self._layouts:
            if self._cubin is None:
                raise HarnessError(f"{self._stage.name}: {name} takes a struct by value, but "
                                   "this launcher has no cubin to read its parameter layout")
            self._layouts[name] = cudriver.param_layout(self._cubin(), name, count)
        return self._layouts[name]

    def max_active_clusters(self, name: str, cluster: int, threads: int, shared: int) -> int:
        """Clusters of ``name`` the device runs at once (see ``harness.api.Launcher``), asked
        of the driver once per shape."""
        return self._occupancy(("clusters", name, cluster, threads, shared), name,
                               lambda cubin: cudriver.max_active_clusters(
                                   cubin, name, cluster, threads, shared))

    def max_active_blocks(self, name: str, threads: int, shared: int = 0) -> int:
        """Blocks of ``name`` one SM holds at once (see ``harness.api.Launcher``), asked of
        the driver once per shape."""
        return self._occupancy(("blocks", name, threads, shared), name,
                               lambda cubin: cudriver.max_active_blocks(
                                   cubin, name, threads, shared))

    def _occupancy(self, key: tuple[Any, ...], name: str, ask: Callable[[bytes], int]) -> int:
        """A count the driver gives for this module's ``name`` (``ask`` of its cubin), asked
        once a key and kept."""
        if key not in self._constants:
            if self._cubin is None:
                raise HarnessError(f"{self._stage.name}: no cubin to ask {name}'s occupancy")
            self._constants[key] = np.array([ask(self._cubin())], dtype=np.int32)
        return int(self._constants[key][0])

    def tensor_map(self, buf: Any, dtype: Any, rows: int, cols: int, box_rows: int,
                   box_cols: int, swizzle: int = 128) -> np.void:
        """A CUtensorMap over device buffer ``buf`` (see ``harness.api.Launcher``), encoded
        once per buffer and shape: a timed loop re-enqueues with the same buffers."""
        key = (int(buf), np.dtype(dtype).str, rows, cols, box_rows, box_cols, swizzle)
        if key not in self._maps:
            self._maps[key] = cudriver.tensor_map_2d(int(buf), np.dtype(dtype), rows, cols,
                                                     box_rows, box_cols, swizzle)
        return self._maps[key]

    def constant(self, name: str, count: int = 1) -> np.ndarray:
        """``count`` int32 values of the module's ``__constant__`` symbol ``name``, copied
        from the device once per launcher: the copy is synchronous, and a timed run calls
        ``enqueue`` again between its events and inside a graph capture, where it must not
        land (the values are the compiled module's, so they never change)."""
        key = (name, count)
        if key not in self._constants:
            from pycuda import driver

            ptr, size = self._module.get_global(name)
            out = np.empty(count, dtype=np.int32)
            if size < out.nbytes:
                raise HarnessError(f"{self._stage.name}: symbol {name} has {size} bytes, "
                                   f"{out.nbytes} asked for")
            driver.memcpy_dtoh(out, ptr)
            self._constants[key] = out
        return self._constants[key].copy()


def raw(arg: Any) -> bytes:
    """One argument's bytes as the kernel reads them (a pointer as 8 little-endian bytes)."""
    if isinstance(arg, (np.void, np.generic)):
        return arg.tobytes()
    return int(arg).to_bytes(8, "little")
