"""The integer GEMM's plugin on the CPU: which kernel a shape runs on, the split-K plan and
its workspace, bad input, and the reference against SPEC's float formula."""

from __future__ import annotations

import numpy as np
import pytest

from harness.api import BadInput
from harness.contract.launcher import RecordingLauncher
from harness.spikes import gemm_paths, geometry
from tests.plugins.support import WgmmaModule, kernel_define


@pytest.fixture(scope="module")
def st(reg):  # type: ignore[no-untyped-def]
    return reg.get("int_gemm")


class _Module(RecordingLauncher):
    """The module's stream configuration: on or off (IGS_STREAM), 160 threads, the shared
    memory of stream1 and of stream, ``groups`` groups a unit (IGT_GROUPS)."""

    def __init__(self, stream: int = 1, groups: int = 2, sm_count: int = 132) -> None:
        super().__init__(256, sm_count)
        self.stream, self.groups = stream, groups

    def constant(self, name: str, count: int = 1) -> np.ndarray:
        if name == "int_gemm_stream_config":
            return np.array([self.stream, 160, 150000, 170000, self.groups][:count],
                            dtype=np.int32)
        return super().constant(name, count)


_BUFS = ("q", "w_q", "scale", "vth", "bias", "out", "ws", "counters")


@pytest.mark.parametrize(("point", "kind"), [
    ({"batch": 1, "out_f": 18944, "in_f": 3584}, "stream1"),
    ({"batch": 8, "out_f": 3584, "in_f": 3584}, "stream1"),
    ({"batch": 9, "out_f": 3584, "in_f": 3584}, "stream"),
    ({"batch": 16, "out_f": 3584, "in_f": 18944}, "stream"),
    ({"batch": 3, "out_f": 100, "in_f": 1040}, "stream1"),
    ({"batch": 12, "out_f": 3584, "in_f": 3584, "group_size": 256}, "small"),
    ({"batch": 4, "out_f": 3584, "in_f": 3584, "group_size": 384}, "small1"),
    ({"batch": 17, "out_f": 3584, "in_f": 3584}, "wgmma"),
    ({"batch": 256, "out_f": 18944, "in_f": 3584}, "wgmma"),
    ({"batch": 257, "out_f": 18944, "in_f": 3584}, "wgmma"),
    ({"batch": 8192, "out_f": 18944, "in_f": 3584}, "wgmma"),
    ({"batch": 64, "out_f": 3584, "in_f": 3584, "group_size": 64}, "general"),
    ({"batch": 64, "out_f": 3000, "in_f": 3584}, "general"),
    ({"batch": 3, "out_f": 64, "in_f": 100}, "general"),
])
def test_the_shape_picks_the_kernel(st, point, kind) -> None:  # type: ignore[no-untyped-def]
    """The path by shape; on the wgmma path, the kernel without the M cluster up to M = 256
    (one or two M blocks), the clustered one past it."""
    p = st.point(st.variant("int8"), **point)
    assert gemm_paths.path(p) == kind
    launch = _Module()
    st.enqueue(launch, {n: 0 for n in _BUFS}, p, st.variant("int8"))
    single = kind == "wgmma" and point["batch"] <= 256
    assert launch.names == [f"int_gemm_{kind}" + ("_single" if single else "")]
    # Only the wgmma kernels wait on the device for the kernel before them, so only they
    # may be launched under the activation stage's tail.
    assert launch.waited == [kind == "wgmma"]


def test_the_wide_variant_never_takes_the_int8_tensor_map_path(st) -> None:  # type: ignore[no-untyped-def]
    p = st.point(st.variant("wide"), batch=8192, out_f=18944, in_f=3584)
    assert p["q_type"] == "int32" and gemm_paths.path(p) == "general"
    small = st.point(st.variant("wide"), batch=4, out_f=18944, in_f=3584)
    assert gemm_paths.path(small) == "small1"


@pytest.mark.parametrize(("batch", "kind", "mt"), [(1, "stream1", 1), (8, "stream1", 1),
                                                   (9, "stream", 2), (16, "stream", 2)])
