"""The integer GEMM's paths and launch plans on the CPU, without a stage: the shape rule at
its edges, the restated kernel constants against the kernels' own, the small paths' split of
K against their shared-memory cap, a build of other small-path defines refused, and the
workspace covering every plan a point may take."""

from __future__ import annotations

import re

import pytest

from harness.api import BadInput
from harness.spikes import gemm_paths as gp
from harness.spikes import geometry, wgmma
from tests.plugins.support import ROOT


def _point(batch: int, out_f: int, in_f: int, group_size: int = 128,
           q_type: str = "int8") -> dict[str, object]:
    return {"batch": batch, "out_f": out_f, "in_f": in_f, "group_size": group_size,
            "q_type": q_type}


@pytest.mark.parametrize(("point", "stream", "kind"), [
    (_point(8, 3584, 3584), True, "stream1"),
    (_point(9, 3584, 3584), True, "stream"),
    (_point(16, 3584, 3584), True, "stream"),
    (_point(17, 3584, 3584), True, "wgmma"),
    (_point(8, 3584, 3584), False, "small1"),
    (_point(16, 3584, 3584), False, "small"),
    (_point(16, 3584, 3600), True, "stream"),          # K % 128 != 0 streams (K % 16 == 0)
    (_point(16, 3584, 3592), True, "general"),         # K % 16 != 0: neither small path
    (_point(4, 3584, 3584, q_type="int32"), True, "small1"),  # wide q never streams
    (_point(64, 3584, 3584, q_type="int32"), True, "general"),  # nor takes the wgmma path
    (_point(16, 3584, 3584, group_size=64), True, "general"),   # G % 128 != 0
])
def test_the_shape_rule_at_its_edges(point, stream, kind) -> None:  # type: ignore[no-untyped-def]
    assert gp.path(point, stream) == kind


def test_the_restated_stream_constants_are_the_kernels() -> None:
    """STREAM_ROWS and STREAM_MAX_CTAS size the workspace before anything is compiled: they
    must be the header's ST_ROWS and ST_MAX_CTAS."""
    src = (ROOT / "kernels" / "common" / "igemm_stream.cuh").read_text()
    for name, want in (("ST_ROWS", gp.STREAM_ROWS), ("ST_MAX_CTAS", gp.STREAM_MAX_CTAS)):
        m = re.search(rf"constexpr int {name} = (\d+);", src)
        assert m and int(m.group(1)) == want, name
    assert gp.TILE == wgmma.TILE == 128


@pytest.mark.parametrize(("n", "k", "g"), [(18944, 3584, 128), (3584, 18944, 128),
                                           (3584, 18944, 256), (64, 65536, 128),
                                           (100, 1024, 384)])
def test_the_small_split_fits_the_shared_memory_cap_or_splits_every_group(n, k, g) -> None:  # type: ignore[no-untyped-def]
    """Each small kernel's split of K is at least one, at most a split a group, and leaves q's
    tile within SMALL_SMEM_CAP unless every group is already its own split."""
    ng = -(-k // g)
    for kind, mt in (("small1", 1), ("small", 2)):
        rows = gp.SMALL_WARPS[kind] * 16
        for qp in (1, 3):
            s = gp.small_splits(n, k, g, mt, rows, qp)
            assert 1 <= s <= ng
            assert s == ng or gp.small_smem(mt, rows, qp, 2, 0, k, g, s) <= gp.SMALL_SMEM_CAP


def test_a_long_k_splits_for_shared_memory_past_the_streaming_rule() -> None:
    """At 64 x 65536 the streaming rule alone would give MAX_SPLITS; the int32 q's three
    byte planes need shared memory only more splits give."""
    s1 = gp.small_splits(64, 65536, 128, 2, 128, 1)
    s3 = gp.small_splits(64, 65536, 128, 2, 128, 3)
    assert s1 == gp.MAX_SPLITS < s3
    assert gp.small_smem(2, 128, 3, 2, 0, 65536, 128, s3 - 1) > gp.SMALL_SMEM_CAP


def test_a_small_build_of_other_defines_is_refused_and_the_defaults_pass() -> None:
    p = _point(12, 18944, 3584)
    assert gp.planned(p, {}, stream=False)["kind"] == "small"
    assert gp.planned(p, {"IGS_WARPS": "8"}, stream=False)["kind"] == "small"
    with pytest.raises(BadInput, match="planned for IGS_U=2; a build of IGS_U=4 is not "
                                       "launched"):
        gp.planned(p, {"IGS_U": "4"}, stream=False)
    # the stream path does not read the register-fed kernels' defines
    assert gp.planned(p, {"IGS_U": "4"})["kind"] == "stream"


def test_the_workspace_holds_every_plan_the_point_may_take() -> None:
    """Both small paths' partials and tickets, and on the wide variant (the layer's exact
    path runs the general kernel at every shape) any general tile's."""
    for point in (_point(1, 18944, 3584), _point(16, 3584, 18944),
                  _point(16, 18944, 3584, q_type="int32"), _point(300, 1000, 999, 7),
                  _point(8192, 3584, 3584, q_type="int32")):
        ws = gp.workspace(point)
        floats, words = ws["ws"][0][0], ws["counters"][0][0]
        for stream in (True, False):
            pl = gp.plan(point, stream)
            assert floats >= pl["ws"] and words >= pl["counters"]
        if point["q_type"] == "int32":
            need = geometry.general_gemm_workspace(*(int(point[a]) for a in (
                "batch", "out_f", "in_f", "group_size")), 3)
            assert floats >= need[0] and words >= need[1]
