"""Experiment: the harness CLI with every run buffer carved from one device allocation (a bump
arena, 512-byte aligned), as torch's caching allocator places small tensors in one segment.
Tests whether separate allocations cost our small-batch launches page-walk time after the
L2 flush (which reads 4x the L2 and so evicts the GPU's TLBs too)."""
import sys

from harness.backends.pycuda import buffers

ARENA = 512 << 20
_state = {"base": None, "off": 0}


class Sub:
    """A slice of the arena: an address, and a free that does nothing."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    def __int__(self) -> int:
        return self.ptr

    __index__ = __int__

    def free(self) -> None:
        pass


def alloc(drv, nbytes):
    n = max(int(nbytes), 1)
    if _state["base"] is None:
        _state["base"] = drv.mem_alloc(ARENA)
    off = _state["off"]
    if off + n > ARENA:
        return drv.mem_alloc(n)
    _state["off"] = off + (n + 511) // 512 * 512
    return Sub(int(_state["base"]) + off)


buffers.alloc = alloc
from harness.front.cli import main  # noqa: E402

sys.argv[0] = "harness"
main()
