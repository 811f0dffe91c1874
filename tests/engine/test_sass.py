"""`harness sass`: a build compiled, disassembled and counted (compiler and disassembler
stand-ins; no nvcc or cuobjdump needed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness.engine import sass
from harness.errors import BadInput

WGMMA_REMOVED = """
        Function : int_gemm_general
        /*0000*/                   IMMA.16832.S8.S8 R92, R80.ROW, R88.COL, R92 ;
        Function : int_gemm_stream1
        /*0000*/                   IMMA.16832.S8.S8 R92, R80.ROW, R88.COL, R92 ;
        Function : int_gemm_stream
        /*0000*/                   IMMA.16832.S8.S8 R92, R80.ROW, R88.COL, R92 ;
        Function : int_gemm_small1
        /*0000*/                   IMMA.16832.S8.S8 R92, R80.ROW, R88.COL, R92 ;
        Function : int_gemm_small
        /*0000*/                   IMMA.16832.S8.S8 R92, R80.ROW, R88.COL, R92 ;
        Function : int_gemm_wgmma_single
        /*0000*/                   HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0 ;
        /*0010*/                   FFMA R1, R2, R3, R1 ;
        Function : int_gemm_wgmma
        /*0000*/                   HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0 ;
        /*0010*/                   FFMA R1, R2, R3, R1 ;
"""
WGMMA_NAMES = ("int_gemm_wgmma", "int_gemm_wgmma_single")


@pytest.fixture
def built(monkeypatch):  # type: ignore[no-untyped-def]
    seen: dict[str, object] = {}

    def compile_cubin(stage, variant, cubin, arch):  # type: ignore[no-untyped-def]
        seen.update(variant=variant, arch=arch)
        Path(cubin).write_bytes(b"")
        return ""

    monkeypatch.setattr(sass, "compile_cubin", compile_cubin)
    monkeypatch.setattr(sass.disasm, "find", lambda: "cuobjdump")
    seen["listing"] = WGMMA_REMOVED
    monkeypatch.setattr(sass.disasm, "disassemble", lambda cubin, exe: seen["listing"])
    return seen


def test_a_tensor_core_entry_point_without_mma_is_named(reg, built) -> None:  # type: ignore[no-untyped-def]
    rep = sass.sass(reg, "int_gemm", variant="int8", defines=["IG_PROMOTE=0"])
    assert rep.variant == "int8[IG_PROMOTE=0]" and rep.arch == "sm_90a"
    assert dict(built["variant"].defines)["IG_PROMOTE"] == "0"  # type: ignore[attr-defined]
    assert [f.name for f in rep.functions] == list(reg.get("int_gemm").entry_points)
    assert [f.mma for f in rep.functions] == [0 if f.name in WGMMA_NAMES else 1
                                              for f in rep.functions]
    assert len(rep.notes) == 2
    for name, note in zip(("int_gemm_wgmma", "int_gemm_wgmma_single"), rep.notes, strict=True):
        assert note.startswith(f"{name} has no tensor-core MMA instruction, though "
                               "int_gemm's arithmetic is int8_dense")


def test_no_note_where_the_mmas_are_there_or_not_expected(reg, built) -> None:  # type: ignore[no-untyped-def]
    built["listing"] = WGMMA_REMOVED.replace(
        "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0",
        "IGMMA.64x128x32.S8.S8 R24, gdesc[UR12], R24")
    assert sass.sass(reg, "int_gemm", variant="int8").notes == ()
    built["listing"] = "  Function : dynamic_spikes\n  /*0000*/   FFMA R1, R2, R3, R1 ;\n"
    assert sass.sass(reg, "dynamic_spikes").notes == ()  # no tensor-core arithmetic


def test_bad_requests_are_one_line(reg, built) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match="one value here"):
        sass.sass(reg, "int_gemm", defines=["IG_I2F=1,2"])
    built["listing"] = "        Function : other\n        /*0000*/   NOP ;\n"
    with pytest.raises(BadInput, match=r"the cubin has no function dynamic_spikes"):
        sass.sass(reg, "dynamic_spikes")


@pytest.mark.skipif(shutil.which("nvcc") is None
                    or not (os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")),
                    reason="needs nvcc and cuobjdump (on PATH, or CUOBJDUMP)")
def test_the_promotion_free_build_has_no_wgmma(reg) -> None:  # type: ignore[no-untyped-def]
    """The real tools: int_gemm's default keeps its four wgmmas; built without its
    promotion it loses them (ptxas drops them, their results unused) and keeps only
    placeholders, which `harness sass` leaves out and names."""
    default = sass.sass(reg, "int_gemm", variant="int8")
    wgmma = next(f for f in default.functions if f.name == "int_gemm_wgmma")
    assert wgmma.mma == wgmma.opcodes["IGMMA"] == 4 and default.notes == ()
    assert wgmma.mma_loop is not None and 150 < wgmma.mma_loop < 300  # the K loop (213)
    assert all(f.instructions > 100 for f in default.functions)
    rep = sass.sass(reg, "int_gemm", variant="int8", defines=["IG_PROMOTE=0"])
    wgmma = next(f for f in rep.functions if f.name == "int_gemm_wgmma")
    assert wgmma.mma == 0 and wgmma.opcodes["IGMMA"] == 0 and wgmma.null_mma > 0
    assert sorted(n.split()[0] for n in rep.notes) == sorted(WGMMA_NAMES)
