"""The fused activation stage's plugin on the CPU: q_wide, q as int32 where it does not fit
int8, in the launch, the reference and the trim."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

from harness.contract.launcher import RecordingLauncher
from harness.spikes import activation_grids as grids
from plugins import activation_fused as af
from tests.plugins.support import kernel_define


@pytest.fixture(scope="module")
def st(reg):  # type: ignore[no-untyped-def]
    return reg.get("activation_fused")


_BUFS = ("x", "vth", "stats", "q8", "spikes", "packed")


@pytest.mark.parametrize(("batch", "in_f", "kernels"), [
    (1, 256, ["act_one"]), (1, 130, ["act_small"]), (40, 130, ["act_stats", "act_encode"])])
def test_q_wide_is_the_last_argument_or_null(st, batch, in_f, kernels) -> None:  # type: ignore[no-untyped-def]
    """The int8 layout passes q_wide where the caller gives it; without it (a pipeline that
    does not ask, or the packed layout) the kernel gets a null pointer and writes none."""
    for name, given, want in (("unidirectional", True, "q_wide"),
                              ("unidirectional", False, 0), ("packed_bidirectional", False, 0)):
        v = st.variant(name)
        p = st.point(v, batch=batch, in_f=in_f)
        bufs = {b: b for b in _BUFS} | ({"q_wide": "q_wide"} if given else {})
        launch = RecordingLauncher(256)
        st.enqueue(launch, bufs, p, v)
        assert launch.names == kernels
        assert launch.calls[-1][3][-1] == want


@pytest.mark.parametrize(("batch", "in_f", "kernels"), [
    (1, 3584, ["act_one"]), (1, 4096, ["act_one"]),  # the row fits the caches
    (1, 4100, ["act_one"]), (1, 32768, ["act_one"]),  # past them: more warps a block
    (1, 32772, ["act_small"]), (1, 130, ["act_small"]),  # too wide; F % 4 != 0
    (2, 3584, ["act_rows"]), (8, 3584, ["act_rows"]),  # rows of four turns: up to eight
    (9, 3584, ["act_grid"]),  # 36 warps a block: past act_rows
    (4, 4100, ["act_rows"]), (7, 4100, ["act_stats", "act_encode"]),  # five turns: 20, 35
    (32, 1024, ["act_rows"]), (33, 1024, ["act_grid"]),  # a warp a row
    (2, 18944, ["act_stats", "act_encode"]),  # nineteen turns: batch 1 only
    (2, 130, ["act_stats", "act_encode"]),  # F % 4 != 0
])
def test_act_one_takes_the_rows_it_holds(st, batch, in_f, kernels) -> None:  # type: ignore[no-untyped-def]
    """act_one takes a row of F % 4 == 0 up to 128 x BLOCK values, act_rows as many such
    rows as 32 warps a block hold (batch x ceil(F / 4 / BLOCK) warps), on a cluster of
    BLOCK / 32 blocks of (32 x ceil(F / 4 / BLOCK), batch) threads, act_rows with the batch,
    both with act_small's trailing outputs; anything else keeps the other paths."""
    for name in ("unidirectional", "packed_twos_complement"):
        v = st.variant(name)
        p = st.point(v, batch=batch, in_f=in_f)
        launch = RecordingLauncher(256)
        st.enqueue(launch, {b: b for b in _BUFS} | {"q_wide": "q_wide"}, p, v)
        packed_two = ["act_stats", "act_encode"] if kernels == ["act_grid"] else kernels
        assert launch.names == (packed_two if name.startswith("packed") else kernels)
        if kernels in (["act_one"], ["act_rows"]):
            _, grid, block, args, _ = launch.calls[0]
            turns = -(-in_f // 4 // 256)
            assert (grid, block) == ((8, 1, 1), (32 * turns, batch, 1))
            dest = "packed" if name.startswith("packed") else "spikes"
            assert args[:4] == ("x", "vth", "stats", "q8") and args[-2:] == (dest, "q_wide")
            rows = (batch,) if batch > 1 else ()
            assert tuple(float(a) for a in args[4:-2]) == (*rows, in_f, p["k"])


@pytest.mark.parametrize(("cache_vec", "cluster", "block", "in_f", "kernel", "geometry"), [
    ("4", "2", 256, 3584, "act_one", (8, 128)),  # four turns a BLOCK-build thread
    ("1", "2", 256, 1028, "act_one", (8, 64)),  # the cluster does not stop at the cache
    ("4", "2", 256, 100, "act_one", (8, 32)),  # one turn
    ("4", "2", 256, 18944, "act_one", (8, 608)),  # nineteen
    ("4", "2", 64, 8192, "act_one", (2, 1024)), ("4", "2", 64, 8196, "act_small", None),
    ("1", "0", 256, 1024, "act_one", (1, 256)),  # one block where the build asks for it
    ("1", "0", 256, 1028, "act_small", None),  # ... holding the cache's width at most
    ("4", "2", 512, 8192, "act_one", (1, 1024)),  # past 8 blocks: one block, at most 1024
    ("4", "2", 512, 8196, "act_small", None),
    ("4", "2", 96, 1536, "act_one", (3, 128)),
    ("4", "2", 100, 1600, "act_one", (1, 400)),  # BLOCK not a multiple of 32: one block
    ("16", "0", 1024, 4096, "act_small", None),  # past ONE_MAX_SLOTS: no one-block act_one
])
def test_act_one_follows_the_build(st, cache_vec, cluster, block, in_f, kernel,  # type: ignore[no-untyped-def]
                                   geometry) -> None:
    """A -D CACHE_VEC, BLOCK or ONE_CLUSTER build moves act_one's launch and widest row with
    it: a cluster of BLOCK / 32 blocks of 32 x ceil(F / 4 / BLOCK) threads (at most 1024)
    where the build allows one (the kernel's ONE_CL), else one block of CACHE_VEC x BLOCK
    threads (at most 1024) for rows up to 4 x CACHE_VEC x BLOCK; past ONE_MAX_SLOTS that
    build has no act_one."""
    v = st.variant("unidirectional")
    new = {"CACHE_VEC": cache_vec, "ONE_CLUSTER": cluster}
    vc = dataclasses.replace(v, defines=tuple((k, new.get(k, x)) for k, x in v.defines))
    launch = RecordingLauncher(block)
    st.enqueue(launch, {b: b for b in _BUFS}, st.point(vc, batch=1, in_f=in_f), vc)
    assert launch.names == [kernel]
    if geometry is not None:
        assert launch.calls[0][1:3] == ((geometry[0], 1, 1), (geometry[1], 1, 1))


def test_a_build_s_own_one_max_slots_is_read_back(st) -> None:  # type: ignore[no-untyped-def]
    """-D ONE_MAX_SLOTS=512 on a one-block build (ONE_CLUSTER=0): 1024 slots (CACHE_VEC 4 x
    BLOCK 256) are past that build's act_one, whose kernel would trap, so the row of 1024
    values goes to act_small; the default build takes it on act_one."""
    v = st.variant("unidirectional").tuned({"ONE_CLUSTER": "0"})
    low = v.tuned({"ONE_MAX_SLOTS": "512"})
    for build, kernel in ((v, "act_one"), (low, "act_small")):
        launch = RecordingLauncher(256)
        st.enqueue(launch, {b: b for b in _BUFS}, st.point(build, batch=1, in_f=1024), build)
        assert launch.names == [kernel], build.name


@pytest.mark.parametrize(("small_b", "batch", "kernels"), [
    ("4", 4, ["act_small"]), ("1", 2, ["act_stats", "act_encode"]),
    ("1", 1, ["act_small"]),  # batch 1 on a row act_one does not take (F % 4 != 0)
])
def test_small_batches_follow_the_small_b_define(st, small_b, batch, kernels) -> None:  # type: ignore[no-untyped-def]
    """act_small takes the batches its build's shared arrays hold (-D SMALL_B), not the
    plugin's default: a SMALL_B=4 build takes batch 4, the default's (1) sends batch 2 to
    the two-pass path."""
    v = st.variant("unidirectional")
    vb = dataclasses.replace(v, defines=tuple((k, small_b if k == "SMALL_B" else x)
                                              for k, x in v.defines))
    launch = RecordingLauncher(256)
    st.enqueue(launch, {b: b for b in _BUFS}, st.point(vb, batch=batch, in_f=130), vb)
    assert launch.names == kernels


@pytest.mark.parametrize(("in_f", "stages", "shared"), [
    (3584, None, 3 * 3584 * 4), (4096, None, 3 * 4096 * 4),  # the row fits the caches
    (68, None, 3 * 68 * 4), (8, "2", 2 * 8 * 4),  # short rows; another depth
    (4100, None, 3 * 4100 * 4), (18944, None, 3 * 18944 * 4),  # past the caches, the ring
    (20000, None, 0), (18944, "4", 0),  # past STATS_RING_BYTES: the register prefetch
    (130, None, 0),  # F % 4 != 0: scalar loads
    (3584, "0", 0),  # the ring built out
])
def test_pass_1_gets_its_rings_shared_memory(st, in_f, stages, shared) -> None:  # type: ignore[no-untyped-def]
    """act_stats is launched with STATS_STAGES rows of shared memory exactly where the
    kernel's stats_ring_fits takes the ring (F % 4 == 0, STATS_STAGES rows within
    STATS_RING_BYTES), read back from the build's defines; elsewhere none (the kernel then
    never touches it)."""
    for name in ("unidirectional", "packed_bidirectional"):
        v = st.variant(name)
        if stages is not None:
            v = dataclasses.replace(v, defines=tuple(
                (k, stages if k == "STATS_STAGES" else val) for k, val in v.defines))
        p = st.point(v, batch=30000, in_f=in_f)
        launch = RecordingLauncher(256)
        st.enqueue(launch, {b: b for b in _BUFS} | {"q_wide": "q_wide"}, p, v)
        assert launch.names == ["act_stats", "act_encode"]
        assert launch.calls[0][4] == shared
        assert launch.calls[1][4] == 0


@pytest.mark.parametrize(("block", "cache_vec", "ring_bytes", "in_f", "shared"), [
    (128, 4, None, 2052, 3 * 2052 * 4),  # past 4 x 4 x 128 values: the ring all the same
    (256, 2, None, 18944, 3 * 18944 * 4),
    (256, 4, "98304", 8192, 3 * 8192 * 4), (256, 4, "98304", 8196, 0),  # a build's bound
])
def test_the_ring_follows_the_builds_bytes_not_its_caches(st, block, cache_vec, ring_bytes, in_f,
                                                           shared) -> None:  # type: ignore[no-untyped-def]
    """Where the ring takes a row is counted from the build's STATS_RING_BYTES (read back
    from the variant's defines), whatever BLOCK and CACHE_VEC the thread caches hold."""
    v = st.variant("unidirectional")
    new = {"CACHE_VEC": str(cache_vec)} | ({"STATS_RING_BYTES": ring_bytes} if ring_bytes else {})
    v = dataclasses.replace(v, defines=tuple((k, new.get(k, val)) for k, val in v.defines))
    p = st.point(v, batch=30000, in_f=in_f)
    launch = RecordingLauncher(block)
    st.enqueue(launch, {b: b for b in _BUFS} | {"q_wide": "q_wide"}, p, v)
    assert launch.names == ["act_stats", "act_encode"]
    assert launch.calls[0][4] == shared


def test_q_wide_is_declared_in_the_int8_layout_only(st) -> None:  # type: ignore[no-untyped-def]
    p = st.point(st.variant("unidirectional"), batch=3, in_f=100)
    assert st.outputs(p)["q_wide"] == ((3, 100), np.dtype(np.int32))
    assert "q_wide" not in st.outputs(st.point(st.variant("packed_unidirectional"), batch=3,
                                               in_f=100))


def test_q_wide_is_judged_only_where_q_does_not_fit_int8(st) -> None:  # type: ignore[no-untyped-def]
    """k = 64 on a row with one large value gives |q| past 127: the reference holds q, and
    the trim keeps what the kernel wrote. A normal row at k = 3 fits: neither has rows."""
    v = st.variant("unidirectional")
    rng = np.random.default_rng(0)
    wide = rng.standard_normal((3, 64), dtype=np.float32)
    wide[1, 5] = 500.0
    for x, k, fits in ((wide, 64.0, False), (rng.standard_normal((3, 64), dtype=np.float32),
                                              3.0, True)):
        p = st.point(v, batch=3, in_f=64, k=k)
        ref = st.reference({"x": x}, p, v)
        assert ref["q_wide"].shape == ((0, 64) if fits else (3, 64))
        assert fits == (np.abs(ref["q_wide"]).max(initial=0) <= 127)
        if not fits:
            assert int(ref["q_wide"][1, 5]) == int(ref["stats"][1]) > 127
        got = {**ref, "q_wide": np.full((3, 64), -7, np.int32)}
        assert st.trim(got, p)["q_wide"].shape == ((0, 64) if fits else (3, 64))


@pytest.mark.parametrize(("rows", "batch", "geometry"), [
    ("1", 1, (8, 128, 1)), ("1", 2, None), ("4", 4, (8, 128, 4)), ("4", 5, None)])
def test_act_one_rows_follow_the_one_rows_define(st, rows, batch, geometry) -> None:  # type: ignore[no-untyped-def]
    """A -D ONE_ROWS build takes at most that many rows on act_rows (its shared array of the
    rows' sums holds that many); more go to act_grid, as the launch shows."""
    v = st.variant("unidirectional")
    vr = dataclasses.replace(v, defines=tuple((k, rows if k == "ONE_ROWS" else x)
                                              for k, x in v.defines))
    launch = RecordingLauncher(256)
    st.enqueue(launch, {b: b for b in _BUFS}, st.point(vr, batch=batch, in_f=3584), vr)
    if geometry is None:
        assert launch.names == ["act_grid"]
    else:
        assert launch.names == ["act_rows" if batch > 1 else "act_one"]
        assert launch.calls[0][1:3] == ((geometry[0], 1, 1), (geometry[1], geometry[2], 1))


def _with(v, **defines):  # type: ignore[no-untyped-def]
    return dataclasses.replace(v, defines=tuple((k, str(defines.get(k, x))) for k, x in v.defines))


@pytest.mark.parametrize(("sm_count", "batch", "in_f", "geometry"), [
    (132, 9, 3584, (9, 1)), (132, 528, 3584, (528, 1)),  # a block a row up to 4 an SM
    (132, 529, 3584, (265, 2)), (132, 1024, 3584, (512, 2)),  # then rows spread evenly
    (132, 2112, 3584, (528, 4)), (132, 2113, 3584, None),  # GRID_ROWS a block at most
    (148, 2113, 3584, (529, 4)),  # more SMs hold more rows
    (132, 64, 4096, (64, 1)), (132, 64, 4100, None),  # the row must fit the cache
    (132, 64, 130, None),  # F % 4 != 0
])
def test_act_grid_takes_the_rows_its_resident_grid_holds(st, sm_count, batch, in_f,  # type: ignore[no-untyped-def]
                                                         geometry) -> None:
    """act_grid's grid is at most GRID_MINB blocks an SM (all resident: its barrier waits
    for every block), each with at most GRID_ROWS rows, the rows spread evenly; rows that
    do not fit a thread's cache, or more rows than that grid holds, take the two passes."""
    v = st.variant("unidirectional")
    assert grids.grid_geometry(dict(v.defines), 256, sm_count, in_f, batch) == geometry
    launch = RecordingLauncher(256, sm_count=sm_count)
    st.enqueue(launch, {b: b for b in _BUFS} | {"q_wide": "q_wide"},
               st.point(v, batch=batch, in_f=in_f), v)
    if geometry is None:
        assert "act_grid" not in launch.names
        return
    assert launch.names == ["act_grid"]
    _, grid, block, args, _ = launch.calls[0]
    assert (grid, block) == ((geometry[0], 1, 1), (256, 1, 1))
    assert geometry[0] * geometry[1] >= batch > (geometry[0] - 1) * geometry[1]
    assert args[:4] == ("x", "vth", "stats", "q8") and args[-2:] == ("spikes", "q_wide")
    assert tuple(float(a) for a in args[4:-2]) == (batch, in_f, st.point(v, batch=batch)["k"])
    packed = st.variant("packed_unidirectional")
    assert grids.grid_geometry(dict(packed.defines), 256, sm_count, in_f, batch) is None
    launch = RecordingLauncher(256, sm_count=sm_count)
    st.enqueue(launch, collections.defaultdict(int), st.point(packed, batch=batch, in_f=in_f),
               packed)
    assert "act_grid" not in launch.names  # the packed layout keeps the two passes


@pytest.mark.parametrize(("defines", "block", "geometry"), [
    ({"GRID_ROWS": 0}, 256, None),  # the A/B build: those batches on the two passes
    ({"GRID_ROWS": 2}, 256, (512, 2)),  # 1024 rows on 528 resident blocks: two a block
    ({"GRID_MINB": 2}, 256, (256, 4)),  # 264 resident blocks: four rows a block
    ({"GRID_MINB": 1}, 256, None),  # 132 blocks would need eight rows a block
    ({}, 512, (512, 2)),  # four blocks of 512 fill an SM's 2048 threads
    ({}, 1024, None),  # four of 1024 do not: ptxas drops the bound, one block may fit
    ({"GRID_MINB": 2}, 1024, (256, 4)),  # a bound that holds: two blocks of 1024
])
def test_act_grid_follows_the_build(st, defines, block, geometry) -> None:  # type: ignore[no-untyped-def]
    """GRID_ROWS, GRID_MINB and BLOCK move what act_grid takes at batch 1024 on 132 SMs,
    from the build's defines; where GRID_MINB blocks of BLOCK do not fit an SM's threads,
    ptxas ignores the launch bounds' minimum (the registers then need not allow that many
    blocks: 64 registers and one block of 1024 in the default build), so no act_grid."""
    v = _with(st.variant("unidirectional"), **defines)
    assert grids.grid_geometry(dict(v.defines), block, 132, 3584, 1024) == geometry


def test_act_grid_takes_no_more_blocks_than_the_driver_counts(st) -> None:  # type: ignore[no-untyped-def]
    """Where the device holds fewer blocks of this build than the launch bounds promise
    (an SM of fewer threads, registers the bound did not get), the grid is cut to what the
    driver's occupancy query counts, so every block is resident at once, or act_grid is
    not taken."""
    v = st.variant("unidirectional")
    d = dict(v.defines)
    assert grids.grid_geometry(d, 256, 132, 3584, 1024, per_sm=4) == (512, 2)
    assert grids.grid_geometry(d, 256, 132, 3584, 1024, per_sm=2) == (256, 4)
    assert grids.grid_geometry(d, 256, 132, 3584, 1024, per_sm=1) is None
    assert grids.grid_geometry(d, 256, 132, 3584, 1024, per_sm=0) is None
    assert grids.grid_geometry(d, 256, 132, 3584, 1024, per_sm=8) == (512, 2)  # bounds' 4

    class Fewer(RecordingLauncher):
        def __init__(self, block: int, sm_count: int) -> None:
            super().__init__(block, sm_count)
            self.asked: list[tuple[str, int]] = []

        def max_active_blocks(self, name: str, threads: int, shared: int = 0) -> int:
            self.asked.append((name, threads))
            return 2

    launch = Fewer(256, sm_count=132)
    st.enqueue(launch, {b: b for b in _BUFS} | {"q_wide": "q_wide"},
               st.point(v, batch=1024, in_f=3584), v)
    assert launch.asked == [("act_grid", 256)] and launch.calls[0][1] == (256, 1, 1)
    launch = Fewer(256, sm_count=132)
    st.enqueue(launch, {b: b for b in _BUFS} | {"q_wide": "q_wide"},
               st.point(v, batch=4, in_f=3584), v)
    assert launch.asked == [] and "act_grid" not in launch.names  # not asked where not taken
    assert RecordingLauncher(256).max_active_blocks("act_grid", 256) == 8


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc on PATH")
@pytest.mark.parametrize("block", [256, 512])
def test_act_grid_builds_hold_the_blocks_the_plugin_counts(st, block) -> None:  # type: ignore[no-untyped-def]
    """Where grid_geometry gives act_grid a grid of GRID_MINB blocks an SM, ptxas must have
    held the launch bounds: registers (in units of 8 a thread, 64K an SM) and static shared
    memory (with the 1 KB an SM keeps a block) for that many blocks of BLOCK threads (the
    barrier waits for every block, so a grid not all resident would hang)."""
    from harness.contract.kernel import nvcc_report

    v = st.variant("unidirectional")
    vb = dataclasses.replace(v, defines=(*v.defines, ("BLOCK", str(block))))
    minb = int(dict(v.defines)["GRID_MINB"])
    assert grids.grid_geometry(dict(vb.defines), block, 132, 1024, 64) is not None
    res = {r.function: r for r in nvcc_report(st, vb)}["act_grid"]
    assert minb * block * (-(-res.registers // 8) * 8) <= 65536, res
    assert minb * (res.smem_bytes + 1024) <= 228 * 1024, res


@pytest.mark.parametrize("mode", ["unidirectional", "bidirectional", "twos_complement"])
def test_the_reference_s_stats_are_qmin_qmax_o_t_in_that_order(st, mode: str) -> None:  # type: ignore[no-untyped-def]
    """stats = [qmin, qmax, o, T], from SPEC's steps taken one by one here (the kernels and
    the integer GEMM read them by place): a row whose four values all differ."""
    from harness.spikes import spec

    x = np.array([[1.0, -2.0, 0.5, 3.0]], np.float32)
    _, q = spec.dynamic_spikes(x, 3.0)
    assert q.tolist() == [[2, -4, 1, 6]]
    o = spec.offset(-4, 6, mode)
    t = spec.planes(int(np.abs(q - o).max()), mode)
    v = next(v for v in st.variants if dict(v.pins) == {"mode": mode, "layout": "int8"})
    ref = st.expected({"x": x}, st.point(v, batch=1, in_f=4, k=3.0), v)
    assert ref["stats"].tolist() == [-4, 6, o, t]
    assert ref["q8"].tolist() == [[2, -4, 1, 6]] and ref["q8"].dtype == np.int8


def test_q8_holds_the_whole_int8_range() -> None:
    """q8 clamps to [-128, 127]: -128 is a value int8 holds, kept as it is."""
    got = af.q8(np.array([-300, -129, -128, -127, 127, 128, 300]))
    assert got.dtype == np.int8 and got.tolist() == [-128, -128, -128, -127, 127, 127, 127]


def test_a_buffer_of_exactly_max_planes_is_taken(st) -> None:  # type: ignore[no-untyped-def]
    """k F = 2^29 needs 31 planes at most (MAX_PLANES): taken; 2^30 would need 32: said."""
    from harness.spikes import spec

    x = np.ones((1, 512), np.float32)
    at = st.point(st.variants[0], batch=1, in_f=512, k=float(2**20))
    assert af.capacity(at) == spec.MAX_PLANES and af.check_inputs({"x": x}, at) is None
    past = st.point(st.variants[0], batch=1, in_f=512, k=float(2**21))
    assert af.capacity(past) == spec.MAX_PLANES + 1
    assert "more than 31 planes hold" in (af.check_inputs({"x": x}, past) or "")


@pytest.mark.parametrize(("batch", "in_f", "blocks", "shared"), [
    (1, 3584, 1, 3 * 4 * 3584), (8, 3584, 8, 43008), (9, 3584, 9, 43008), (1, 130, 1, 0),
    (1024, 3584, grids.STATS_RING_BLOCKS, 43008), (8192, 3584, grids.STATS_RING_BLOCKS, 43008),
    (1024, 18944, 132, 227328), (16, 18944, 16, 227328),
    (1024, 20000, 1024, 0), (65536, 3584, grids.STATS_BLOCKS, 43008)])
def test_the_operand_layout_launches_pass_1_alone(st, batch, in_f, blocks, shared) -> None:  # type: ignore[no-untyped-def]
    """Where the int8 layout takes act_one, act_rows, act_grid, act_small or the two passes,
    the operand layout takes act_stats alone, on the rows' blocks (``grids.stats_blocks``, at
    most one wave where the ring leaves an SM fewer than STATS_MINB: 132 at 18944, one
    block an SM by this launcher's count of threads and dynamic shared memory), with
    the ring's shared memory (three rows where they fit STATS_RING_BYTES, none for F % 4
    != 0 or past it), and nothing past q8 among its arguments."""
    v = st.variant("operand_unidirectional")
    p = st.point(v, batch=batch, in_f=in_f)
    launch = RecordingLauncher(256)
    st.enqueue(launch, {b: b for b in ("x", "vth", "stats", "q8")}, p, v)
    assert launch.names == ["act_stats"]
    (_, grid, block, args, got) = launch.calls[0][:5]
    assert grid == (blocks, 1, 1) and block == (256, 1, 1)
    assert args[:4] == ("x", "vth", "stats", "q8") and len(args) == 7
    assert got == shared


def test_the_operand_layout_is_the_int8_build_without_planes(st) -> None:  # type: ignore[no-untyped-def]
    """Its variants compile the int8 layout's kernels (the same defines but the name), and
    it declares, references and trims vth, stats and q8 only; its floor counts q8 where
    the others count planes."""
    op, i8 = st.variant("operand_unidirectional"), st.variant("unidirectional")
    assert op.defines == i8.defines and dict(op.pins)["layout"] == "operand"
    assert [v.name for v in st.variants if dict(v.pins)["layout"] == "operand"] == [op.name]
    v = st.variant("operand_unidirectional")
    p = st.point(v, batch=3, in_f=64)
    assert set(st.outputs(p)) == {"vth", "stats", "q8"}
    x = np.random.default_rng(1).standard_normal((3, 64), dtype=np.float32)
    ref = st.reference({"x": x}, p, v)
    assert set(ref) == {"vth", "stats", "q8"}
    full = st.reference({"x": x}, st.point(st.variant("unidirectional"), batch=3, in_f=64),
                        st.variant("unidirectional"))
    for name in ref:
        np.testing.assert_array_equal(ref[name], full[name])
    assert set(st.trim(ref, p)) == {"vth", "stats", "q8"}
    assert af.floor_bytes(p, 6) == 4 * 3 * 64 + 3 * 64 + 4 * 3


class SharedCountingLauncher(RecordingLauncher):
    """A recording launcher that also counts act_stats' 4 KB of static arrays a block (the
    plain one counts the dynamic bytes and the driver's 1 KB, not knowing the kernel): what
    the driver's occupancy query counts on the H200."""

    def max_active_blocks(self, name: str, threads: int, shared: int = 0) -> int:
        return min(super().max_active_blocks(name, threads, shared),
                   233472 // (shared + 4096 + 1024))


@pytest.mark.parametrize(("in_f", "shared", "blocks"), [
    (4096, 49152, grids.STATS_RING_BLOCKS), (4100, 49200, grids.STATS_RING_BLOCKS),
    (5000, 60000, grids.STATS_RING_BLOCKS),  # 3 an SM: 396 resident, more than the rule's 256
    (8192, 98304, grids.STATS_RING_BLOCKS), (12288, 147456, 132), (18944, 227328, 132),
    (19028, 228336, 132), (19032, 0, 8192), (4098, 0, 8192)])
def test_the_ring_takes_aligned_rows_while_three_fit_its_bytes(st, in_f, shared, blocks) -> None:  # type: ignore[no-untyped-def]
    """Three stages of an aligned row up to STATS_RING_BYTES (the kernel's stats_ring_fits),
    past the thread caches too; where the ring leaves an SM fewer blocks than STATS_MINB
    (by the driver's count), pass 1's grid is at most the blocks resident (one wave), else
    the rule above; past the ring, STATS_BLOCKS."""
    assert kernel_define("kernels/activation_fused.cu",
                         "STATS_RING_BYTES") == grids.STATS_RING_BYTES
    v = st.variant("operand_unidirectional")
    launch = SharedCountingLauncher(256)
    st.enqueue(launch, {b: b for b in ("x", "vth", "stats", "q8")},
               st.point(v, batch=8192, in_f=in_f), v)
    (_, grid, _, _, got) = launch.calls[0][:5]
    assert got == shared and grid == (blocks, 1, 1)


@pytest.mark.parametrize(("layout", "batch", "blocks"), [
    ("int8", 8192, grids.STATS_RING_BLOCKS), ("int8", 65536, grids.STATS_BLOCKS),
    ("packed", 1024, grids.STATS_RING_BLOCKS), ("packed", 8192, grids.STATS_RING_BLOCKS),
    ("packed", 16384, grids.STATS_BLOCKS)])
def test_the_two_passes_launch_pass_1_on_its_blocks(st, layout, batch, blocks) -> None:  # type: ignore[no-untyped-def]
    """Where the planes layouts take the two passes (past act_grid's rows, or packed past
    act_rows'), pass 1 is launched on ``grids.stats_blocks``' count, then act_encode."""
    v = st.variant("unidirectional" if layout == "int8" else f"{layout}_unidirectional")
    p = st.point(v, batch=batch, in_f=3584)
    launch = RecordingLauncher(256)
    names = ("x", "vth", "stats", "q8", "spikes", "packed", "q_wide")
    st.enqueue(launch, {b: b for b in names}, p, v)
    assert launch.names == ["act_stats", "act_encode"]
    assert launch.calls[0][1] == (blocks, 1, 1)
