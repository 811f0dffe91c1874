"""The fused activation kernels' launch geometry on the CPU: the defaults are the kernels'
own, act_one's cluster rule is the kernel's, and pass 1's blocks follow the ring and a
build's defines."""

from __future__ import annotations

import re

import pytest

from harness.spikes import activation_grids as grids
from tests.plugins.support import ROOT, kernel_define


def test_act_one_cluster_rule_is_the_kernels() -> None:
    """one_geometry takes the cluster exactly where the kernel's ONE_CL compiles one: the
    macro's expression, evaluated for every BLOCK, against the geometry of a 4-value row
    (a cluster gives 32 threads a block there, the one-block kernel CACHE_VEC x BLOCK)."""
    src = (ROOT / "kernels" / "activation_fused.cu").read_text()
    m = re.search(r"#define ONE_CL \((.*)\)\n", src)
    assert m, "ONE_CL not found"
    expr = m.group(1).replace("&&", " and ").replace("||", " or ")
    # act_one and act_rows, both on the cluster
    assert src.count("__cluster_dims__(ONE_CTAS, 1, 1) __launch_bounds__(1024)") == 2
    assert "#define ONE_CTAS (BLOCK / 32)" in src
    for one_cluster in ("0", "2"):
        for block in range(1, 1025):
            cl = bool(eval(expr, {}, {"ONE_CLUSTER": int(one_cluster), "BLOCK": block}))
            got = grids.one_geometry({"CACHE_VEC": "4", "ONE_CLUSTER": one_cluster,
                                      "ONE_ROWS": "32"}, block, 4)
            assert got == ((block // 32, 32, 1) if cl else (1, min(4 * block, 1024), 1)), block


def test_cache_default_agrees_with_the_kernel_source() -> None:
    """The defaults (CACHE_VEC, SMALL_B, ...) are the kernels' own (the launch counts
    act_one's rows and act_small's batches with them; the kernels size their caches and
    shared arrays with the defines)."""
    assert kernel_define("kernels/common/threshold.cuh", "CACHE_VEC") == grids.CACHE_VEC
    assert kernel_define("kernels/activation_fused.cu", "SMALL_B") == grids.SMALL_B
    assert kernel_define("kernels/activation_fused.cu", "ONE_ROWS") == grids.ONE_ROWS
    assert kernel_define("kernels/activation_fused.cu", "ONE_MAX_SLOTS") == grids.ONE_MAX_SLOTS
    assert kernel_define("kernels/activation_fused.cu", "ONE_CLUSTER") == grids.ONE_CLUSTER
    assert kernel_define("kernels/activation_fused.cu", "GRID_ROWS") == grids.GRID_ROWS
    assert kernel_define("kernels/activation_fused.cu", "GRID_MINB") == grids.GRID_MINB
    assert kernel_define("kernels/activation_fused.cu", "STATS_STAGES") == grids.STATS_STAGES


@pytest.mark.parametrize(("cluster", "batch", "geometry"), [
    ("2", 2, (8, 128, 2)), ("2", 8, (8, 128, 8)), ("2", 9, None),
    ("0", 1, (1, 1024, 1)), ("0", 2, None),  # the one-block build holds one row
])
def test_act_one_takes_rows_on_the_cluster_only(cluster, batch, geometry) -> None:  # type: ignore[no-untyped-def]
    """The cluster build takes several rows (a warp a row's turn, 32 warps a block at most);
    the one-block build, whose kernel holds one row, takes batch 1 only."""
    got = grids.one_geometry({"CACHE_VEC": "4", "ONE_CLUSTER": cluster, "ONE_ROWS": "32"},
                             256, 3584, batch)
    assert got == geometry


def test_the_default_ring_blocks_are_fewer_than_stats_blocks() -> None:
    """The rule below is only worth its name while STATS_RING_BLOCKS < STATS_BLOCKS."""
    assert 1 <= grids.STATS_RING_BLOCKS < grids.STATS_BLOCKS


@pytest.mark.parametrize(("batch", "ring", "blocks"), [
    (1, True, 1), (grids.STATS_RING_BLOCKS, True, grids.STATS_RING_BLOCKS),
    (grids.STATS_RING_BLOCKS + 1, True, grids.STATS_RING_BLOCKS),
    (8192, True, grids.STATS_RING_BLOCKS),
    (2 * grids.STATS_BLOCKS - 1, True, grids.STATS_RING_BLOCKS),
    (2 * grids.STATS_BLOCKS, True, grids.STATS_BLOCKS), (65536, True, grids.STATS_BLOCKS),
    (300, False, 300), (8192, False, 8192), (8200, False, grids.STATS_BLOCKS)])
def test_pass_1_gives_ring_blocks_several_rows(batch, ring, blocks) -> None:  # type: ignore[no-untyped-def]
    """Through the ring, below twice STATS_BLOCKS rows, pass 1 takes STATS_RING_BLOCKS blocks
    (a block's next rows in flight while it quantises one); from there, and on rows past the
    ring, STATS_BLOCKS; never more blocks than rows."""
    d = {k: str(v) for k, v in grids.TUNING}
    assert grids.stats_blocks(d, batch, ring=ring) == blocks


def test_pass_1_blocks_are_read_back_from_the_build() -> None:
    """A -D build's block counts are the ones launched (``bench --define`` tunes them)."""
    d = {k: str(v) for k, v in grids.TUNING}
    assert grids.stats_blocks({**d, "STATS_RING_BLOCKS": "512"}, 4096, ring=True) == 512
    assert grids.stats_blocks({**d, "STATS_BLOCKS": "1024"}, 4096, ring=True) == 1024
    assert grids.stats_blocks({**d, "STATS_BLOCKS": "1024"}, 1500, ring=True) == 256
    # Never more than STATS_BLOCKS, whatever a build gives STATS_RING_BLOCKS.
    assert grids.stats_blocks({**d, "STATS_RING_BLOCKS": "9000"}, 8500, ring=True) == 8192
