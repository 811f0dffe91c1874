"""cuobjdump -sass listings read back: functions, opcodes, the MMAs that compute something."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.tools import sass

EXCERPT = Path(__file__).parents[1] / "fixtures" / "sass" / "int_gemm_excerpt.txt"


def test_functions_and_opcodes_of_a_recorded_listing() -> None:
    funcs = {f.name: f for f in sass.parse(EXCERPT.read_text())}
    assert list(funcs) == ["int_gemm_wgmma_promotion_free", "int_gemm_wgmma", "int_gemm_small"]
    free, wgmma, small = funcs.values()
    # ptxas's placeholders are counted as instructions but compute nothing.
    assert free.opcodes["HGMMA"] == 4 and free.null_mma == 4 and free.mma == 0
    assert free.instructions == 25 and free.opcodes["BRA"] >= 10  # "@!P0 BRA" counts as BRA
    assert wgmma.opcodes["IGMMA"] == 4 and wgmma.mma == 4 and wgmma.instructions == 9
    assert small.mma == small.opcodes["IMMA"] == 24


LOOPS = """
        Function : k
        /*0000*/                   MOV R1, R2 ;
        /*0010*/                   IMAD R3, R4, R5, R6 ;
        /*0020*/                   IGMMA.64x128x32.S8.S8 R24, gdesc[UR12], R24 ;
        /*0030*/               @P0 BRA 0x10 ;
        /*0040*/              @!P1 BRA 0x0 ;
        /*0050*/                   BRA 0x60 ;
        /*0060*/                   EXIT ;
        Function : placeholders_only
        /*0000*/                   HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0 ;
        /*0010*/                   BRA 0x0 ;
"""


def test_the_innermost_loop_holding_an_mma_is_counted() -> None:
    k, only = sass.parse(LOOPS)
    # [0x10, 0x30] holds the IGMMA and is inside [0x0, 0x40]; the forward BRA is no loop.
    assert k.mma_loop == 3 and k.instructions == 7
    assert only.mma == 0 and only.mma_loop is None  # a loop of placeholders is not a GEMM's
    free, wgmma, _ = sass.parse(EXCERPT.read_text())
    assert free.mma_loop is None and wgmma.mma_loop is None  # the excerpt keeps no loop


def test_nothing_before_the_first_function_is_counted() -> None:
    assert sass.parse("        /*0000*/   NOP ;\n") == []


def _script(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "cuobjdump"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_cuobjdump_is_found_or_named(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for bad in (tmp_path / "absent", tmp_path):  # a missing file; a folder
        monkeypatch.setenv("CUOBJDUMP", str(bad))
        with pytest.raises(HarnessError, match="is not an executable file"):
            sass.find()
    exe = _script(tmp_path, "exit 0")
    monkeypatch.setenv("CUOBJDUMP", exe)
    assert sass.find() == exe
    monkeypatch.delenv("CUOBJDUMP")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(HarnessError, match="cuobjdump not found on PATH"):
        sass.find()


def test_a_failing_cuobjdump_is_one_line(tmp_path: Path) -> None:
    exe = _script(tmp_path, "echo 'cuobjdump fatal : not a cubin' >&2; exit 1")
    with pytest.raises(HarnessError) as exc:
        sass.disassemble(tmp_path / "k.cubin", exe)
    assert str(exc.value) == "cuobjdump -sass failed (exit 1): cuobjdump fatal : not a cubin"
    ok = _script(tmp_path, f"cat {EXCERPT}")
    assert sass.disassemble(tmp_path / "k.cubin", ok) == EXCERPT.read_text()
