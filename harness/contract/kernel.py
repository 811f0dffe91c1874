"""Kernel sources, their hashes, and nvcc options and reports (compiling into PyCUDA modules
is the pycuda backend's job: ``harness.backends.pycuda.compile``).

The kernel hash covers the ``.cu`` file, every header it includes (recursively, from the
kernel's folder and ``kernels/common``) and the build's options (``-DBLOCK`` and the
variant's ``-D`` defines): what the validation ledger records and ``harness ledger --check``
recomputes.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import paths
from harness.contract.stage import Stage, Variant
from harness.errors import BadInput, CompileError, HarnessError

#: ``#include "name"`` and ``#include <name>``: nvcc finds either form in the ``-I`` folders
#: (the quoted one first beside the including file), so a local header included with angle
#: brackets is as much a source as a quoted one.
_INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)', re.MULTILINE)
#: Options every build gets: line info for Nsight Compute's source view; it costs no speed.
BASE_OPTIONS = ("-lineinfo",)


def kernel_path(stage: Stage) -> Path:
    """The stage's ``.cu`` file."""
    if stage.kernel_dir is None:
        raise HarnessError(f"stage {stage.name} has no kernel_dir (not loaded by the registry)")
    return Path(stage.kernel_dir) / stage.kernel_file


def include_dirs(stage: Stage) -> list[Path]:
    """Folders searched for ``#include "..."`` and ``<...>``: the kernel's own, its
    ``common/``, and the built-in ``kernels/common`` (shared helpers for kernels kept
    elsewhere)."""
    k = kernel_path(stage).parent
    dirs = [k, k / "common", paths.kernels_dir() / "common"]
    return [d for i, d in enumerate(dirs) if d not in dirs[:i]]


#: Header libraries a stage may name: the Python distribution that ships the headers, and
#: the module and folder inside it where the include tree lies.
HEADER_LIBRARIES = {
    "cutlass": ("nvidia-cutlass", "cutlass_library", ("source", "include")),
}


def library_dirs(stage: Stage) -> list[Path]:
    """The include folders of the stage's header libraries (``-I``, searched after the
    kernel's own); HarnessError naming the package to install when one is missing."""
    import importlib.util

    out = []
    for name in stage.header_libraries:
        if name not in HEADER_LIBRARIES:
            raise HarnessError(f"stage {stage.name}: unknown header library {name!r} "
                               f"(known: {', '.join(HEADER_LIBRARIES)})")
        dist, module, sub = HEADER_LIBRARIES[name]
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise HarnessError(f"stage {stage.name} includes the {name} headers: "
                               f"pip install {dist} (or the project's extra: '.[{name}]')")
        out.append(Path(next(iter(spec.submodule_search_locations))).joinpath(*sub))
    return out


def library_versions(stage: Stage) -> list[str]:
    """``dist==version`` of each header library: part of the kernel hash, since other
    headers make other code."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in stage.header_libraries:
        dist = HEADER_LIBRARIES.get(name, (name,))[0]
        try:
            out.append(f"{dist}=={version(dist)}")
        except PackageNotFoundError:
            raise HarnessError(f"stage {stage.name} includes the {name} headers: "
                               f"pip install {dist} (or the project's extra: '.[{name}]')"
                               ) from None
    return out


_ARCH = re.compile(r"sm_\d{2,3}a?")


def check_arch(arch: str) -> str:
    """``arch`` when it names a GPU target nvcc builds for (``sm_90``, ``sm_90a``); BadInput
    otherwise, before any compile (nvcc would fail every kernel with it, each as a kernel
    that does not compile)."""
    if not _ARCH.fullmatch(arch):
        raise BadInput(f"--arch {arch!r}: a GPU target such as sm_90 (sm_ and its compute "
                       "capability)")
    known = nvcc_targets()
    if known and arch.removesuffix("a") not in known:
        raise BadInput(f"--arch {arch}: not a target this nvcc builds for (it builds "
                       f"{', '.join(known)})")
    return arch


@functools.cache
def nvcc_targets() -> tuple[str, ...]:
    """The GPU targets the nvcc on PATH builds for (``nvcc --list-gpu-code``), or () where
    there is no nvcc or it cannot say (the compile then says what is wrong)."""
    exe = shutil.which("nvcc")
    if exe is None:
        return ()
    try:
        out = subprocess.run([exe, "--list-gpu-code"], capture_output=True, text=True,
                             timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(w for w in out.split() if _ARCH.fullmatch(w))


def target_arch(stage: Stage, arch: str) -> str:
    """The arch a stage is built for on a device of ``arch`` (``sm_90``): the arch-specific
    target (``sm_90a``) for a stage that asks for it, the device's arch otherwise."""
    return f"{arch}a" if stage.arch_specific and not arch.endswith("a") else arch


