"""transform_absmax's launch on the CPU: one kernel that makes the decision itself from
``mm`` and the mode (no initialising launch), a grid of one pass of UNITS loads a thread
where that fits in REDUCE_BLOCKS blocks (the kernel's slots), and validation cases in every
mode that take each of the kernel's ways to write ``o`` and ``amax`` (a one-block grid writes
them itself; a larger one's last block reduces the slots, every slot at the cap)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from harness.contract.launcher import RecordingLauncher
from harness.spikes import spec
from harness.spikes.geometry import REDUCE_BLOCKS, REDUCE_UNITS, grid_stride
from tests.plugins.support import kernel_define, reduction_grids

BUFS = {"q": "q-buffer", "mm": "mm-buffer", "o": "o-buffer", "amax": "amax-buffer",
        "v": "q-buffer"}


@pytest.mark.parametrize("mode", spec.MODES)
@pytest.mark.parametrize(("batch", "in_f", "blocks"), [
    (1, 3584, 1), (1024, 3584, 896), (16384, 3584, REDUCE_BLOCKS), (3, 1, 1), (13, 130, 2),
])
def test_one_launch_deciding_on_the_device(reg, mode: str, batch: int, in_f: int,
                                           blocks: int) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("transform_absmax")
    assert st.entry_points == ("transform_absmax",)
    launch = RecordingLauncher(256)
    st.enqueue(launch, BUFS, st.point(batch=batch, in_f=in_f, mode=mode), st.variants[0])
    ((kernel, grid, threads, args, shared),) = launch.calls
    n = batch * in_f
    assert kernel == "transform_absmax" and shared == 0
    assert (grid, threads) == grid_stride(n, 256, REDUCE_BLOCKS, REDUCE_UNITS) == \
        ((blocks, 1, 1), (256, 1, 1))
    q, nn, mm, m, o, amax = args
    assert (q, mm, o, amax) == ("q-buffer", "mm-buffer", "o-buffer", "amax-buffer")
    assert isinstance(nn, np.int64) and int(nn) == n
    assert isinstance(m, np.int32) and int(m) == spec.MODES.index(mode)


@pytest.mark.parametrize("block", [256, 128])
def test_cases_take_the_direct_write_and_the_last_block_in_every_mode(
        reg, block: int) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("transform_absmax")
    grids: dict[str, set[int]] = collections.defaultdict(set)
    passes: dict[str, set[tuple[int, bool, bool]]] = collections.defaultdict(set)
    for case, blocks, loops, aligned in reduction_grids(st, BUFS, block, REDUCE_UNITS):
        grids[case["mode"]].add(blocks)
        passes[case["mode"]].add((blocks, loops, aligned))
    assert set(grids) == set(spec.MODES)
    for mode, g in grids.items():
        assert 1 in g                                  # no slot, no ticket
        assert any(1 < b < REDUCE_BLOCKS for b in g)   # the last of a few blocks
        # Every slot, and the loop's next pass, on both paths.
        assert {(REDUCE_BLOCKS, True, True), (REDUCE_BLOCKS, True, False)} <= passes[mode]


def test_the_kernels_units_are_the_plugins() -> None:
    assert kernel_define("kernels/transform_absmax.cu", "UNITS") == REDUCE_UNITS


@pytest.mark.parametrize("mode", spec.MODES)
def test_the_reference_decides_from_min_then_max(reg, mode: str) -> None:  # type: ignore[no-untyped-def]
    """The reference decides from ``mm``, read as (qmin, qmax), not from q itself (the
    kernel reads mm, so the reference must): mm = (-5, 9) on a row whose own ends are -3
    and 7; o is SPEC's decision from -5 and 9, v = q - o and amax = max |v|."""
    st = reg.get("transform_absmax")
    q = np.array([[-3, 7, 0]], np.int32)
    ref = st.expected({"q": q.copy(), "mm": np.array([-5, 9], np.int32)},
                      st.point(batch=1, in_f=3, mode=mode), st.variants[0])
    o = spec.offset(-5, 9, mode)
    assert ref["o"].tolist() == [o] and ref["v"].tolist() == (q - o).tolist()
    assert ref["amax"].tolist() == [int(np.abs(q - o).max())]
    assert {m: spec.offset(-5, 9, m) for m in spec.MODES} != \
        {m: spec.offset(9, -5, m) for m in spec.MODES}  # the order matters somewhere
    assert {m: spec.offset(-5, 9, m) for m in spec.MODES} != \
        {m: spec.offset(-3, 7, m) for m in spec.MODES}  # and mm's values, not q's
