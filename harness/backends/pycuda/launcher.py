"""The launcher a stage's ``enqueue`` calls: ``extern "C"`` functions of one compiled
module, launched on one stream as prepared calls (``harness.api.Launcher``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.contract.stage import Stage
from harness.errors import HarnessError

#: NumPy scalar type -> PyCUDA's ``prepare`` letter; a ``np.void`` (a struct passed by value,
#: such as a 128-byte CUtensorMap) is ``<size>s``; any other argument is a pointer ("P").
SIGNATURE = {np.dtype(np.int32): "i", np.dtype(np.uint32): "I", np.dtype(np.int64): "q",
             np.dtype(np.uint64): "Q", np.dtype(np.float32): "f", np.dtype(np.float64): "d"}
#: Dynamic shared memory a kernel gets without raising its limit.
DEFAULT_SHARED = 48 * 1024


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

    def __init__(self, stage: Stage, module: Any, stream: Any, block: int) -> None:
        #: Threads per block the module was compiled for (``-DBLOCK``).
        self.block = block
        self._stage = stage
        self._module = module
        self._stream = stream
        self._fns: dict[tuple[str, str], Any] = {}
        self._shared: dict[str, int] = {}

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], *args: Any,
                 shared: int = 0) -> None:
        """Launch function ``name`` (asynchronous); scalars as NumPy scalars, structs by
        value as ``np.void``, buffers as device allocations or addresses."""
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
        if shared > DEFAULT_SHARED and self._shared.get(name, 0) < shared:
            # Above 48 KB a kernel must opt in to its dynamic shared memory, once.
            from pycuda import driver

            fn.set_attribute(driver.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
            self._shared[name] = shared
        vals = [value(a) for a in args]
        fn.prepared_async_call(tuple(grid), tuple(block), self._stream, *vals,
                               shared_size=shared)