def _sources(path: Path, dirs: list[Path], seen: dict[Path, bytes]) -> None:
    text = path.read_bytes()
    seen[path] = text
    for quoted, angled in _INCLUDE.findall(text.decode("utf-8", "replace")):
        name = quoted or angled
        # <name> is looked for in the -I folders only; what none holds is a system or
        # header-library file (a library's version is in the hash on its own).
        for d in ([path.parent, *dirs] if quoted else dirs):
            cand = (d / name).resolve()
            if cand.is_file():
                if cand not in seen:
                    _sources(cand, dirs, seen)
                break


def kernel_sources(stage: Stage) -> dict[Path, bytes]:
    """The kernel file and every local header it includes, with their contents."""
    seen: dict[Path, bytes] = {}
    _sources(kernel_path(stage).resolve(), include_dirs(stage), seen)
    return seen


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
#: Attributes with arguments between ``void`` and a kernel's name (launch bounds, a
#: cluster's shape), which the entry patterns below would otherwise take for the name.
_BOUNDS = re.compile(r"(?:__launch_bounds__|__cluster_dims__)\s*\([^)]*\)")
#: ``extern "C" __global__ void [ATTRIBUTES] name(``: an entry function, the extern on it.
_EXTERN_ENTRY = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:\w+\s+)*?(\w+)\s*\(')
#: ``__global__ void [ATTRIBUTES] name(``, for the kernels inside an ``extern "C" { }`` block.
_ENTRY = re.compile(r"__global__\s+void\s+(?:\w+\s+)*?(\w+)\s*\(")
_EXTERN_BLOCK = re.compile(r'extern\s+"C"\s*\{')


def code_of(stage: Stage) -> bytes:
    """The stage's kernel sources (the ``.cu`` and the headers it includes) without their
    comments: what the compiler reads."""
    return b"\n".join(_COMMENT.sub(" ", t.decode("utf-8", "replace")).encode()
                      for t in kernel_sources(stage).values())


def _entry_functions(text: str) -> set[str]:
    """The ``extern "C"`` kernels a source defines (comments, launch bounds and cluster
    shapes ignored)."""
    code = _BOUNDS.sub(" ", _COMMENT.sub(" ", text))
    names = set(_EXTERN_ENTRY.findall(code))
    for m in _EXTERN_BLOCK.finditer(code):
        depth, end = 0, len(code)
        for i in range(m.end() - 1, len(code)):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                end = i
                break
        names.update(_ENTRY.findall(code, m.end(), end))
    return names


def entry_functions(stage: Stage) -> set[str]:
    """Every ``extern "C"`` kernel in the stage's ``.cu`` file and the headers it includes:
    the names a launch can look up in the compiled module."""
    names: set[str] = set()
    for text in kernel_sources(stage).values():
        names |= _entry_functions(text.decode("utf-8", "replace"))
    return names


def missing_entry_points(stage: Stage) -> list[str]:
    """The declared ``entry_points`` that no ``extern "C"`` kernel of the sources defines."""
    found = entry_functions(stage)
    return [e for e in stage.entry_points if e not in found]


def defines(stage: Stage, variant: Variant) -> list[str]:
    """The ``-D`` options of a build: ``-DBLOCK=<stage.block>`` (unless the variant defines
    BLOCK itself, as a tuning sweep's ``--define BLOCK=...`` does), then the variant's."""
    own = variant.options()
    if any(name == "BLOCK" for name, _ in variant.defines):
        return own
    return [f"-DBLOCK={stage.block}", *own]


def compile_flags(stage: Stage, variant: Variant) -> list[str]:
    """The options that shape the generated code (base options, the stage's own, defines):
    what every compilation passes and the kernel hash covers."""
    return [*BASE_OPTIONS, *stage.nvcc_options, *defines(stage, variant)]


def kernel_hash(stage: Stage, variant: Variant) -> str:
    """16 hex digits over the sources (by file name) and the build's compile flags."""
    h = hashlib.sha256()
    for path, text in sorted(kernel_sources(stage).items(), key=lambda kv: kv[0].name):
        h.update(path.name.encode() + b"\0" + text + b"\0")
    h.update(" ".join(compile_flags(stage, variant)).encode())
    if stage.arch_specific or stage.header_libraries:  # so older hashes stay as they were
        h.update(b"\0arch_specific" if stage.arch_specific else b"\0")
        h.update(" ".join(library_versions(stage)).encode())
    return h.hexdigest()[:16]


def options(stage: Stage, variant: Variant) -> list[str]:
    """nvcc options for a variant (compile flags and include folders), the arch excepted."""
    return [*compile_flags(stage, variant),
            *(f"-I{d}" for d in [*include_dirs(stage), *library_dirs(stage)])]


@dataclass(frozen=True)
class KernelResources:
    """What ``ptxas -v`` says of one entry function."""

    function: str
    registers: int
    smem_bytes: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int


_FUNC = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def parse_ptxas(log: str) -> list[KernelResources]:
    """Parse ``nvcc -Xptxas -v`` output into one record per entry function."""
    out: list[KernelResources] = []
    func = None
    props = (0, 0, 0)
    for line in log.splitlines():
        if m := _FUNC.search(line):
            func, props = m.group(1), (0, 0, 0)
        elif (m := _PROPS.search(line)) and func:
            props = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := _USED.search(line)) and func:
            out.append(KernelResources(func, int(m.group(1)), int(m.group(2) or 0), *props))
            func = None
    return out


