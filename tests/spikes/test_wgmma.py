"""The Hopper integer GEMM's shared launch: its shape rule, the split of K, the workspace
and where A's arguments go."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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


def test_the_clustered_kernels_workspace_holds_a_cut_a_cluster_of_the_most_sms() -> None:
    """Stream-K cuts at most one tile a cluster: two pieces of 16 x 128 floats for each
    consumer warp of each CTA, and a ticket each, for MOST_SMS CTAs at any M past 256."""
    for m in (257, 8192):
        assert wgmma.plan(m, 3584, 3584) == {"kind": "wgmma", "splits": 1,
                                             "counters": 256 * 8, "ws": 256 * 8 * 2 * 16 * 128}


@pytest.mark.parametrize(("tiles", "clusters", "gain"), [
    (112, 66, (66 - 46) / 66 / 2),   # M 1024 on 3584 x 3584: 1.70 waves on two
    (896, 66, (66 - 38) / 66 / 14),  # M 8192 on 3584 x 18944
    (592, 66, (66 - 64) / 66 / 9),   # M 1024 on 18944 x 3584: 8.97 waves
    (132, 66, 0.0),                  # whole waves
    (66, 66, 0.0), (40, 66, 0.0),    # one wave or less: nothing to spread
])
def test_the_stream_gain_is_the_last_waves_idle_share(tiles, clusters, gain) -> None:  # type: ignore[no-untyped-def]
    assert wgmma.stream_gain(tiles, clusters) == pytest.approx(gain)


def test_the_last_full_wave_and_the_partial_one_go_stream_k_where_that_gains() -> None:
    fit = (1024 + 3584) * 3584  # M 1024 on 3584 x 3584: 16.5 MB of operands
    assert wgmma.stream_tiles(112, 66, 28, fit) == 112          # all: one full wave + 46
    assert wgmma.stream_tiles(896, 66, 148, fit) == 66 + 38     # 3 %: the last two waves
    assert wgmma.stream_tiles(592, 66, 28, fit) == 0            # 0.3 %: under the 1 % floor
    assert wgmma.stream_tiles(4736, 66, 28, fit) == 0           # 0.3 %
    assert wgmma.stream_tiles(56, 66, 28, fit) == 0             # under a wave
    # each range at least a tile long: sk >= clusters
    for tiles in range(67, 700):
        sk = wgmma.stream_tiles(tiles, 66, 7, fit)
        assert sk == 0 or 66 <= sk <= tiles
    # the walk's 32-bit arithmetic: refused where sk K tiles x clusters would overflow it
    assert wgmma.stream_tiles(112, 66, 2**31 // (112 * 66) + 1, fit) == 0
    assert wgmma.stream_tiles(112, 66, 2**31 // (112 * 66), fit) == 112


def test_stream_k_only_where_the_operands_fit_half_the_l2() -> None:
    """M 1024 on 3584 x 18944 gains 15 % by the count but its 87 MB of operands do not stay
    in L2 (measured slower); M 1024 and 2048 on 3584 x 3584 (16.5 and 20.2 MB) do."""
    assert wgmma.stream_tiles(112, 66, 148, (1024 + 3584) * 18944) == 0
    assert wgmma.stream_tiles(112, 66, 28, (1024 + 3584) * 3584) == 112
    assert wgmma.stream_tiles(224, 66, 28, (2048 + 3584) * 3584) == 66 + 26
    assert wgmma.stream_tiles(448, 66, 28, (4096 + 3584) * 3584) == 0    # 27.5 MB
    edge = wgmma.STREAM_OPERAND_BYTES
    assert wgmma.stream_tiles(112, 66, 28, edge) == 112
    assert wgmma.stream_tiles(112, 66, 28, edge + 1) == 0


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


@pytest.mark.parametrize(("stream_k", "sk"), [(1, 112), (0, 0)])
def test_the_clustered_launch_hands_over_its_stream_k_tiles(stream_k, sk) -> None:  # type: ignore[no-untyped-def]
    """M 1024 on 3584 x 3584 on 132 SMs: 112 pair tiles on 66 pairs, all of them stream-K
    (unless the build says not), with the workspace; the grid is every pair."""
    launch = WgmmaModule("k", smem=1000, sm_count=132, stream_k=stream_k)
    wgmma.enqueue(launch, "k", _BUFS, 1024, 3584, 3584, lambda cn: ("a",), True)
    ((name, grid, _, args, _),) = launch.calls
    assert name == "k" and grid == (132, 1, 1)
    assert args[-3:] == (sk, "ws", "counters")


def test_the_launch_bounds_stream_k_by_the_operands_bytes() -> None:
    """1024 x 3584 x 6144: A and the weights are (1024 + 3584) x 6144 = 28.3 MB, past the
    bound, so whole tiles (the same tiles' count over N instead of K would say 25.7 MB)."""
    launch = WgmmaModule("k", smem=1000, sm_count=132, stream_k=1)
    wgmma.enqueue(launch, "k", _BUFS, 1024, 3584, 6144, lambda cn: ("a",), True)
    ((_, _, _, args, _),) = launch.calls
    assert args[-3] == 0


def test_a_build_past_the_workspace_or_the_clusters_shape_is_refused() -> None:
    with pytest.raises(BadInput, match="split K 8 ways: the workspace holds 4"):
        wgmma.enqueue(WgmmaModule("k", smem=1000, most=8), "k", _BUFS, 16, 256, 512,
                      lambda cn: (), True)
    with pytest.raises(BadInput, match="clusters of 2 along N needs N a multiple of 256"):
        wgmma.enqueue(WgmmaModule("k", smem=1000, cn=2), "k", _BUFS, 16, 384, 512,
                      lambda cn: (), True)


_CXX = shutil.which("g++") or shutil.which("c++")
_KERNELS = Path(__file__).resolve().parents[2] / "kernels" / "common"


@pytest.mark.skipif(_CXX is None, reason="needs a host C++ compiler (g++ or c++) on PATH")
def test_the_device_walk_takes_each_k_tile_once_where_the_launch_asks_for_stream_k(
        tmp_path: Path) -> None:
    """kernels/common/igemm_walk.cuh compiled for the host as it is: for every shape the
    launch's rule (``stream_tiles``) hands it stream-K tiles, and for sk past what the rule
    guarantees (which the walk refuses: whole tiles), each cluster's walk covers each
    (tile, K tile) once and cuts a tile at most once, between neighbouring clusters, the
    two pieces in one slot of their own (tests/spikes/walk_check.cpp)."""
    exe = tmp_path / "walk_check"
    subprocess.run([_CXX, "-std=c++17", "-O2", "-D__device__=", "-D__forceinline__=inline",
                    f"-I{_KERNELS}", str(Path(__file__).with_name("walk_check.cpp")),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    cases = []
    for clusters in (1, 2, 3, 7, 33, 66, 132):
        for k_tiles in (1, 2, 3, 4, 7, 28, 148):
            for tiles in range(1, 3 * clusters + 40):
                cases.append((tiles, clusters, k_tiles,  # the operands' size never cuts
                              wgmma.stream_tiles(tiles, clusters, k_tiles, 0)))
            cases.append((2 * clusters + 1, clusters, k_tiles, max(0, clusters - 1)))  # too few
            cases.append((clusters + 2, clusters, k_tiles, clusters + 3))  # more than the tiles
    assert sum(sk > 0 for *_, sk in cases) > 1000
    res = subprocess.run([str(exe)], input="".join(f"{t} {p} {k} {s}\n" for t, p, k, s in cases),
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout
    checked, cut = (int(x) for x in res.stdout.split()[1::2])
    assert checked == len(cases) and cut > 1000
