"""Grid sizes of the grid-stride kernels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


def test_group_step_grid_at_warp_steps_0_is_one_wave_at_most() -> None:
    # 18944 x 28 groups, 4 a warp's step, 4 warps a block: far more than a wave of 8 an SM
    assert geometry.group_step_grid(18944 * 28, "vec1", 128, 132, 8, 8) == (132 * 8, 1, 1)
    # 10 groups, a warp each: 3 blocks of 4 warps, the last with 2 idle
    assert geometry.group_step_grid(10, "vec4", 128, 132, 8, 8) == (3, 1, 1)
    # 10 groups, 4 a warp's step on vec1: 3 warps, one block
    assert geometry.group_step_grid(10, "vec1", 128, 132, 8, 8) == (1, 1, 1)


def _all_ints(*dims: tuple[int, ...]) -> bool:
    return all(type(d) is int for grid in dims for d in grid)


def test_grids_are_python_ints() -> None:
    """Every grid and block dimension is a Python int, as a launch takes it, not a float."""
    assert _all_ints(*grid_stride(4 * 256 * 3, 256), *grid_stride(1 << 30, 256))
    assert _all_ints(*geometry.reduce_grid(3584, 256, ()))
    assert _all_ints(geometry.chunk_grid(5120, 128, 132, 2, 8),
                     geometry.chunk_grid(1 << 30, 128, 132, 2, 8))
    assert _all_ints(geometry.group_step_grid(64, "vec1", 128, 132, 8, 8),
                     geometry.group_step_grid(64, "vec4", 128, 132, 8, 8))
    plan = geometry.general_gemm_plan(64, 64, 1000, 100, 1)
    assert _all_ints(plan["grid"], (plan["splits"], plan["ws"], plan["smem"]))


def test_reduce_grid_takes_the_builds_units() -> None:
    """reduce_grid reads UNITS from the build's string defines, else REDUCE_UNITS."""
    assert geometry.REDUCE_UNITS == 4 and REDUCE_BLOCKS == 1024
    assert geometry.reduce_grid(3584, 256, ()) == ((1, 1, 1), (256, 1, 1))
    assert geometry.reduce_grid(3584, 256, [("UNITS", "1"), ("BLOCK", "256")]) == \
        ((4, 1, 1), (256, 1, 1))
    assert geometry.reduce_grid(3584, 256, [("UNITS", "2")]) == grid_stride(3584, 256,
                                                                          REDUCE_BLOCKS, 2)
    assert geometry.reduce_grid(1 << 30, 256, [("UNITS", "1")])[0] == (REDUCE_BLOCKS, 1, 1)


def test_grid_stride_caps_at_8192_blocks_by_default() -> None:
    """The default cap on a grid-stride grid is 8192 blocks."""
    assert MAX_BLOCKS == 8192
    assert grid_stride(4 * 256 * 8192, 256) == ((8192, 1, 1), (256, 1, 1))
    assert grid_stride(4 * 256 * 8192 + 4, 256)[0] == (8192, 1, 1)


def test_chunk_grid_covers_the_units_up_to_one_wave() -> None:
    """chunk_grid: ceil(n / (4 block units)) blocks, or ceil(n / block) where n % 4 != 0
    (a value a thread), at most one wave."""
    chunk_grid = geometry.chunk_grid
    assert chunk_grid(4 * 128 * 2 * 5, 128, 132, 2, 8) == (5, 1, 1)       # 5 blocks of 1024
    assert chunk_grid(4 * 128 * 2 * 5 + 4, 128, 132, 2, 8) == (6, 1, 1)   # one unit more
    assert chunk_grid(3072, 128, 132, 2, 8) == (3, 1, 1)    # 3 blocks of 1024 exactly
    assert chunk_grid(3075, 128, 132, 2, 8) == (25, 1, 1)   # n % 4 != 0: a value a thread
    assert chunk_grid(5121, 128, 132, 2, 8) == (41, 1, 1)
    assert chunk_grid(3, 128, 132, 2, 8) == (1, 1, 1)
    assert chunk_grid(1 << 30, 128, 132, 2, 8) == (132 * 8, 1, 1)     # one wave at most
    assert chunk_grid(1 << 30, 128, 100, 2, 3) == (300, 1, 1)
    assert chunk_grid(4 * 128 * 2 * 299, 128, 100, 2, 3) == (299, 1, 1)  # under the wave


