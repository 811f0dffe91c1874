"""find_min_max's launch on the CPU: one kernel, no initialising launch, a grid of one pass
of UNITS loads a thread where that fits in REDUCE_BLOCKS blocks (the kernel's slots), and
validation cases that take each of the kernel's ways to write ``mm`` (a one-block grid
writes it itself; a larger one's last block reduces the slots, every slot at the cap)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.contract.launcher import RecordingLauncher
from harness.spikes.geometry import REDUCE_BLOCKS, REDUCE_UNITS, grid_stride
from tests.plugins.support import kernel_define, reduction_grids

BUFS = {"q": "q-buffer", "mm": "mm-buffer"}


@pytest.mark.parametrize(("batch", "in_f", "blocks"), [
    (1, 3584, 1),                # 896 16-byte units: one block of 256 x 4 writes mm itself
    (1024, 3584, 896),           # one pass
    (16384, 3584, REDUCE_BLOCKS),
    (7, 5, 1),                   # 35 single values
    (5, 20003, 98),              # single values
])
def test_one_launch_over_the_capped_grid(reg, batch: int, in_f: int,
                                         blocks: int) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("find_min_max")
    assert st.entry_points == ("find_min_max",)
    launch = RecordingLauncher(256)
    st.enqueue(launch, BUFS, st.point(batch=batch, in_f=in_f), st.variants[0])
    ((kernel, grid, threads, args, shared),) = launch.calls
    n = batch * in_f
    assert kernel == "find_min_max" and shared == 0
    assert (grid, threads) == grid_stride(n, 256, REDUCE_BLOCKS, REDUCE_UNITS) == \
        ((blocks, 1, 1), (256, 1, 1))
    assert args[0] == "q-buffer" and args[2] == "mm-buffer"
    assert isinstance(args[1], np.int64) and int(args[1]) == n


@pytest.mark.parametrize("block", [256, 128])
def test_cases_take_the_direct_write_and_the_last_block(reg, block: int) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("find_min_max")
    grids, passes = set(), set()
    for _, blocks, loops, aligned in reduction_grids(st, BUFS, block, REDUCE_UNITS):
        grids.add(blocks)
        passes.add((blocks, loops, aligned))
    assert 1 in grids                                  # no slot, no ticket
    assert any(1 < b < REDUCE_BLOCKS for b in grids)   # the last of a few blocks
    # Every slot, and the loop's next pass, on both paths.
    assert {(REDUCE_BLOCKS, True, True), (REDUCE_BLOCKS, True, False)} <= passes


def test_the_kernels_numbers_are_the_plugins() -> None:
    assert kernel_define("kernels/common/reduce_last.cuh", "LAST_MAX_BLOCKS") == REDUCE_BLOCKS
    assert kernel_define("kernels/find_min_max.cu", "UNITS") == REDUCE_UNITS
