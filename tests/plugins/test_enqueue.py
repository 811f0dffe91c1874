"""Every built-in stage's ``enqueue``, run with a recording launcher on the CPU: it launches
only declared entry points, and every kernel that takes the harness's block gets
``launch.block`` (so no plugin keeps its own BLOCK that could drift from ``-DBLOCK``)."""

from __future__ import annotations

import collections

import pytest

from harness.contract import registry
from harness.contract.launcher import RecordingLauncher

#: Kernels whose block is not the harness's: the GEMM (its 64 x 64 tile fixes 256 threads),
#: weight_quant_fused (WARPS warps, a launch parameter), the integer GEMMs' paths (warp
#: roles and tiles fix their threads: the plane-by-plane GEMM's 64 x 32 tile takes 128), and
#: act_one and act_rows (their threads follow the rows and the build: checked in
#: test_activation_fused).
OWN_BLOCK = {"gemm", "wq_vec1", "wq_vec4", "wq_any", "int_gemm_wgmma", "int_gemm_wgmma_single",
             "int_gemm_stream1", "int_gemm_stream", "int_gemm_small1", "int_gemm_small",
             "int_gemm_general", "int_gemm_packed", "int_gemm_packed_wgmma",
             "int_gemm_packed_wgmma_single", "int_gemm_planes", "act_one", "act_rows"}
STAGES = tuple(sorted(registry.discover(entry_points=False).stages))


@pytest.mark.parametrize("name", STAGES)
@pytest.mark.parametrize("block", [256, 128])
def test_enqueue_launches_its_entry_points_with_the_harness_block(
        reg, name: str, block: int) -> None:  # type: ignore[no-untyped-def]
    st = reg.get(name)
    for v in st.variants:
        for case in st.cases:
            if any(case.get(k, val) != val for k, val in v.pins):
                continue
            launch = RecordingLauncher(block)
            st.enqueue(launch, collections.defaultdict(int), st.point(v, **case), v)
            assert launch.calls, (name, case)
            for kernel, grid, threads, _, _ in launch.calls:
                assert kernel in st.entry_points
                assert all(g >= 1 for g in grid)
                if kernel not in OWN_BLOCK:
                    assert threads == (block, 1, 1), (name, kernel, case)


def test_no_plugin_defines_its_own_block(reg) -> None:  # type: ignore[no-untyped-def]
    import sys

    for name in STAGES:
        module = sys.modules[f"harness_plugin_{name}"]
        assert not hasattr(module, "BLOCK"), name
        assert all(k != "BLOCK" for v in reg.get(name).variants for k, _ in v.defines), name
