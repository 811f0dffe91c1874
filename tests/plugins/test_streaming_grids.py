"""The streaming stages' launches, on the CPU: the weight stages (compute_scales,
weight_quantize, weight_quant_fused) and the plane stages (spike_encode, spike_decode) pick
their kernel by shape; with WARP_STEPS n > 0 (their default, 1) they launch blocks enough
that no warp takes more than n steps, with 0 at most one wave (BPS blocks an SM, or
VEC4_BPS for the warp-a-group kernels: the numbers their ``__launch_bounds__`` keep
resident), the kernels looping over the rest; either
way the grid reaches every group or unit. The launch parameters' defaults in the plugin and
in the kernel source are the same numbers."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from harness.contract.launcher import RecordingLauncher
from harness.spikes import spec

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
WEIGHT = {"compute_scales": "scales", "weight_quantize": "wquant", "weight_quant_fused": "wq"}
PLANES = ("spike_encode", "spike_decode")


def launches(st, v, sm_count: int = 132, **point):  # type: ignore[no-untyped-def]
    launch = RecordingLauncher(st.block_for(v), sm_count)
    st.enqueue(launch, collections.defaultdict(int), st.point(v, **point), v)
    return launch.calls


@pytest.mark.parametrize("name", [*WEIGHT, *PLANES])
def test_defaults_agree_with_the_kernel_source(reg, name: str) -> None:  # type: ignore[no-untyped-def]
    source = (KERNELS / f"{name}.cu").read_text()
    for v in reg.get(name).variants:
        for key, value in v.defines:
            if key == "MODE":
                continue
            m = re.search(rf"#define {key} (\d+)", source) or re.search(
                rf"#define {key} (\d+)", (KERNELS / "common" / "wgroups.cuh").read_text())
            assert m and m.group(1) == value, (name, key, value)


@pytest.mark.parametrize("name", WEIGHT)
@pytest.mark.parametrize(("out_f", "in_f", "g", "kind"), [
    (18944, 3584, 128, "vec1"), (3584, 18944, 128, "vec1"), (40, 1000, 100, "vec1"),
    (33, 520, 256, "vec4"), (9, 4096, 4096, "any"), (13, 130, 128, "any"),
    (12, 300, 7, "any"), (18944, 3583, 128, "any"),
])
@pytest.mark.parametrize("warp_steps", [None, "0"])
def test_weight_kernel_and_its_grid(reg, name: str, out_f: int, in_f: int, g: int,
                                    kind: str, warp_steps: str | None) -> None:  # type: ignore[no-untyped-def]
    """The default build (WARP_STEPS 1) and the persistent wave (WARP_STEPS 0)."""
    st = reg.get(name)
    v = st.variants[0] if warp_steps is None else st.variants[0].tuned({"WARP_STEPS": warp_steps})
    d = dict(v.defines)
    ((kernel, grid, block, _, _),) = launches(st, v, out_f=out_f, in_f=in_f, group_size=g)
    assert kernel == f"{WEIGHT[name]}_{kind}"
    assert block == (st.block, 1, 1)
    groups = out_f * spec.n_groups(in_f, g)
    if name == "weight_quantize" and kind == "any":
        assert grid == (out_f, 1, 1)  # a block a row
        return
    per_warp = 32 // int(d["LANES"]) if kind == "vec1" else 1
    warps = grid[0] * st.block // 32
    if int(d["WARP_STEPS"]) > 0:  # past one wave, by design: at most that many steps a warp
        assert -(-groups // (warps * per_warp)) <= int(d["WARP_STEPS"])
        assert (grid[0] - 1) * (st.block // 32) * per_warp < groups
        return
    bps = int(d["VEC4_BPS"] if kind == "vec4" else d["BPS"])  # each kernel's bound
    assert grid[0] <= 132 * bps
    # Either every group has a warp in the first step, or the grid is the whole wave.
    assert warps * per_warp >= groups or grid[0] == 132 * bps
    # No block is launched without a group for it.
    assert (grid[0] - 1) * (st.block // 32) * per_warp < groups


@pytest.mark.parametrize("name", PLANES)
@pytest.mark.parametrize(("batch", "in_f"), [(16384, 3584), (1, 3584), (7, 5), (5, 100)])
def test_plane_stages_grid(reg, name: str, batch: int,
                            in_f: int) -> None:  # type: ignore[no-untyped-def]
    st = reg.get(name)
    for v in st.variants:
        d = dict(v.defines)
        ((kernel, grid, block, _, _),) = launches(st, v, batch=batch, in_f=in_f)
        n = batch * in_f
        per_block = st.block * int(d["UNITS"]) * 4 if n % 4 == 0 else st.block
        assert kernel == name and block == (st.block, 1, 1)
        steps, chunks = int(d["WARP_STEPS"]), -(-n // per_block)
        if steps > 0:  # blocks enough for that many chunks a warp, past one wave
            assert grid[0] == -(-chunks // steps)
        else:
            assert grid[0] == min(chunks, 132 * int(d["BPS"]))
    # With WARP_STEPS 0, a GPU with more SMs gets a larger wave, up to the work there is.
    v = st.variants[0].tuned({"WARP_STEPS": "0"})
    assert launches(st, v, 264, batch=16384, in_f=3584)[0][1][0] == 264 * int(
        dict(v.defines)["BPS"])


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc on PATH")
@pytest.mark.parametrize("name", WEIGHT)
def test_weight_kernels_hold_three_steps_at_six_blocks_an_sm(reg, name: str) -> None:  # type: ignore[no-untyped-def]
    """PREFETCH 2 (three items a warp, the step two ahead in flight) fits the registers that
    BPS 6 leaves without spilling, and a depth the loop does not have is refused at compile
    time, not run as another."""
    from harness.contract import kernel
    from harness.errors import CompileError

    st = reg.get(name)
    v = st.variants[0]
    six = {"PREFETCH": "2", "BPS": "6", "LANES": "8"}  # the build the A/B timed
    if "VEC4_BPS" in dict(v.defines):
        six["VEC4_BPS"] = "6"
    vec = [r for r in kernel.nvcc_report(st, v.tuned(six))
           if r.function.startswith(f"{WEIGHT[name]}_vec")]
    assert len(vec) == 2, vec
    for r in vec:
        assert r.spill_stores == 0 and r.spill_loads == 0, r
    with pytest.raises(CompileError) as err:
        kernel.nvcc_report(st, v.tuned({"PREFETCH": "3"}))
    assert "PREFETCH is 0, 1 or 2" in err.value.detail


@pytest.mark.parametrize(("out_f", "in_f"), [(3584, 3584), (18944, 3584), (301, 3456)])
@pytest.mark.parametrize("steps", [1, 2, 5])
def test_weight_quant_fused_warp_steps_covers_every_group_in_that_many_steps(
        reg, out_f: int, in_f: int, steps: int) -> None:  # type: ignore[no-untyped-def]
    """WARP_STEPS n: the kernel's warp-strided loop over the grid the plugin launches takes
    every group, each warp at most n steps, and no block is launched without a group."""
    st = reg.get("weight_quant_fused")
    v = st.variants[0].tuned({"WARP_STEPS": str(steps)})
    ((kernel, grid, _, _, _),) = launches(st, v, out_f=out_f, in_f=in_f, group_size=128)
    assert kernel == "wq_vec1"
    per_block = st.block // 32 * (32 // int(dict(v.defines)["LANES"]))
    groups = out_f * spec.n_groups(in_f, 128)
    stride = grid[0] * per_block
    assert -(-groups // stride) <= steps  # a warp's turns of the loop
    assert (grid[0] - 1) * per_block < groups


@pytest.mark.parametrize("name", PLANES)
@pytest.mark.parametrize(("batch", "in_f"), [(16384, 3584), (1024, 3584), (7, 5)])
@pytest.mark.parametrize("steps", [1, 2])
def test_plane_stages_warp_steps_cover_every_chunk(reg, name: str, batch: int, in_f: int,
                                                   steps: int) -> None:  # type: ignore[no-untyped-def]
    """WARP_STEPS n: the grid-strided chunks (common/units.cuh) over the grid the plugin
    launches reach every value, each warp taking at most n chunks, no block without one."""
    st = reg.get(name)
    v = st.variants[0].tuned({"WARP_STEPS": str(steps)})
    ((_, grid, _, _, _),) = launches(st, v, batch=batch, in_f=in_f)
    n = batch * in_f
    per_block = st.block * int(dict(v.defines)["UNITS"]) * 4 if n % 4 == 0 else st.block
    assert -(-n // (grid[0] * per_block)) <= steps
    assert (grid[0] - 1) * per_block < n


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc on PATH")
@pytest.mark.parametrize("name", WEIGHT)
def test_weight_kernels_default_builds_spill_at_most_what_notes_records(reg, name: str) -> None:  # type: ignore[no-untyped-def]
    """The default builds' vector kernels within their __launch_bounds__: weight_quantize's and
    weight_quant_fused's vec4 at VEC4_BPS 12 (40 registers) spill a few words
    (kernels/NOTES.md records up to 16 bytes a thread, in wq_vec4), their vec1 at BPS 16 (32
    registers) none; compute_scales' at BPS 8 none. More would be a build the A/B did not
    time."""
    from harness.contract import kernel

    st = reg.get(name)
    vec = [r for r in kernel.nvcc_report(st, st.variants[0])
           if r.function.startswith(f"{WEIGHT[name]}_vec")]
    assert len(vec) == 2, vec
    for r in vec:
        assert r.spill_stores <= 16 and r.spill_loads <= 16, r
        if name == "compute_scales" or r.function.endswith("_vec1"):
            assert r.spill_stores == 0 and r.spill_loads == 0, r


@pytest.mark.parametrize("name", WEIGHT)
def test_the_persistent_wave_of_vec4_is_its_own_bound(reg, name: str) -> None:  # type: ignore[no-untyped-def]
    """At WARP_STEPS 0 the wave is the blocks that fit: VEC4_BPS an SM on vec4 (whose
    __launch_bounds__ it is), BPS on vec1, each its own."""
    st = reg.get(name)
    for vec4_bps in ("6", "12"):
        v = st.variants[0].tuned({"WARP_STEPS": "0", "VEC4_BPS": vec4_bps})
        ((_, grid4, _, _, _),) = launches(st, v, out_f=18944, in_f=3584, group_size=256)
        ((_, grid1, _, _, _),) = launches(st, v, out_f=18944, in_f=3584, group_size=128)
        assert grid4 == (132 * int(vec4_bps), 1, 1)
        assert grid1 == (132 * int(dict(v.defines)["BPS"]), 1, 1)
