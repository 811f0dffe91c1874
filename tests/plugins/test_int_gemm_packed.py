"""The packed-A integer GEMM's plugin on the CPU: the inputs as the fused stage leaves
them, the bad-input rule of each decode, the launch and its workspace."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.api import BadInput
from harness.contract import kernel
from harness.contract.launcher import RecordingLauncher
from harness.spikes import inputs, spec
from tests.plugins.support import WgmmaModule, kernel_define


@pytest.fixture(scope="module")
def st(reg):  # type: ignore[no-untyped-def]
    return reg.get("int_gemm_packed")


#: The kernel's buffers, each standing for itself in a recorded launch.
_BUFS = {b: b for b in ("planes", "stats", "w_q", "scale", "vth", "bias", "ws", "counters",
                        "out")}


def _mod():  # type: ignore[no-untyped-def]
    import sys

    return sys.modules["harness_plugin_int_gemm_packed"]


def test_the_planes_and_stats_give_back_step_1s_q(st) -> None:  # type: ignore[no-untyped-def]
    """make_inputs packs v = q - o as the fused stage does (T planes written, the rest of the
    buffer zero), and q_of decodes the very q of step 1 on the same activations."""
    v = st.variant("default")
    p = st.point(v, batch=5, out_f=8, in_f=70)  # a partial last word
    ins = st.make_inputs(np.random.default_rng(4), "normal", p)
    _, _, q = inputs.activation_chain(np.random.default_rng(4), "normal", 5, 70, p["k"])
    t = int(ins["stats"][3])
    assert ins["planes"].shape == st.inputs(p)["planes"][0]
    assert not ins["planes"][t:].any() and ins["planes"][:t].any()
    assert np.array_equal(_mod().q_of(ins, p), q)
    assert list(ins["stats"][:2]) == [q.min(), q.max()]
    assert ins["stats"][2] == spec.offset(int(q.min()), int(q.max()), "unidirectional")


def test_each_decode_refuses_what_it_cannot_hold(st) -> None:  # type: ignore[no-untyped-def]
    """q past int8 is bad input for the int8 decode and fine for the wide one; a group sum
    past int32 is bad input for both."""
    for variant, stats, bad in (("default", [-20, 200, -20, 8], "beyond int8"),
                                ("wide", [-20, 200, -20, 8], None),
                                ("wide", [-200000, 9, -200000, 18], "leave int32"),
                                ("default", [-20, 100, -20, 7], None)):
        v = st.variant(variant)
        p = st.point(v, batch=2, out_f=8, in_f=256)
        ins = {"planes": np.zeros((20, 2, 8), np.uint32), "stats": np.array(stats, np.int32)}
        why = st.check_inputs(ins, p)
        assert (why is None) if bad is None else (bad in why), (variant, stats, why)
    # Groups of 2: |q| = 2^23 keeps group sums within int32 but not the wide decode's three
    # byte planes, and the message names the planes; one less passes.
    wide = st.variant("wide")
    for top, bad in ((2**23, "three byte planes"), (2**23 - 1, None)):
        p2 = st.point(wide, batch=2, out_f=8, in_f=256, group_size=2)
        ins = {"planes": np.zeros((30, 2, 8), np.uint32),
               "stats": np.array([-top, 9, -top, 24], np.int32)}
        why = st.check_inputs(ins, p2)
        assert (why is None) if bad is None else (bad in why and "int32" not in why), why
    p = st.point(st.variant("default"), batch=2, out_f=8, in_f=256)
    why = st.check_inputs({"planes": np.zeros((3, 2, 8), np.uint32),
                           "stats": np.array([0, 20, 0, 5], np.int32)}, p)
    assert why is not None and "holds 3" in why
    why = st.check_inputs({"planes": np.zeros((3, 2, 8), np.uint32),
                           "stats": np.array([0, 0, 0, 0], np.int32)}, p)
    assert why is not None and "at least 1" in why


def test_the_wgmma_path_refuses_planes_past_its_map(st) -> None:  # type: ignore[no-untyped-def]
    """The wgmma kernel's tensor map spans the layout's ``capacity`` planes: a T past it, or
    a buffer shorter than it, is bad input there (the general path reads the buffer as it
    is)."""
    p = st.point(st.variant("default"), batch=2, out_f=128, in_f=256)
    assert _mod().path(p) == "wgmma"
    cap = _mod().capacity(p)
    stats = np.array([0, 20, 0, 5], np.int32)
    ok = {"planes": np.zeros((cap, 2, 8), np.uint32), "stats": stats}
    assert st.check_inputs(ok, p) is None
    short = {"planes": np.zeros((cap - 1, 2, 8), np.uint32), "stats": stats}
    assert f"is {cap} planes" in st.check_inputs(short, p)
    past = {"planes": np.zeros((cap + 2, 2, 8), np.uint32),
            "stats": np.array([0, 20, 0, cap + 1], np.int32)}
    assert "T at most that" in st.check_inputs(past, p)
    general = st.point(st.variant("default"), batch=2, out_f=8, in_f=256)
    assert st.check_inputs(short, general) is None


@pytest.mark.parametrize(("variant", "qp"), [("default", 1), ("wide", 3)])
def test_the_launch_is_the_general_grid(st, variant, qp) -> None:  # type: ignore[no-untyped-def]
    v = st.variant(variant)
    p = st.point(v, batch=70, out_f=130, in_f=1024)
    launch = RecordingLauncher(128)
    st.enqueue(launch, _BUFS, p, v)
    ((name, grid, block, args, shared),) = launch.calls
    splits = grid[2]
    assert (name, grid[:2], block) == ("int_gemm_packed", (3, 2), (128, 1, 1))
    assert splits == 8  # 6 tiles: doubled while under 1056 tiles in flight, at most 8 groups
    assert shared == 3 * (qp * 64 + 64) * 80
    assert args[:6] == ("planes", "stats", "w_q", "scale", "vth", "bias")
    assert [int(a) for a in args[6:11]] == [70, 130, 1024, 128, splits]
    ws = st.workspace(p)
    # sized for any tile a build may have: the 128 x 128 tile's splits, the 32 x 32 tile's
    # tickets (3 x 5 of them)
    assert ws["ws"][0] == (splits * 70 * 130,) and ws["counters"][0] == (15,)


def test_a_tile_build_is_launched_as_compiled(st) -> None:  # type: ignore[no-untyped-def]
    """--define IGG_BM=128 IGG_WM=4: the build's grid, block and shared memory (launched
    with the default tile's, its blocks would read and write past their tiles); a tile past
    the workspace's sizing is refused in one line."""
    v = st.variant("default").tuned({"IGG_BM": "128", "IGG_WM": "4"})
    p = st.point(v, batch=1024, out_f=18940, in_f=3584)  # N % 128 != 0: the general path
    launch = RecordingLauncher(128)
    st.enqueue(launch, _BUFS, p, v)
    ((name, grid, block, _, shared),) = launch.calls
    assert (name, grid, block, shared) == ("int_gemm_packed", (296, 8, 1), (256, 1, 1),
                                          3 * (128 + 64) * 80)
    ws = st.workspace(p)
    assert ws["counters"][0][0] >= 296 * 8
    big = st.variant("default").tuned({"IGG_BN": "256", "IGG_WN": "8"})
    with pytest.raises(BadInput, match="the general path built with a 64 x 256 tile"):
        st.enqueue(launch, _BUFS, st.point(big, **p), big)


