"""Compilation into PyCUDA modules without a GPU: the cache key is the kernel hash, and a
kernel that does not compile is one CompileError carrying nvcc's log."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from harness.backends.pycuda import compile as compile_mod
from harness.backends.pycuda.compile import ModuleCache
from harness.contract.stage import Variant
from harness.errors import CompileError
from tests.backends.pycuda.fakes import FakeDriver, double_stage


def test_a_module_is_compiled_once_per_source_hash(drv: FakeDriver, fake_compilers: None,
                                                   tmp_path: Path) -> None:
    st = double_stage(tmp_path)
    cache = ModuleCache("sm_90")
    a = cache.get(st, st.variant("default"))
    assert cache.get(st, st.variant("default")) is a
    cache.get(st, st.variant("skips_last"))
    (tmp_path / "double.cu").write_text("// edited\n")
    assert cache.get(st, st.variant("default")) is not a
    assert drv.ops("compile") == [("compile", "double", "default", "sm_90"),
                                  ("compile", "double", "skips_last", "sm_90"),
                                  ("compile", "double", "default", "sm_90")]


def _fake_pycuda(monkeypatch: pytest.MonkeyPatch, source_module) -> None:  # type: ignore[no-untyped-def]
    class DriverCompileError(Exception):
        def __init__(self, msg: str, stderr: str) -> None:
            super().__init__(msg)
            self.stderr = stderr

    pkg = ModuleType("pycuda")
    pkg.driver = SimpleNamespace(CompileError=DriverCompileError)  # type: ignore[attr-defined]
    pkg.compiler = SimpleNamespace(SourceModule=source_module)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycuda", pkg)
    monkeypatch.setitem(sys.modules, "pycuda.driver", pkg.driver)
    monkeypatch.setitem(sys.modules, "pycuda.compiler", pkg.compiler)


def test_source_module_gets_the_variant_defines_and_include_folders(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[dict] = []
    _fake_pycuda(monkeypatch, lambda src, **kw: calls.append({"src": src, **kw}) or "module")
    st = double_stage(tmp_path)
    v = Variant("fast", defines=(("BLOCK", "128"),))
    assert compile_mod.compile_module(st, v, "sm_90") == "module"
    call = calls[0]
    assert call["src"] == "// compiled by the fakes\n"
    assert call["options"] == ["-lineinfo", "-DBLOCK=128"]  # the variant's BLOCK wins
    compile_mod.compile_module(st, st.variants[0], "sm_90")
    assert calls[1]["options"] == ["-lineinfo", "-DBLOCK=256"]
    assert call["arch"] == "sm_90" and call["no_extern_c"] is True
    assert call["include_dirs"][0] == str(tmp_path)


def test_a_kernel_that_does_not_compile_is_one_error_with_the_log(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def source_module(src, **kw):  # type: ignore[no-untyped-def]
        raise sys.modules["pycuda.driver"].CompileError("nvcc failed", "double.cu(3): error")

    _fake_pycuda(monkeypatch, source_module)
    st = double_stage(tmp_path)
    with pytest.raises(CompileError, match=r"^double \[default\] does not compile$") as exc:
        compile_mod.compile_module(st, st.variants[0], "sm_90")
    assert exc.value.detail == "double.cu(3): error"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
def test_the_timing_kernels_compile(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """timing.cu (the delay, the L2 flush, the clock, the gate and the mix) compiles for
    sm_90 with every entry point, as the backend builds it on the GPU machine."""
    from harness import paths

    src = paths.harness_cuda_dir() / "timing.cu"
    proc = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-Xptxas", "-v", "-o",
                           str(tmp_path / "t.cubin"), str(src)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    from harness.engine.calibrate import MIX_MAX_READS

    mixes = tuple(f"harness_mix{r}" for r in range(1, MIX_MAX_READS + 1))
    for name in ("harness_delay", "harness_flush", "harness_clock", "harness_gate", *mixes):
        assert f"Compiling entry function '{name}'" in proc.stdout + proc.stderr, name
