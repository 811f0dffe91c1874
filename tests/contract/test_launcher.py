"""The recording launcher: what it records of each launch, and the stand-ins it gives for
what a real launcher would ask the driver or the compiled module."""

from __future__ import annotations

import numpy as np

from harness.contract.launcher import RECORDED_SM_THREADS, RecordingLauncher


def test_a_launch_is_recorded_with_tuples_whatever_it_was_given() -> None:
    """Grid and block are recorded as tuples (a list, say, from an enqueue compares equal to
    the tuple it means), with the arguments and the shared bytes, in launch order."""
    launch = RecordingLauncher(128)
    x = np.int32(7)
    launch("first", [4, 1], [128], x)
    launch("second", (2,), (64, 2), shared=512)
    assert launch.calls == [("first", (4, 1), (128,), (x,), 0),
                            ("second", (2,), (64, 2), (), 512)]
    assert all(isinstance(c[1], tuple) and isinstance(c[2], tuple) for c in launch.calls)
    assert launch.names == ["first", "second"] and launch.block == 128


def test_the_stand_ins_are_sized_as_the_real_ones() -> None:
    """A tensor map is a 128-byte CUtensorMap passed by value; a module constant is int32
    values, ``count`` of them, positive."""
    launch = RecordingLauncher(256)
    tm = launch.tensor_map(None, np.int8, 64, 64, 16, 16)
    assert tm.dtype.itemsize == 128 and bytes(tm) == bytes(128)
    c = launch.constant("SMEM", 3)
    assert c.dtype == np.int32 and c.tolist() == [1, 1, 1]


def test_occupancy_stand_ins_are_at_least_one() -> None:
    """A cluster wider than the device or a block wider than an SM's threads still gives a
    grid of one (a grid of zero launches nothing)."""
    launch = RecordingLauncher(256, sm_count=8)
    assert launch.max_active_clusters("k", 2, 128, 0) == 4
    assert launch.max_active_clusters("k", 16, 128, 0) == 1
    assert launch.max_active_blocks("k", 256) == RECORDED_SM_THREADS // 256
    assert launch.max_active_blocks("k", 2 * RECORDED_SM_THREADS) == 1


def test_the_blocks_an_sm_holds_count_their_shared_memory() -> None:
    """Dynamic shared memory limits the blocks an SM holds as the driver counts it (228 KiB
    an SM, 1 KiB of it reserved a block), or their threads, whichever is fewer; a block
    wider than an SM's shared memory still gives one."""
    launch = RecordingLauncher(256)
    assert launch.max_active_blocks("k", 256, 48 * 1024) == 4  # 4 x 49 KiB fit, 5 do not
    assert launch.max_active_blocks("k", 256, 227 * 1024) == 1
    assert launch.max_active_blocks("k", 128, 1024) == 16  # 114 by shared memory, 16 by threads
    assert launch.max_active_blocks("k", 256, 300 * 1024) == 1