def test_a_stream_launch_is_one_cta_an_sm_with_its_own_q_tile(st, batch, kind, mt) -> None:  # type: ignore[no-untyped-def]
    """One CTA an SM, never more than the units (of the module's groups: a CTA without one
    would stall the kernel) nor than the workspace holds; the module's threads and shared
    memory; q read in tiles of 8 or 16 rows: the kernel's MMA takes 8 mt rows."""
    maps: list[tuple[int, ...]] = []

    class Maps(_Module):
        def tensor_map(self, buf, dtype, rows, cols, box_rows, box_cols, swizzle=128):  # type: ignore[no-untyped-def]
            maps.append((rows, cols, box_rows, box_cols, swizzle))
            return super().tensor_map(buf, dtype, rows, cols, box_rows, box_cols, swizzle)

    # (N, K, groups a unit, SMs) -> CTAs: 296 row tiles of 14 units; 2 tiles of one unit of
    # two groups, or of two of one; 2 x 2 units of two groups (the last one's second group
    # past K); 56 x 7 units on a device of more SMs than the workspace holds.
    for n, k, groups, sms, ctas in ((18944, 3584, 2, 132, 132), (128, 256, 2, 132, 2),
                                    (128, 256, 1, 132, 4), (128, 384, 2, 132, 4),
                                    (128, 384, 4, 132, 2), (3584, 3584, 4, 300, 256)):
        maps.clear()
        p = st.point(st.variant("int8"), batch=batch, out_f=n, in_f=k)
        launch = Maps(groups=groups, sm_count=sms)
        st.enqueue(launch, {b: 0 for b in _BUFS}, p, st.variant("int8"))
        name, grid, block, _, shared = launch.calls[0]
        assert (name, grid, block) == (f"int_gemm_{kind}", (ctas, 1, 1), (160, 1, 1)), (n, k)
        assert shared == (150000, 170000)[mt - 1]
        assert maps == [(n, k, 64, 128, 128), (batch, k, 8 * mt, 128, 128)]