def _nvcc(stage: Stage, variant: Variant, what: Sequence[str], out: Path, arch: str,
          nvcc: str | None) -> str:
    """nvcc with ``what`` (``-cubin``, ``-ptx``, ...) over the variant as the harness builds
    it for a device of ``arch``, into ``out`` (no GPU needed); nvcc's log. CompileError with
    the log when the kernel does not compile."""
    exe = nvcc or shutil.which("nvcc")
    if exe is None:
        raise HarnessError("nvcc not found on PATH (needed to compile the kernels)")
    cmd = [exe, *what, f"-arch={target_arch(stage, arch)}", *options(stage, variant),
           "-o", str(out), str(kernel_path(stage))]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise CompileError(f"{stage.name} [{variant.name}] does not compile (nvcc exit "
                           f"{proc.returncode})", detail=log)
    return log


def compile_cubin(stage: Stage, variant: Variant, cubin: Path, arch: str = "sm_90",
                  nvcc: str | None = None) -> str:
    """Compile the variant to ``cubin`` with ``nvcc -Xptxas -v`` (no GPU needed), as the
    harness builds it for a device of ``arch``; nvcc's log. CompileError with the log when
    the kernel does not compile."""
    return _nvcc(stage, variant, ("-cubin", "-Xptxas", "-v"), cubin, arch, nvcc)


def nvcc_report(stage: Stage, variant: Variant, arch: str = "sm_90",
                nvcc: str | None = None) -> list[KernelResources]:
    """Compile to a cubin with ``nvcc -Xptxas -v`` (no GPU needed) and parse the report.

    Raises CompileError with the nvcc log when the kernel does not compile.
    """
    with tempfile.TemporaryDirectory() as tmp:
        return parse_ptxas(compile_cubin(stage, variant, Path(tmp) / "k.cubin", arch, nvcc))


#: A PTX entry's header: ``.entry NAME(`` and its parameter list up to ``)``.
_PTX_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\((.*?)\)", re.S)
#: One PTX parameter, its name dropped: ``.param .u64 .ptr .align 1 X`` -> ``.u64 .ptr
#: .align 1``; an array (a struct by value) keeps its byte count, ``.b8 X[128]`` -> ``.b8[128]``.
_PTX_PARAM = re.compile(r"\.param\s+(.*?)\s*([A-Za-z_$][\w$]*)\s*(\[\d+\])?\s*$")


def parse_entry_params(ptx: str) -> dict[str, tuple[str, ...]]:
    """Each ``.entry`` of a PTX text and its parameters' types, in order (names dropped)."""
    out: dict[str, tuple[str, ...]] = {}
    for m in _PTX_ENTRY.finditer(ptx):
        params = []
        for part in m.group(2).split(","):
            if (p := _PTX_PARAM.search(part.strip())) is not None:
                params.append(p.group(1) + (p.group(3) or ""))
        out[m.group(1)] = tuple(params)
    return out


def entry_params(stage: Stage, variant: Variant, arch: str = "sm_90",
                 nvcc: str | None = None) -> dict[str, tuple[str, ...]]:
    """The variant's entry points and their parameters' types, from ``nvcc -ptx`` (no GPU
    needed): what a launch must match. CompileError with the log where it does not
    compile."""
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "k.ptx"
        _nvcc(stage, variant, ("-ptx",), ptx, arch, nvcc)
        return parse_entry_params(ptx.read_text())
