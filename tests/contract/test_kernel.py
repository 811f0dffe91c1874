"""Kernel hashing, the nvcc resource report and its parser."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from harness.contract import kernel as compiler
from harness.contract.stage import Variant
from harness.errors import CompileError

PTXAS = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'dynamic_spikes' for 'sm_90'
ptxas info    : Function properties for dynamic_spikes
    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 62 registers, used 1 barriers, 128 bytes smem
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
"""

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def test_parse_ptxas() -> None:
    r = compiler.parse_ptxas(PTXAS)
    assert r == [compiler.KernelResources("dynamic_spikes", 62, 128, 0, 8, 12),
                 compiler.KernelResources("other", 8, 0, 16, 0, 0)]


def copy_stage(reg, tmp_path: Path):  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    src = Path(st.kernel_dir)
    shutil.copytree(src, tmp_path / "k", ignore=shutil.ignore_patterns("__pycache__"))
    return dataclasses.replace(st, kernel_dir=tmp_path / "k")


def test_hash_covers_source_headers_and_defines(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    st = copy_stage(reg, tmp_path)
    v = st.variants[0]
    h0 = compiler.kernel_hash(st, v)
    assert h0 == compiler.kernel_hash(reg.get("dynamic_spikes"), v)  # location-independent
    assert compiler.kernel_hash(st, Variant("x", (*v.defines, ("FOO", "1")))) != h0
    header = tmp_path / "k" / "common" / "rounding.cuh"
    header.write_text(header.read_text() + "\n// touched\n")
    h1 = compiler.kernel_hash(st, v)
    assert h1 != h0
    (tmp_path / "k" / "dynamic_spikes.cu").write_text(
        (tmp_path / "k" / "dynamic_spikes.cu").read_text() + "\n")
    assert compiler.kernel_hash(st, v) != h1
    assert set(p.name for p in compiler.kernel_sources(st)) == {
        "dynamic_spikes.cu", "threshold.cuh", "reduce.cuh", "rounding.cuh", "loads.cuh"}


@needs_nvcc
def test_nvcc_report_of_builtin_kernel(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    res = compiler.nvcc_report(st, st.variants[0])
    assert [r.function for r in res] == ["dynamic_spikes"]
    assert 0 < res[0].registers <= 255 and res[0].spill_stores == 0


@needs_nvcc
def test_compile_error_carries_the_log(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    st = copy_stage(reg, tmp_path)
    (tmp_path / "k" / "dynamic_spikes.cu").write_text("extern \"C\" __global__ void f() { x; }")
    with pytest.raises(CompileError) as ei:
        compiler.nvcc_report(st, st.variants[0])
    assert "does not compile" in str(ei.value) and "identifier \"x\" is undefined" in \
        ei.value.detail


def test_every_build_gets_the_stage_block(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    away = st.variant("away")
    assert compiler.compile_flags(st, away) == ["-lineinfo", "-DBLOCK=256", "-DROUNDING_AWAY=1"]
    assert st.block_for(away) == 256
    assert compiler.options(st, away)[:3] == compiler.compile_flags(st, away)
    wide = dataclasses.replace(st, block=512)
    assert compiler.compile_flags(wide, away)[1] == "-DBLOCK=512" and wide.block_for(away) == 512
    assert compiler.kernel_hash(wide, away) != compiler.kernel_hash(st, away)


def test_a_variant_block_define_wins(reg) -> None:  # type: ignore[no-untyped-def]
    """``bench --define BLOCK=128`` puts BLOCK in the variant: compiled once, and the
    launcher's block agrees."""
    st = reg.get("dynamic_spikes")
    tuned = Variant("default[BLOCK=128]", (("BLOCK", "128"),))
    assert compiler.compile_flags(st, tuned) == ["-lineinfo", "-DBLOCK=128"]
    assert st.block_for(tuned) == 128


def test_builtin_entry_points_are_extern_c_kernels(reg) -> None:  # type: ignore[no-untyped-def]
    for st in reg.stages.values():
        assert compiler.missing_entry_points(st) == [], st.name
        assert set(st.entry_points) <= compiler.entry_functions(st)
    gone = dataclasses.replace(reg.get("find_min_max"), entry_points=("find_min_max", "nope"))
    assert compiler.missing_entry_points(gone) == ["nope"]


def test_an_arch_nvcc_does_not_build_for_is_bad_input(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``--arch sm_999`` is one line before any compile (nvcc would fail every kernel with
    it, each reported as a kernel that does not compile, exit 1); the arch-specific target
    of a known one passes; without nvcc only the form is checked."""
    from harness.contract import kernel as k
    from harness.errors import BadInput

    monkeypatch.setattr(k, "nvcc_targets", lambda: ("sm_80", "sm_90"))
    assert k.check_arch("sm_90") == "sm_90" and k.check_arch("sm_90a") == "sm_90a"
    with pytest.raises(BadInput, match="--arch sm_999: not a target this nvcc builds for"):
        k.check_arch("sm_999")
    with pytest.raises(BadInput, match="a GPU target such as sm_90"):
        k.check_arch("gfx90a")
    monkeypatch.setattr(k, "nvcc_targets", lambda: ())
    assert k.check_arch("sm_999") == "sm_999"
