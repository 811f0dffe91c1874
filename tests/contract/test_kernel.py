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


def external_stage(reg, folder: Path, files: dict[str, str], **over):  # type: ignore[no-untyped-def]
    """A stage named ``ext`` whose kernel lies in ``folder`` (an entry-point plugin's), with
    ``files`` (relative path -> text) written there."""
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return dataclasses.replace(reg.get("dynamic_spikes"), name="ext", kernel_dir=folder, **over)


def test_a_stage_without_kernel_dir_has_no_kernel_path(reg) -> None:  # type: ignore[no-untyped-def]
    """A stage the registry did not load (no ``kernel_dir``) is a HarnessError naming it,
    not a TypeError from ``Path(None)``."""
    from harness.errors import HarnessError

    st = dataclasses.replace(reg.get("dynamic_spikes"), kernel_dir=None)
    with pytest.raises(HarnessError, match="stage dynamic_spikes has no kernel_dir"):
        compiler.kernel_path(st)


def test_include_dirs_of_an_external_kernel(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An external kernel searches its own folder, its ``common/``, then the built-in
    ``kernels/common``; a built-in kernel, whose ``common/`` is that one, lists it once."""
    from harness import paths

    ext = external_stage(reg, tmp_path, {"ext.cu": ""})
    assert compiler.include_dirs(ext) == [tmp_path, tmp_path / "common",
                                          paths.kernels_dir() / "common"]
    own = compiler.include_dirs(reg.get("dynamic_spikes"))
    assert own == [paths.kernels_dir(), paths.kernels_dir() / "common"]


def test_kernel_sources_follow_includes_as_the_compiler_does(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An include is looked up first beside the file that includes it, then in the include
    folders, and the first hit wins (a kernel's own ``reduce.cuh`` shadows the built-in
    one); the built-in ``kernels/common`` serves what the kernel lacks; headers that include
    each other are read once each."""
    from harness import paths

    ext = external_stage(reg, tmp_path, {
        "ext.cu": '#include "sub/a.cuh"\n#include "reduce.cuh"\n#include "units.cuh"\n'
                  '#include "cyc1.cuh"\n',
        "sub/a.cuh": '#include "b.cuh"\n#include "x.cuh"\n',
        "sub/b.cuh": "// b\n",
        "sub/x.cuh": "// the x beside a.cuh\n",
        "x.cuh": "// the x in the kernel's folder\n",
        "reduce.cuh": "// own reduce\n",
        "common/cyc1.cuh": '#pragma once\n#include "cyc2.cuh"\n',
        "common/cyc2.cuh": '#pragma once\n#include "cyc1.cuh"\n',
    })
    got = set(compiler.kernel_sources(ext))
    t = tmp_path.resolve()
    assert got == {t / "ext.cu", t / "sub" / "a.cuh", t / "sub" / "b.cuh", t / "sub" / "x.cuh",
                   t / "reduce.cuh", (paths.kernels_dir() / "common" / "units.cuh").resolve(),
                   t / "common" / "cyc1.cuh", t / "common" / "cyc2.cuh"}


def test_angle_bracket_includes_of_local_headers_are_sources(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``#include <name>`` is found in the include folders as nvcc finds it (not beside the
    including file), so a local header included that way is hashed, and an edit of it
    moves the hash; a system header no include folder holds is not a source."""
    ext = external_stage(reg, tmp_path, {
        "ext.cu": "#include <h.cuh>\n#include <cstdint>\n#include <sub/s.cuh>\n",
        "h.cuh": "// h\n",
        "sub/s.cuh": "#include <only_beside.cuh>\n",
        "sub/only_beside.cuh": "// not in an include folder: <> does not look beside\n",
    })
    t = tmp_path.resolve()
    assert set(compiler.kernel_sources(ext)) == {t / "ext.cu", t / "h.cuh", t / "sub" / "s.cuh"}
    v = ext.variants[0]
    h0 = compiler.kernel_hash(ext, v)
    (tmp_path / "h.cuh").write_text("// h, edited\n")
    assert compiler.kernel_hash(ext, v) != h0


def test_code_of_leaves_comments_out(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``code_of`` is what the compiler reads: line and block comments (over several
    lines too) are gone, the code stays."""
    ext = external_stage(reg, tmp_path, {
        "ext.cu": '#include "h.cuh"\nint kept; // LINE_NOTE\n/* BLOCK\n   NOTE */ int also;\n',
        "h.cuh": "/* HEADER_NOTE */ int from_header;\n"})
    code = compiler.code_of(ext)
    assert b"kept" in code and b"also" in code and b"from_header" in code
    assert not any(w in code for w in (b"LINE_NOTE", b"BLOCK", b"NOTE", b"HEADER_NOTE"))


def test_entry_functions_behind_attribute_words(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A kernel of an ``extern "C" { }`` block is found behind attribute words (a macro) and
    launch bounds; missing entry points keep their declared order."""
    ext = external_stage(reg, tmp_path, {"ext.cu": (
        '#define ATTRS __noinline__\nextern "C" {\n'
        "__global__ void ATTRS __launch_bounds__(128, 2) inner(int *x) { }\n}\n")},
        entry_points=("zz", "inner", "aa"))
    assert compiler.entry_functions(ext) == {"inner"}
    assert compiler.missing_entry_points(ext) == ["zz", "aa"]


def test_header_library_folders(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A header library's ``-I`` folder is the named folder inside its module, searched
    after the kernel's own; an unknown name, or a library whose module is missing or is not
    a package, is a HarnessError (naming the package to install)."""
    import email

    from harness.errors import HarnessError

    monkeypatch.setitem(compiler.HEADER_LIBRARIES, "mail", ("mail-dist", "email", ("mime",)))
    st = dataclasses.replace(reg.get("dynamic_spikes"), header_libraries=("mail",))
    lib = Path(email.__file__).parent / "mime"
    assert compiler.library_dirs(st) == [lib]
    v = st.variants[0]
    assert compiler.options(st, v) == [
        *compiler.compile_flags(st, v),
        *(f"-I{d}" for d in compiler.include_dirs(st)), f"-I{lib}"]
    with pytest.raises(HarnessError, match="unknown header library 'nope'"):
        compiler.library_dirs(dataclasses.replace(st, header_libraries=("nope",)))
    for module in ("no_such_module_xyz", "ast"):  # missing; a module, not a package
        monkeypatch.setitem(compiler.HEADER_LIBRARIES, "mail", ("mail-dist", module, ()))
        with pytest.raises(HarnessError, match="pip install mail-dist"):
            compiler.library_dirs(st)


def test_library_versions_name_the_distribution(reg) -> None:  # type: ignore[no-untyped-def]
    """A header library's version is ``dist==version`` of the wheel that ships it (CUTLASS:
    ``nvidia-cutlass``); a library whose distribution is not installed is a HarnessError."""
    from importlib.metadata import version

    from harness.errors import HarnessError

    st = reg.get("int_gemm")
    assert compiler.library_versions(st) == [f"nvidia-cutlass=={version('nvidia-cutlass')}"]
    with pytest.raises(HarnessError, match="pip install no-such-dist-xyz"):
        compiler.library_versions(dataclasses.replace(st, header_libraries=("no-such-dist-xyz",)))


def test_stage_nvcc_options_come_before_the_defines(reg) -> None:  # type: ignore[no-untyped-def]
    """A stage's own nvcc options are in every build, after the base options and before
    the defines, and in its hash."""
    st = reg.get("dynamic_spikes")
    std = dataclasses.replace(st, nvcc_options=("-std=c++17",))
    v = st.variant("away")
    assert compiler.compile_flags(std, v) == [
        "-lineinfo", "-std=c++17", "-DBLOCK=256", "-DROUNDING_AWAY=1"]
    assert compiler.kernel_hash(std, v) != compiler.kernel_hash(st, v)


def test_hash_covers_the_arch_target_and_library_versions(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The arch-specific target and each header library's version are in the hash, each
    on its own; a stage with neither hashes as it did before either existed."""
    st = reg.get("dynamic_spikes")
    v = st.variants[0]
    plain = compiler.kernel_hash(st, v)
    arch = dataclasses.replace(st, arch_specific=True)
    libs = dataclasses.replace(st, header_libraries=("cutlass",))
    both = dataclasses.replace(st, arch_specific=True, header_libraries=("cutlass",))
    monkeypatch.setattr(compiler, "library_versions",
                        lambda s: [f"{n}==1" for n in s.header_libraries])
    h_arch, h_libs, h_both = (compiler.kernel_hash(s, v) for s in (arch, libs, both))
    assert len({plain, h_arch, h_libs, h_both}) == 4
    monkeypatch.setattr(compiler, "library_versions",
                        lambda s: [f"{n}==2" for n in s.header_libraries])
    assert compiler.kernel_hash(libs, v) != h_libs
    assert compiler.kernel_hash(arch, v) == h_arch


def test_kernel_hash_is_stable(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The hash's recipe is fixed (the ledger keeps hashes across releases): 16 hex digits
    of sha256 over each source, in the order of its file name (not its path), then the
    compile flags; an arch-specific stage adds its marker and library versions."""
    ext = external_stage(reg, tmp_path, {"ext.cu": '#include "a.cuh"\n#include "z.cuh"\n',
                                         "a.cuh": "int a;\n", "common/z.cuh": "int z;\n"})
    v = Variant("v", (("X", "1"), ("FLAG", "")))
    assert compiler.kernel_hash(ext, v) == "6031191b27bdaf15"
    arch = dataclasses.replace(ext, arch_specific=True)
    assert compiler.kernel_hash(arch, v) == "76b949fa4dc4e5d9"


def test_target_arch(reg) -> None:  # type: ignore[no-untyped-def]
    """An arch-specific stage builds for the ``a`` target of the device's arch (once: a
    given ``sm_90a`` stays); any other builds for the arch given."""
    st = reg.get("dynamic_spikes")
    arch = dataclasses.replace(st, arch_specific=True)
    assert compiler.target_arch(arch, "sm_90") == "sm_90a"
    assert compiler.target_arch(arch, "sm_90a") == "sm_90a"
    assert compiler.target_arch(st, "sm_90") == "sm_90"


PTXAS_ODD = """\
ptxas info    : Used 4 registers
ptxas info    : Compiling entry function 'spilly' for 'sm_90'
ptxas info    : Function properties for spilly
    32 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 16 bytes smem
ptxas info    : Used 7 registers
ptxas info    : Compiling entry function 'plain' for 'sm_90'
ptxas info    : Used 10 registers, used 0 barriers
"""


def test_parse_ptxas_keeps_each_report_to_its_function() -> None:
    """A ``Used`` line outside an entry function's report is no record, a function's
    report ends at its ``Used`` line, and a function without a properties line has no
    stack or spills (not the previous function's)."""
    assert compiler.parse_ptxas(PTXAS_ODD) == [
        compiler.KernelResources("spilly", 40, 16, 32, 8, 4),
        compiler.KernelResources("plain", 10, 0, 0, 0, 0)]


def test_nvcc_targets_reads_the_gpu_codes(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``nvcc --list-gpu-code`` gives the targets (its other words left out); an nvcc
    that cannot run gives none."""
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\necho sm_80 sm_90\necho compute_90 lto_90\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    compiler.nvcc_targets.cache_clear()
    try:
        assert compiler.nvcc_targets() == ("sm_80", "sm_90")
        compiler.nvcc_targets.cache_clear()
        nvcc.write_bytes(b"\x7fELF\x00\x00")  # not a program this machine runs
        assert compiler.nvcc_targets() == ()
    finally:
        compiler.nvcc_targets.cache_clear()