@pytest.mark.parametrize(("variant", "shape", "kind"), [
    ("default", {"batch": 8192, "out_f": 18944, "in_f": 3584}, "wgmma"),
    ("default", {"batch": 1, "out_f": 3584, "in_f": 3584}, "wgmma"),
    ("wide", {"batch": 8192, "out_f": 18944, "in_f": 3584}, "general"),  # int32 decode
    ("default", {"batch": 64, "out_f": 18940, "in_f": 3584}, "general"),  # N % 128
    ("default", {"batch": 64, "out_f": 256, "in_f": 1040}, "general"),    # K % 128
    ("default", {"batch": 64, "out_f": 256, "in_f": 1024, "group_size": 64}, "general"),
])
def test_the_path_by_shape(st, variant, shape, kind) -> None:  # type: ignore[no-untyped-def]
    v = st.variant(variant)
    assert _mod().path(st.point(v, **shape)) == kind


#: The packed wgmma module's own build (int_gemm_packed.cu's defaults): its producer
#: warpgroups beside the two consumer ones, and the ring's stages beside the staging slots.
_THREADS = 128 * (2 + kernel_define("kernels/int_gemm_packed.cu", "IG_PRODUCER_WARPGROUPS"))
_STAGES = kernel_define("kernels/int_gemm_packed.cu", "IG_STAGES")


def _packed_module() -> WgmmaModule:
    """The packed wgmma module as its launch reads it (its threads and stages; 231 552 bytes
    of shared memory, the staged build's)."""
    return WgmmaModule("int_gemm_packed_wgmma", threads=_THREADS, stages=_STAGES,
                       smem=231_552)


def test_the_wgmma_launch_takes_the_planes_after_the_maps(st) -> None:  # type: ignore[no-untyped-def]
    """Past two M blocks: int_gemm_packed_wgmma on pairs along M over the SMs, the weights'
    and out's tensor maps, then the planes and stats where int_gemm's kernel takes q's map
    first; its module's own constants are read."""
    v = st.variant("default")
    p = st.point(v, batch=8192, out_f=18944, in_f=3584)
    launch = _packed_module()
    st.enqueue(launch, _BUFS, p, v)
    ((name, grid, block, args, shared),) = launch.calls
    assert (name, grid, block, shared) == ("int_gemm_packed_wgmma", (132, 1, 1),
                                          (_THREADS, 1, 1), 231_552)
    assert args[3:9] == ("planes", "stats", "scale", "vth", "bias", "out")
    assert [int(a) for a in args[9:]] == [8192, 18944, 3584, 8]
    # the planes' map: P M rows of W words, one plane's K tile a box, unswizzled
    assert launch.maps[0] == (_mod().capacity(p) * 8192, 112, 128, 4, 0)
    assert set(launch.read) == {"int_gemm_packed_wgmma_smem", "int_gemm_packed_wgmma_config",
                                "int_gemm_packed_wgmma_out_box"}
    assert st.workspace(p)["ws"][0] == (1,)


