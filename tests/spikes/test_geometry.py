"""Grid sizes of the grid-stride kernels."""

from __future__ import annotations

from harness.spikes import geometry
from harness.spikes.geometry import MAX_BLOCKS, REDUCE_BLOCKS, grid_stride


def test_four_elements_a_thread_where_n_is_a_multiple_of_four() -> None:
    assert grid_stride(4 * 256 * 3, 256) == ((3, 1, 1), (256, 1, 1))
    assert grid_stride(4 * 128 * 3, 128) == ((3, 1, 1), (128, 1, 1))
    assert grid_stride(5, 256) == ((1, 1, 1), (256, 1, 1))
    assert grid_stride(257, 256) == ((2, 1, 1), (256, 1, 1))  # one a thread: 257 threads


def test_units_a_thread_take_fewer_blocks() -> None:
    assert grid_stride(3584, 256, REDUCE_BLOCKS, 4) == ((1, 1, 1), (256, 1, 1))  # 896 items
    assert grid_stride(3584, 256, REDUCE_BLOCKS, 1) == ((4, 1, 1), (256, 1, 1))
    assert grid_stride(1024 * 3584, 256, REDUCE_BLOCKS, 4)[0] == (896, 1, 1)
    assert grid_stride(1025, 256, REDUCE_BLOCKS, 4)[0] == (2, 1, 1)  # single values
    assert grid_stride(1 << 30, 256, REDUCE_BLOCKS, 4)[0] == (REDUCE_BLOCKS, 1, 1)


def test_the_grid_is_capped() -> None:
    assert grid_stride(1 << 30, 256)[0] == (MAX_BLOCKS, 1, 1)
    assert grid_stride(1 << 30, 256, REDUCE_BLOCKS)[0] == (REDUCE_BLOCKS, 1, 1)
    assert grid_stride(0, 256)[0] == (1, 1, 1)


def test_group_path_by_alignment_and_width() -> None:
    assert geometry.group_path(3584, 128) == "vec1"
    assert geometry.group_path(1000, 100) == "vec1"  # G < 128: lanes left idle
    assert geometry.group_path(520, 256) == "vec4"
    assert geometry.group_path(4096, 512) == "vec4"
    assert geometry.group_path(4096, 516) == "any"   # wider than a warp's 4 float4 a lane
    assert geometry.group_path(130, 128) == "any"    # rows not 16-byte aligned
    assert geometry.group_path(300, 7) == "any"      # groups not 16-byte aligned


def test_group_wave_is_one_wave_at_most() -> None:
    # 18944 x 28 groups, 4 a warp's step, 4 warps a block: far more than a wave of 8 an SM
    assert geometry.group_wave(18944 * 28, "vec1", 128, 132, 8, 8) == (132 * 8, 1, 1)
    # 10 groups, a warp each: 3 blocks of 4 warps, the last with 2 idle
    assert geometry.group_wave(10, "vec4", 128, 132, 8, 8) == (3, 1, 1)
    # 10 groups, 4 a warp's step on vec1: 3 warps, one block
    assert geometry.group_wave(10, "vec1", 128, 132, 8, 8) == (1, 1, 1)
