"""Grid sizes of the grid-stride kernels."""

from __future__ import annotations

from harness.spikes.geometry import MAX_BLOCKS, REDUCE_BLOCKS, grid_stride


def test_four_elements_a_thread_where_n_is_a_multiple_of_four() -> None:
    assert grid_stride(4 * 256 * 3, 256) == ((3, 1, 1), (256, 1, 1))
    assert grid_stride(4 * 128 * 3, 128) == ((3, 1, 1), (128, 1, 1))
    assert grid_stride(5, 256) == ((1, 1, 1), (256, 1, 1))
    assert grid_stride(257, 256) == ((2, 1, 1), (256, 1, 1))  # one a thread: 257 threads


def test_the_grid_is_capped() -> None:
    assert grid_stride(1 << 30, 256)[0] == (MAX_BLOCKS, 1, 1)
    assert grid_stride(1 << 30, 256, REDUCE_BLOCKS)[0] == (REDUCE_BLOCKS, 1, 1)
    assert grid_stride(0, 256)[0] == (1, 1, 1)