def test_the_stream_workspace_holds_a_partial_a_cta(st) -> None:  # type: ignore[no-untyped-def]
    """A CTA leaves a partial where its run starts inside a tile: 256 slots of 64 rows x
    8 mt columns, and a count a row tile; enough for the register-fed kernels too."""
    for batch, n, k, mt in ((1, 18944, 3584, 1), (16, 18944, 3584, 2), (16, 3584, 18944, 2)):
        p = st.point(st.variant("int8"), batch=batch, out_f=n, in_f=k)
        ws = st.workspace(p)
        small = gemm_paths.plan(p, stream=False)
        assert ws["ws"][0][0] == max(256 * 64 * 8 * mt,
                                     small["splits"] * batch * n * (small["splits"] > 1))
        assert ws["counters"][0][0] == max(n // 64, small["counters"])
    # On 3584 x 18944 the register-fed kernel's split-K partials are the larger need.
    assert ws["ws"][0][0] == small["splits"] * 16 * 3584 > 256 * 64 * 16


def test_the_module_can_keep_small_m_on_the_register_fed_kernels(st) -> None:  # type: ignore[no-untyped-def]
    """IGS_STREAM=0 (the module's choice, read at launch) runs the same shapes on the
    register-fed kernels, so the two are timed side by side by ``bench --define``."""
    for batch, kind in ((3, "small1"), (12, "small")):
        p = st.point(st.variant("int8"), batch=batch, out_f=18944, in_f=3584)
        launch = _Module(stream=0)
        st.enqueue(launch, {b: 0 for b in _BUFS}, p, st.variant("int8"))
        assert launch.names == [f"int_gemm_{kind}"]


def test_split_k_workspace_holds_every_partial(st) -> None:  # type: ignore[no-untyped-def]
    for point in ({"batch": 16, "out_f": 3584, "in_f": 18944, "group_size": 256},
                  {"batch": 20, "out_f": 64, "in_f": 4096, "group_size": 64}):
        p = st.point(st.variant("int8"), **point)
        pl = gemm_paths.plan(p)
        assert pl["splits"] > 1
        ws = st.workspace(p)
        # the general path's (the second point's) for any tile a build may have: at least
        assert ws["ws"][0][0] >= pl["splits"] * p["batch"] * p["out_f"]
        assert ws["counters"][0][0] >= pl["counters"] >= pl["grid"][0]
        assert pl["splits"] == pl["grid"][1 if pl["kind"].startswith("small") else 2]


def test_q_beyond_int8_is_bad_input_for_the_int8_variant(st) -> None:  # type: ignore[no-untyped-def]
    p = st.point(st.variant("int8"), batch=16, out_f=8, in_f=3584)
    ins = st.make_inputs(np.random.default_rng(0), "llm", p)
    assert ins["q"].dtype == np.int32
    assert "beyond int8: the wide variant takes it" in st.check_inputs(ins, p)
    ok = st.make_inputs(np.random.default_rng(0), "normal", p)
    assert ok["q"].dtype == np.int8 and st.check_inputs(ok, p) is None
    assert not st.variant("int8").accepts("llm") and st.variant("wide").accepts("llm")


def test_q_of_minus_128_is_int8(st, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """int8 holds [-128, 127] (spec.fits_int8, as the fused stage decides): a q reaching
    -128 goes to the int8 variant, one reaching 128 does not."""
    from harness.spikes import inputs

    p = st.point(st.variant("int8"), batch=2, out_f=4, in_f=8)
    real = inputs.activation_chain
    for edge, kept in ((-128, np.int8), (128, np.int32)):
        def chain(*a, edge=edge, **k):  # type: ignore[no-untyped-def]
            x, vth, q = real(*a, **k)
            q = q.astype(np.int32)
            q[0, 0] = edge
            return x, vth, q

        monkeypatch.setattr(inputs, "activation_chain", chain)
        ins = st.make_inputs(np.random.default_rng(0), "normal", p)
        assert ins["q"].dtype == kept and int(ins["q"][0, 0]) == edge
        assert (st.check_inputs(ins, p) is None) == (kept == np.int8)


def test_group_sums_that_could_leave_int32_are_bad_input(st) -> None:  # type: ignore[no-untyped-def]
    p = st.point(st.variant("wide"), batch=2, out_f=4, in_f=256)
    ins = st.make_inputs(np.random.default_rng(1), "normal", p)
    ins["q"][0, 0] = 2**18  # 2^18 * 127 * 128 > 2^31
    assert "could leave int32" in st.check_inputs(ins, p)


def test_q_past_the_byte_planes_is_bad_input_where_group_sums_fit(st) -> None:  # type: ignore[no-untyped-def]
    """Groups of 2: group sums of |q| = 2^23 fit int32, but the wide path's three byte
    planes do not hold it; the message names that bound, not int32."""
    p = st.point(st.variant("wide"), batch=2, out_f=4, in_f=256, group_size=2)
    ins = st.make_inputs(np.random.default_rng(1), "normal", p)
    ins["q"][0, 0] = 2**23
    why = st.check_inputs(ins, p)
    assert "three byte planes" in why and "int32" not in why


def test_reference_is_specs_formula(st) -> None:  # type: ignore[no-untyped-def]
    """vth * sum_g scale * (q . w_q over the group) + bias, against x_rec @ dequant(w)^T."""
    p = st.point(st.variant("wide"), batch=5, out_f=7, in_f=300, group_size=7, k=16.0)
    ins = st.make_inputs(np.random.default_rng(2), "llm", p)
    got = st.expected(ins, p, st.variant("wide"))["out"]
    g = p["group_size"]
    s = np.repeat(ins["scale"].astype(np.float64), g, axis=1)[:, :300]
    x = ins["q"].astype(np.float64) * ins["vth"].astype(np.float64)[:, None]
    want = x @ (ins["w_q"] * s).T + ins["bias"]
    assert np.allclose(got, want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize(("point", "why"), [
    ({"batch": 17, "out_f": 64, "in_f": 256}, None),
    ({"batch": 16, "out_f": 64, "in_f": 256}, "M > 16"),
    ({"batch": 32, "out_f": 60, "in_f": 256}, "multiples of 8"),
    ({"batch": 32, "out_f": 64, "in_f": 300}, "multiples of 8"),
])
def test_int_mm_keeps_to_its_shape_rules(st, point, why) -> None:  # type: ignore[no-untyped-def]
    skip = st.peers["int_mm"].skip
    got = skip(st.point(st.variant("int8"), **point))
    assert got is None if why is None else why in got
    assert "takes int8 q, not int32" in skip(st.point(st.variant("wide"), **point))


def test_the_torch_peers_compute_what_they_say(st) -> None:  # type: ignore[no-untyped-def]
    """int_mm is q @ w_q^T exactly (no scales: not judged); linear_bf16 is near the
    reference but not within SPEC's 1e-6 (not judged); linear_fp32 is judged."""
    pytest.importorskip("torch", reason="the peers need PyTorch")
    from harness.backends.torch import TorchRunner

    assert st.peers["linear_fp32"].judged
    assert not st.peers["linear_bf16"].judged and not st.peers["int_mm"].judged
    v = st.variant("int8")
    p = st.point(v, batch=24, out_f=32, in_f=256)
    ins = st.make_inputs(np.random.default_rng(3), "normal", p)
    want = st.expected(ins, p, v)["out"]
    got = {n: TorchRunner(n, named=list(st.peers)).run(st, v, ins, p).outputs["out"]
           for n in st.peers}
    assert got["int_mm"].dtype == np.int32
    assert np.array_equal(got["int_mm"], ins["q"].astype(np.int64) @ ins["w_q"].T.astype(np.int64))
    rel = {n: np.linalg.norm(got[n] - want) / np.linalg.norm(want)
           for n in ("linear_fp32", "linear_bf16")}
    assert rel["linear_fp32"] < 1e-6 < rel["linear_bf16"] < 1e-1


def test_the_small_kernels_launch_with_their_own_warps(st) -> None:  # type: ignore[no-untyped-def]
    """Each small kernel's block is its compiled warp count (IGS1_WARPS, IGS_WARPS): a block
    of the other's size would leave weight rows unread."""
    for batch, kind, threads in ((3, "small1", 128), (12, "small", 256)):
        p = st.point(st.variant("int8"), batch=batch, out_f=18944, in_f=3584)
        launch = _Module(stream=0)
        st.enqueue(launch, {n: 0 for n in ("q", "w_q", "scale", "vth", "bias", "out", "ws",
                                           "counters")}, p, st.variant("int8"))
        assert launch.names == [f"int_gemm_{kind}"]
        assert launch.calls[0][2] == (threads, 1, 1)
        assert launch.calls[0][1][0] == -(-18944 // (threads // 32 * 16))


def _clustered(fits: int, cn: int = 2, most: int = 4) -> WgmmaModule:
    """The module's 2 x 2 cluster configuration (``cn`` CTAs along N, K split at most
    ``most`` ways), and a device that runs ``fits`` clusters."""
    return WgmmaModule("int_gemm_wgmma", cn=cn, most=most, by_sms=0, fits=fits)


@pytest.mark.parametrize(("batch", "fits", "ctas"), [(8192, 32, 128), (8192, 33, 132),
                                                     (257, 80, 4 * 80), (257, 200, 4 * 148)])
def test_the_persistent_grid_is_the_clusters_that_run_at_once(st, batch, fits, ctas) -> None:  # type: ignore[no-untyped-def]
    """A 2 x 2 cluster per tile group: the grid is never more clusters than the driver says
    run at once (a later one would run its tiles alone), nor more than there are cluster
    tiles; each CTA's TMA box is its share of the tiles it multicasts, and out is stored in
    64 x 32 fp32 boxes."""
    p = st.point(st.variant("int8"), batch=batch, out_f=18944, in_f=3584)
    launch = _clustered(fits)
    st.enqueue(launch, {n: 0 for n in _BUFS}, p, st.variant("int8"))
    (name, grid, block, args, shared), = launch.calls
    assert (name, block, shared) == ("int_gemm_wgmma", (384, 1, 1), 200_000)
    assert len(args) == 11  # no split of K, no workspace
    assert launch.asked == [("int_gemm_wgmma", 4, 384, 200_000)]
    assert grid == (ctas, 1, 1) and grid[0] % 4 == 0
    assert launch.maps == [(batch, 3584, 64, 128, 128), (18944, 3584, 64, 128, 128),
                           (batch, 18944, 64, 32, 128)]


@pytest.mark.parametrize(("batch", "fits", "ctas"), [(17, 80, 148), (128, 80, 148),
                                                     (256, 100, 200), (256, 60, 120)])
def test_one_or_two_m_blocks_run_without_the_cluster_along_m(st, batch, fits, ctas) -> None:  # type: ignore[no-untyped-def]
    """Up to M = 256 the launch is int_gemm_wgmma_single: its clusters are the module's
    cluster along N alone (here 2), so each CTA loads whole w_q tiles (a 128-row box) and
    its share of q's along N; the grid is the clusters of two that run at once, or the
    tiles, whichever is fewer."""
    p = st.point(st.variant("int8"), batch=batch, out_f=18944, in_f=3584)
    launch = _clustered(fits)
    st.enqueue(launch, {n: n for n in _BUFS}, p, st.variant("int8"))
    (name, grid, _, args, _), = launch.calls
    assert name == "int_gemm_wgmma_single"
    assert args[11:] == (1, "ws", "counters")  # 74 or 148 tiles over 66 pairs: no split
    assert launch.asked == [("int_gemm_wgmma_single", 2, 384, 200_000)]
    assert grid == (ctas, 1, 1)
    assert launch.maps[:2] == [(batch, 3584, 64, 128, 128), (18944, 3584, 128, 128, 128)]


@pytest.mark.parametrize(("batch", "out_f", "in_f", "splits"), [
    (64, 3584, 3584, 4),     # 28 tiles on 132 SMs: four ways, 7 K tiles each
    (128, 3584, 18944, 4),   # 28 tiles, 148 K tiles: four ways (the most)
    (256, 3584, 3584, 2),    # 56 tiles: two ways
    (64, 3584, 1024, 2),     # 8 K tiles: two ways of at least four
    (64, 3584, 512, 1),      # 4 K tiles: no split
    (128, 18944, 3584, 1),   # 148 tiles: more than the SMs
])
def test_the_single_kernel_splits_k_where_its_tiles_are_few(st, batch, out_f, in_f,
                                                            splits) -> None:  # type: ignore[no-untyped-def]
    """Without clusters along N, K is split as many ways as leave each unit an SM (at most
    four, each at least four K tiles); the grid is the units, and the workspace holds
    the splits' partial sums and a ticket for each of a tile's eight consumer warps."""
    p = st.point(st.variant("int8"), batch=batch, out_f=out_f, in_f=in_f)
    launch = _clustered(fits=132, cn=1)
    st.enqueue(launch, {n: n for n in _BUFS}, p, st.variant("int8"))
    (name, grid, _, args, _), = launch.calls
    tiles = -(-batch // 128) * (out_f // 128)
    assert name == "int_gemm_wgmma_single" and args[11:] == (splits, "ws", "counters")
    assert grid == (min(132, tiles * splits), 1, 1)
    ws = st.workspace(p)
    assert ws["ws"][0][0] >= (splits * batch * out_f if splits > 1 else 1)
    assert ws["counters"][0][0] >= tiles * 8


def test_the_splits_follow_the_clusters_that_run_at_once(st) -> None:  # type: ignore[no-untyped-def]
    """Where the occupancy query answers fewer clusters than the SMs, K is split for those:
    66 at once over 28 tiles, two ways (not four, which would run units one after another)."""
    p = st.point(st.variant("int8"), batch=64, out_f=3584, in_f=3584)
    launch = _clustered(fits=66, cn=1)
    st.enqueue(launch, {n: n for n in _BUFS}, p, st.variant("int8"))
    (_, grid, _, args, _), = launch.calls
    assert args[11] == 2 and grid == (56, 1, 1)


def test_a_build_that_splits_more_than_the_workspace_holds_is_refused(st) -> None:  # type: ignore[no-untyped-def]
    p = st.point(st.variant("int8"), batch=64, out_f=3584, in_f=3584)
    with pytest.raises(BadInput, match="split K 8 ways: the workspace holds 4"):
        st.enqueue(_clustered(fits=132, cn=1, most=8), {n: n for n in _BUFS}, p,
                   st.variant("int8"))
    # The clustered kernel never splits: such a build still runs it past M = 256.
    big = st.point(st.variant("int8"), batch=512, out_f=3584, in_f=3584)
    launch = _clustered(fits=132, cn=1, most=8)
    st.enqueue(launch, {n: n for n in _BUFS}, big, st.variant("int8"))
    assert launch.names == ["int_gemm_wgmma"]


def test_the_exact_path_is_the_guarded_general_kernel_at_every_shape(st) -> None:  # type: ignore[no-untyped-def]
    """Given the activation stage's stats, a wide launch is int_gemm_general_unfit: stats
    first, then the general kernel's arguments on its own plan, whatever path the shape
    would take, over a persistent grid of two blocks an SM or one a tile, whichever is
    fewer; and the wide workspace holds that plan's partials."""
    wide = st.variant("wide")
    for point, blocks in (({"batch": 1, "out_f": 18944, "in_f": 3584}, 264),  # stream1, 1184 tiles
                          ({"batch": 8192, "out_f": 3584, "in_f": 3584}, 264),  # wgmma
                          ({"batch": 40, "out_f": 256, "in_f": 3584}, 64),  # 4 x 1 x 16 tiles
                          ({"batch": 7, "out_f": 3, "in_f": 5, "group_size": 2}, 3)):
        p = st.point(wide, **point)
        pl = gemm_paths.plan(p, kind="general")
        assert blocks == min(264, pl["grid"][0] * pl["grid"][1] * pl["grid"][2])
        launch = _Module()
        st.enqueue(launch, {**{b: b for b in _BUFS}, "stats": "stats"}, p, wide)
        ((name, grid, block, args, shared),) = launch.calls
        assert (name, grid, block, shared) == ("int_gemm_general_unfit", (blocks, 1, 1),
                                               (128, 1, 1), pl["smem"])
        assert args[:6] == ("stats", "q", "w_q", "scale", "vth", "bias")
        assert [int(a) for a in args[6:11]] == [p["batch"], p["out_f"], p["in_f"],
                                                p["group_size"], pl["splits"]]
        assert args[11:] == ("ws", "counters", "out")
        ws = st.workspace(p)
        assert ws["ws"][0][0] >= pl["ws"] and ws["counters"][0][0] >= pl["counters"]
    # At M = 16 on 18944 x 3584 the general plan splits K where the small one does not: the
    # wide workspace is sized by it (for any general tile a build may have), the int8 one
    # (which never takes that plan there) is not.
    p = st.point(wide, batch=16, out_f=18944, in_f=3584)
    assert gemm_paths.plan(p, kind="general")["splits"] > 1 == gemm_paths.plan(p)["splits"]
    assert st.workspace(p)["ws"][0][0] == geometry.general_gemm_workspace(16, 18944, 3584, 128,
                                                                          3)[0]
    assert st.workspace(p)["ws"][0][0] >= gemm_paths.plan(p, kind="general")["ws"]
    p8 = st.point(st.variant("int8"), batch=16, out_f=18944, in_f=3584)
    assert st.workspace(p8)["ws"][0][0] < gemm_paths.plan(p8, kind="general")["ws"]


def _stream_units(n: int, k: int, sms: int) -> tuple[int, int, int]:
    """The stream kernel's partition at the kernel's default IGT_GROUPS on ``sms`` SMs:
    units a tile, units in all, and CTAs (common/igemm_stream.cuh)."""
    groups = kernel_define("kernels/int_gemm.cu", "IGT_GROUPS")
    ng = -(-k // 128)  # groups of 128 (scale columns)
    nu = -(-ng // groups)  # units a tile
    units = -(-n // 64) * nu
    return nu, units, min(sms, gemm_paths.STREAM_MAX_CTAS, units)


def _heads(m: int, n: int, k: int, sms: int) -> tuple[int, int]:
    """The stream kernel's shared-tile heads at this shape on ``sms`` SMs: how many take the
    early read, how many wait after their last unit. A twin of common/igemm_stream.cuh's
    partition (stream_first, stream_owner) and its IGT_HEAD_EARLY condition, at the
    kernel's default IGT_GROUPS and IGT_HEAD_MARGIN."""
    margin = kernel_define("kernels/common/igemm_stream.cuh", "IGT_HEAD_MARGIN")
    nu, units, ctas = _stream_units(n, k, sms)

    def first(p: int) -> int:
        return p * units // ctas

    def owner(u: int) -> int:
        return ((u + 1) * ctas + units - 1) // units - 1

    early = wait = 0
    for p in range(ctas):
        u0, u1 = first(p), first(p + 1)
        t = (u1 - 1) // nu  # its last tile: it is that tile's head where it holds the
        if u1 % nu == 0 or u0 > t * nu:  # tile's first unit and stops inside it
            continue
        hi = owner((t + 1) * nu - 1)
        if (hi == p + 1 and first(hi + 1) > (t + 1) * nu
                and t * nu - u0 >= (t + 1) * nu - first(hi) + margin):
            early += 1
        else:
            wait += 1
    return early, wait


def test_a_validation_case_takes_both_ways_of_a_head_on_the_h200(st) -> None:  # type: ignore[no-untyped-def]
    # 132 SMs: the early read and the wait after the last unit both occur in one case.
    both = [c for c in st.cases if c["batch"] <= 16 and all(_heads(c["batch"], c["out_f"],
                                                                   c["in_f"], 132))]
    assert both, "no stream case reaches both the early read and the wait on 132 SMs"
    # And the shape it is for takes the early read at every shared tile.
    early, wait = _heads(16, 18944, 3584, 132)
    assert early > 0 and wait == 0
    assert _heads(1, 3584, 3584, 132)[0] == 0  # tiles between heads and tails: never early


def test_a_sanitize_shape_wraps_each_tma_ring(st) -> None:  # type: ignore[no-untyped-def]
    """compute-sanitizer sees each TMA kernel refill a stage of its ring (a stage freed by
    the consumers and written again), on 132 SMs at the kernels' defaults. On shapes whose
    ring never wraps the release a refill waits on is never exercised: racecheck found the
    consumers' release of the scales only once a shape wrapped (kernels/NOTES.md)."""
    def cdiv(a: int, b: int) -> int:
        return -(-a // b)

    sms, src, body = 132, "kernels/int_gemm.cu", "kernels/common/igemm_wgmma.cuh"
    groups = kernel_define(src, "IGT_GROUPS")
    stream_stages = 16 // groups  # IGT_STAGES' default, (16 / IGT_GROUPS)
    wg_stages = kernel_define(body, "IG_STAGES")  # the first: the TMA-store build's
    cm, cn = kernel_define(body, "IG_CLUSTER_M"), kernel_define(body, "IG_CLUSTER_N")
    wrapped = set()
    for shape in st.sanitize_shapes:
        p = st.point(st.variant("int8"), **shape)
        m, n, k = p["batch"], p["out_f"], p["in_f"]
        kind = gemm_paths.path(p)
        if kind in ("stream1", "stream"):
            _, units, ctas = _stream_units(n, k, sms)
            if cdiv(units, ctas) > stream_stages:  # the longest run outlasts the ring
                wrapped.add("stream")
        elif kind == "wgmma":
            tiles = cdiv(cdiv(m, 128), cm) * (n // (128 * cn))
            if (k // 128) * cdiv(tiles, sms // (cm * cn)) > wg_stages:
                wrapped.add("wgmma")
    assert wrapped == {"stream", "wgmma"}


def test_a_general_tile_build_is_launched_as_compiled(st) -> None:  # type: ignore[no-untyped-def]
    """A --define build of the general path's tile (64 x 128 on 2 x 4 warps) takes its own
    grid, block and shared memory, on the workspace sized before it was built; a tile the
    workspace cannot hold is refused in one line, not launched."""
    v = st.variant("int8").tuned({"IGG_BN": "128", "IGG_WN": "4"})
    p = st.point(v, batch=20, out_f=300, in_f=4096, group_size=64)
    tile = geometry.GeneralTile(64, 128, 2, 4, 3)
    pl = gemm_paths.plan(p, tile=tile)
    assert pl["kind"] == "general" and pl["grid"][:2] == (3, 1)
    launch = _Module()
    st.enqueue(launch, {b: b for b in _BUFS}, p, v)
    ((name, grid, block, _, shared),) = launch.calls
    assert (name, grid, block, shared) == ("int_gemm_general", pl["grid"], (256, 1, 1),
                                           3 * (64 + 128) * 80)
    ws = st.workspace(p)
    assert ws["ws"][0][0] >= pl["ws"] and ws["counters"][0][0] >= pl["counters"]
    big = st.variant("int8").tuned({"IGG_BM": "256", "IGG_WM": "8"})
    with pytest.raises(BadInput, match="int_gemm: the general path built with a 256 x 64 tile"):
        st.enqueue(_Module(), {b: b for b in _BUFS}, st.point(big, **p), big)


def test_the_small_build_is_the_kernels_and_another_is_refused(st) -> None:  # type: ignore[no-untyped-def]
    """SMALL_BUILD restates int_gemm.cu's defaults; a --define of another small-path size
    is refused where a small path would run (its launch is planned for the defaults), and
    left alone where it would not (the wgmma path at M = 8192)."""
    for name, want in gemm_paths.SMALL_BUILD.items():
        assert kernel_define("kernels/int_gemm.cu", name) == want, name
    v = st.variant("int8").tuned({"IGS_STREAM": "0", "IGS_WARPS": "4"})
    small = st.point(v, batch=12, out_f=18944, in_f=3584)
    with pytest.raises(BadInput, match="planned for IGS_WARPS=8; a build of IGS_WARPS=4 is "
                                       "not launched"):
        st.enqueue(_Module(stream=0), {b: b for b in _BUFS}, small, v)
    launch = _Module()
    st.enqueue(launch, {b: b for b in _BUFS}, st.point(v, batch=8192, out_f=3584,
                                                       in_f=3584), v)
    assert launch.names == ["int_gemm_wgmma"]
    # a general tile the workspace cannot hold is refused on the general path only
    big = st.variant("int8").tuned({"IGG_BM": "256", "IGG_WM": "8"})
    launch = _Module()
    st.enqueue(launch, {b: b for b in _BUFS}, st.point(big, batch=8192, out_f=3584,
                                                         in_f=3584), big)
    assert launch.names == ["int_gemm_wgmma"]


def test_a_general_tile_that_is_no_decimal_integer_is_bad_input() -> None:
    with pytest.raises(BadInput, match="IGG_BM=0x80: the general path's tile takes a "
                                       "positive decimal integer"):
        geometry.GeneralTile.of_defines({"IGG_BM": "0x80"})


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc on PATH")
def test_the_wgmma_kernels_fit_the_registers_the_launch_gives(st) -> None:  # type: ignore[no-untyped-def]
    """The wgmma kernels' setmaxnreg split moves registers within what the launch gave the
    CTA: ptxas must give each 168 a thread of 384 (the bound common/igemm_wgmma.cuh's assert
    assumes; fewer, and the consumers' increase would wait forever), with no spills."""
    from harness.contract import kernel

    res = {r.function: r for r in kernel.nvcc_report(st, st.variant("int8"))}
    for name in ("int_gemm_wgmma", "int_gemm_wgmma_single"):
        assert res[name].registers == 168, (name, res[name])
        assert res[name].spill_stores == 0 and res[name].spill_loads == 0, (name, res[name])