def test_the_wgmma_launch_splits_k_at_one_m_block(st) -> None:  # type: ignore[no-untyped-def]
    """Up to two M blocks: the single kernel, K split where its tiles are few (28 tiles of
    3584 x 3584 on 132 SMs: four ways), on a workspace sized for it."""
    v = st.variant("default")
    p = st.point(v, batch=16, out_f=3584, in_f=3584)
    launch = _packed_module()
    st.enqueue(launch, _BUFS, p, v)
    ((name, grid, _, args, _),) = launch.calls
    assert name == "int_gemm_packed_wgmma_single"
    assert args[13:] == (4, "ws", "counters") and grid == (112, 1, 1)
    ws = st.workspace(p)
    assert ws["ws"][0][0] >= 4 * 16 * 3584 and ws["counters"][0][0] >= 28 * 8


@pytest.mark.parametrize(("batch", "box_rows"), [(1, 8), (9, 16), (16, 16), (100, 104),
                                                 (128, 128), (200, 128)])
def test_a_small_m_stages_boxes_of_m_rows_rounded_to_8(st, batch, box_rows) -> None:  # type: ignore[no-untyped-def]
    """The planes' boxes are the tile's 128 rows, or M rounded up to 8 below that (the
    kernel's stage_rows, whose barrier expects that many rows' bytes), so that no box of a
    small M reaches far past the map."""
    # The plugin's default (no IGP_SMALL_BOX among a variant's defines: small boxes) is the
    # kernel's.
    assert kernel_define("kernels/int_gemm_packed.cu", "IGP_SMALL_BOX") == 1
    v = st.variant("default")
    assert "IGP_SMALL_BOX" not in dict(v.defines)
    p = st.point(v, batch=batch, out_f=256, in_f=1024)
    launch = _packed_module()
    st.enqueue(launch, _BUFS, p, v)
    assert launch.maps[0] == (_mod().capacity(p) * batch, 32, box_rows, 4, 0)
    assert _mod().stage_rows(batch) == box_rows
    # A build of IGP_SMALL_BOX=0 (the A/B's other side) is launched with 128-row boxes,
    # which its kernel's barrier expects.
    v0 = dataclasses.replace(v, defines=(*v.defines, ("IGP_SMALL_BOX", "0")))
    launch = _packed_module()
    st.enqueue(launch, _BUFS, st.point(v0, batch=batch, out_f=256, in_f=1024), v0)
    assert launch.maps[0][2] == 128
    # A value the kernel's preprocessor would read otherwise is refused, not guessed.
    vx = dataclasses.replace(v, defines=(*v.defines, ("IGP_SMALL_BOX", "00")))
    with pytest.raises(BadInput, match="IGP_SMALL_BOX=00: 0 or 1"):
        st.enqueue(_packed_module(), _BUFS, st.point(vx, batch=batch, out_f=256, in_f=1024), vx)


def test_the_sanitize_shapes_reach_both_wgmma_kernels_and_wrap_the_ring(st) -> None:  # type: ignore[no-untyped-def]
    """compute-sanitizer watches the single kernel and the paired one, the latter on a
    shape whose K tiles outnumber the ring's stages (the producer's decode writes a stage
    the consumers freed)."""
    names, wraps = set(), False
    for shape in st.sanitize_shapes:
        p = st.point(st.variant("default"), **shape)
        launch = _packed_module()
        st.enqueue(launch, _BUFS, p, st.variant("default"))
        names |= set(launch.names)
        wraps |= launch.names == ["int_gemm_packed_wgmma"] and p["in_f"] // 128 > _STAGES
    assert names == {"int_gemm_packed_wgmma", "int_gemm_packed_wgmma_single"} and wraps


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc on PATH")
def test_the_decoding_kernels_fit_the_registers_the_launch_gives(st) -> None:  # type: ignore[no-untyped-def]
    """The wgmma kernels' setmaxnreg split (the decoders' and the consumers') moves registers
    within what the launch gave the CTA: ptxas must give each thread all of 64K over its
    threads (128 of 512 with two decoding warpgroups, the bound the kernel's assert assumes;
    fewer, and the consumers' increase would wait forever), with no spills in any
    warpgroup."""
    res = {r.function: r for r in kernel.nvcc_report(st, st.variant("default"))}
    for name in ("int_gemm_packed_wgmma", "int_gemm_packed_wgmma_single"):
        assert res[name].registers == 65536 // _THREADS // 8 * 8, (name, res[name])
        assert res[name].spill_stores == 0 and res[name].spill_loads == 0, (name, res[name])
