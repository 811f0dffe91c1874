"""The Hopper integer GEMM's shared launch: its shape rule, the split of K, the workspace
and where A's arguments go."""

from __future__ import annotations

import pytest

from harness.api import BadInput
from harness.spikes import wgmma
from tests.plugins.support import WgmmaModule


@pytest.mark.parametrize(("n", "k", "g", "ok"), [(18944, 3584, 128, True),
                                                 (18944, 3584, 64, False),
                                                 (18940, 3584, 128, False),
                                                 (256, 1040, 128, False)])
def test_the_shape_rule(n, k, g, ok) -> None:  # type: ignore[no-untyped-def]
    assert wgmma.fits(n, k, g) is ok


def test_the_split_leaves_each_unit_an_sm_and_each_split_four_k_tiles() -> None:
    assert wgmma.splits(16, 3584, 3584, 1, 132) == 4       # 28 tiles: 4 ways
    assert wgmma.splits(16, 3584, 1024, 1, 132) == 2       # 8 K tiles: 2 ways of 4
    assert wgmma.splits(16, 18944, 3584, 1, 132) == 1      # 148 tiles: none
    assert wgmma.splits(256, 3584, 3584, 1, 132) == 2      # 56 tiles
    assert wgmma.splits(16, 3584, 3584, 1, 132, most=2) == 2


def test_the_workspace_holds_the_most_splits_any_device_takes() -> None:
    pl = wgmma.plan(16, 3584, 3584)
    assert pl["splits"] == 4 and pl["ws"] == 4 * 16 * 3584 and pl["counters"] == 28 * 8
    assert wgmma.plan(257, 3584, 3584) == {"kind": "wgmma", "splits": 1, "counters": 1,
                                           "ws": 1}


_BUFS = {b: b for b in ("w_q", "scale", "vth", "bias", "out", "ws", "counters")}


@pytest.mark.parametrize("a_first", [True, False])
def test_a_goes_before_or_after_the_maps(a_first) -> None:  # type: ignore[no-untyped-def]
    launch = WgmmaModule("k", smem=1000)
    wgmma.enqueue(launch, "k", _BUFS, 1000, 256, 512, lambda cn: ("a0", "a1"), a_first)
    ((name, grid, block, args, shared),) = launch.calls
    assert (name, block, shared) == ("k", (384, 1, 1), 1000)
    assert grid == (16, 1, 1)  # 8 M tiles in 4 pairs x 2 N tiles: 8 pair tiles, 2 CTAs each
    head = ("a0", "a1", "map:w_q", "map:out") if a_first else ("map:w_q", "map:out", "a0", "a1")
    assert args[:4] == head
    assert args[4:8] == ("scale", "vth", "bias", "out")
    # B's box is the pair's half of a tile; out's the module's 64 x 32
    assert launch.maps == [(256, 512, 64, 128, 128), (1000, 256, 64, 32, 128)]


def test_a_build_past_the_workspace_or_the_clusters_shape_is_refused() -> None:
    with pytest.raises(BadInput, match="split K 8 ways: the workspace holds 4"):
        wgmma.enqueue(WgmmaModule("k", smem=1000, most=8), "k", _BUFS, 16, 256, 512,
                      lambda cn: (), True)
    with pytest.raises(BadInput, match="clusters of 2 along N needs N a multiple of 256"):
        wgmma.enqueue(WgmmaModule("k", smem=1000, cn=2), "k", _BUFS, 16, 384, 512,
                      lambda cn: (), True)