def test_group_step_grid_steps_by_lanes_and_block() -> None:
    """group_step_grid: warps of 32 / lanes groups a step on vec1, one on vec4, one wave at most."""
    group_step_grid = geometry.group_step_grid
    assert group_step_grid(32, "vec1", 32, 132, 1, 8) == (1, 1, 1)   # one warp, 32 groups a step
    assert group_step_grid(33, "vec1", 32, 132, 1, 8) == (2, 1, 1)
    assert group_step_grid(13, "vec1", 128, 132, 8, 8) == (1, 1, 1)  # 4 warps of 4 groups: 16
    assert group_step_grid(17, "vec1", 128, 132, 8, 8) == (2, 1, 1)
    assert group_step_grid(32, "vec4", 1024, 132, 8, 8) == (1, 1, 1)  # 32 warps, a group each
    assert group_step_grid(33, "vec4", 1024, 132, 8, 8) == (2, 1, 1)
    assert group_step_grid(10**6, "vec4", 1024, 132, 8, 2) == (264, 1, 1)


def test_group_step_grid_past_one_wave_by_warp_steps() -> None:
    """group_step_grid with warp_steps n: blocks enough that no warp takes more than n steps,
    past one wave and whatever blocks_per_sm says; 0 is the one wave."""
    group_step_grid = geometry.group_step_grid
    steps = 18944 * 28 // 16  # 4 warps of 4 groups a block step
    assert group_step_grid(18944 * 28, "vec1", 128, 132, 8, 8, 1) == (steps, 1, 1)
    assert group_step_grid(18944 * 28, "vec1", 128, 132, 8, 8, 3) == (-(-steps // 3), 1, 1)
    assert group_step_grid(18944 * 28, "vec1", 128, 132, 8, 8, 0) == (132 * 8, 1, 1)
    assert group_step_grid(17, "vec1", 128, 132, 8, 8, 1) == (2, 1, 1)  # a partial last step
    assert group_step_grid(17, "vec1", 128, 132, 8, 8, 5) == (1, 1, 1)


def test_general_gemm_plan_splits_k_while_tiles_are_few() -> None:
    """Splits of K double while under 1056 tiles and min(groups, 16) splits, at most groups."""
    plan = geometry.general_gemm_plan
    many = 64 * 128  # K of 64 groups of 128
    # 131 tiles: 8 splits give 1048 < 1056, so 16; 132 tiles: 8 splits give 1056, so 8
    assert plan(64, 64 * 131, many, 128, 1)["grid"] == (131, 1, 16)
    assert plan(64, 64 * 132, many, 128, 1)["grid"] == (132, 1, 8)
    assert plan(64 * 2, 64 * 66, many, 128, 1)["grid"] == (66, 2, 8)
    assert plan(64, 64 * 528, many, 128, 1)["splits"] == 2   # 528 tiles: one doubling
    assert plan(64 * 33, 64 * 32, many, 128, 1)["splits"] == 1   # 1056 tiles: unsplit
    # One tile: at most 16 splits, and never more than the groups
    assert plan(64, 64, many, 128, 1)["splits"] == geometry.GEMM_MAX_SPLITS == 16
    assert plan(64, 64, 1000, 128, 1)["splits"] == 8    # ceil(1000 / 128) = 8 groups
    assert plan(64, 64, 1000, 100, 1)["splits"] == 10   # 10 groups: 16 taken down to 10
    assert plan(64, 64, 256, 128, 1)["splits"] == 2
    assert plan(64, 64, 100, 128, 1)["splits"] == 1     # one group
    for m, n, k, g in [(64, 64, many, 128), (1, 1, 3000, 7), (70, 130, 1024, 128)]:
        p = plan(m, n, k, g, 1)
        assert 1 <= p["splits"] <= min(-(-k // g), geometry.GEMM_MAX_SPLITS)


def test_general_gemm_plan_never_passes_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The splits stop at GEMM_MAX_SPLITS also where the cap is no power of two."""
    monkeypatch.setattr(geometry, "GEMM_MAX_SPLITS", 12)
    assert geometry.general_gemm_plan(64, 64, 64 * 128, 128, 1)["splits"] == 12


def test_general_gemm_plan_grid_workspace_and_shared_memory() -> None:
    """The general plan's 64 x 64 tile grid, counters, split-only workspace and smem bytes."""
    p = geometry.general_gemm_plan(70, 130, 1024, 128, 1)
    assert p == {"kind": "general", "grid": (3, 2, 8), "splits": 8, "counters": 6,
                 "ws": 8 * 70 * 130, "threads": 128, "smem": 3 * (64 + 64) * 80}
    two = geometry.general_gemm_plan(65, 129, 256, 128, 3)
    assert two == {"kind": "general", "grid": (3, 2, 2), "splits": 2, "counters": 6,
                   "ws": 2 * 65 * 129, "threads": 128, "smem": 3 * (3 * 64 + 64) * 80}
    one = geometry.general_gemm_plan(64, 64, 128, 128, 2)
    assert (one["grid"], one["ws"], one["counters"]) == ((1, 1, 1), 1, 1)
    assert one["smem"] == 3 * (2 * 64 + 64) * 80


def test_general_gemm_constants_agree_with_the_kernel_source() -> None:
    """The general path's default tile, warps, stages and row pitch are the kernel's."""
    src = (Path(__file__).resolve().parents[2] / "kernels" / "common" /
           "igemm_small.cuh").read_text()

    def define(name: str) -> int:
        m = re.search(rf"#define {name} (\d+)\b", src)
        assert m, name
        return int(m.group(1))

    bk = re.search(r"constexpr int GEN_BK = (\d+);", src)
    pitch = re.search(r"constexpr int GEN_BKP = GEN_BK \+ (\d+);", src)
    assert bk and pitch
    t = geometry.GENERAL_TILE
    assert (t.bm, t.bn, t.wm, t.wn, t.stages) == tuple(
        define(f"IGG_{x}") for x in ("BM", "BN", "WM", "WN", "STAGES"))
    assert int(bk.group(1)) + int(pitch.group(1)) == geometry.GEMM_ROW_PITCH


def test_the_general_tile_is_the_builds() -> None:
    """A build's -D values give its tile (the kernel's defaults where unset): the grid,
    block and shared memory follow it, so a --define sweep is launched as compiled."""
    tile = geometry.GeneralTile.of_defines({"IGG_BN": "128", "IGG_WN": "4", "PACKED_WIDE": "0"})
    assert tile == geometry.GeneralTile(64, 128, 2, 4, 3) and tile.threads == 256
    assert geometry.GeneralTile.of_defines({}) == geometry.GENERAL_TILE
    p = geometry.general_gemm_plan(1024, 18944, 3584, 128, 1, tile)
    assert p["grid"] == (148, 16, 1) and p["threads"] == 256
    assert p["smem"] == 3 * (64 + 128) * 80 and p["counters"] == 148 * 16


def test_the_general_workspace_holds_every_tile_it_admits() -> None:
    """Sized before a build is known: the most splits (of the largest tile) and the most
    tiles (of the smallest) at the shape; a tile past GEMM_TILE_SIDES is refused."""
    lo, hi = geometry.GEMM_TILE_SIDES
    for m, n, k, g, qp in ((70, 130, 1024, 128, 1), (16, 18944, 3584, 128, 3),
                           (8192, 18944, 3584, 128, 1), (7, 3, 5, 2, 1)):
        ws, counters = geometry.general_gemm_workspace(m, n, k, g, qp)
        for bm in (lo, 64, hi):
            for bn in (lo, 64, hi):
                tile = geometry.GeneralTile(bm, bn)
                assert tile.unfit() is None
                p = geometry.general_gemm_plan(m, n, k, g, qp, tile)
                assert p["ws"] <= ws and p["counters"] <= counters, (m, n, bm, bn)
    assert "256 x 64 tile" in (geometry.GeneralTile(256, 64).unfit() or "")
    assert "64 x 16 tile" in (geometry.GeneralTile(64, 16).unfit() or "")


def test_chunk_grid_past_one_wave_by_warp_steps() -> None:
    """chunk_grid with warp_steps n: blocks enough that no warp takes more than n chunks (of
    32 units of 4 values a lane), past one wave; 0 is the one wave."""
    n = 16384 * 3584
    chunks = n // (256 * 2 * 4)  # a block of 256 lanes, 2 units of 4 values each
    assert geometry.chunk_grid(n, 256, 132, 2, 4, 1) == (chunks, 1, 1)
    assert geometry.chunk_grid(n, 256, 132, 2, 4, 3) == (-(-chunks // 3), 1, 1)
    assert geometry.chunk_grid(n, 256, 132, 2, 4, 0) == (132 * 4, 1, 1)
    assert geometry.chunk_grid(7, 256, 132, 2, 4, 1) == (1, 1, 1)  # n % 4: a value a lane
