"""Kernel sources, their hashes, and compilation (nvcc report on the CPU, PyCUDA on the GPU).

The kernel hash covers the ``.cu`` file, every header it includes (recursively, from the
kernel's folder and ``kernels/common``) and the variant's ``-D`` options: what the validation
ledger records and ``harness ledger --check`` recomputes.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.contract.stage import Stage, Variant
from harness.errors import CompileError, HarnessError

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
#: Options every build gets: line info for Nsight Compute's source view; it costs no speed.
BASE_OPTIONS = ("-lineinfo",)


def kernel_path(stage: Stage) -> Path:
    """The stage's ``.cu`` file."""
    if stage.kernel_dir is None:
        raise HarnessError(f"stage {stage.name} has no kernel_dir (not loaded by the registry)")
    return Path(stage.kernel_dir) / stage.kernel


def include_dirs(stage: Stage) -> list[Path]:
    """Folders searched for ``#include "..."``: the kernel's own, its ``common/``, and the
    built-in ``kernels/common`` (shared helpers for kernels kept elsewhere)."""
    k = kernel_path(stage).parent
    dirs = [k, k / "common", paths.kernels_dir() / "common"]
    return [d for i, d in enumerate(dirs) if d not in dirs[:i]]


def _sources(path: Path, dirs: list[Path], seen: dict[Path, bytes]) -> None:
    text = path.read_bytes()
    seen[path] = text
    for name in _INCLUDE.findall(text.decode("utf-8", "replace")):
        for d in [path.parent, *dirs]:
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


def kernel_hash(stage: Stage, variant: Variant) -> str:
    """16 hex digits over the sources (by file name) and the variant's options."""
    h = hashlib.sha256()
    for path, text in sorted(kernel_sources(stage).items(), key=lambda kv: kv[0].name):
        h.update(path.name.encode() + b"\0" + text + b"\0")
    h.update(" ".join([*BASE_OPTIONS, *variant.options()]).encode())
    return h.hexdigest()[:16]


def options(stage: Stage, variant: Variant) -> list[str]:
    """nvcc options for a variant (defines and include folders), the arch excepted."""
    return [*BASE_OPTIONS, *variant.options(), *(f"-I{d}" for d in include_dirs(stage))]


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


def nvcc_report(stage: Stage, variant: Variant, arch: str = "sm_90",
                nvcc: str | None = None) -> list[KernelResources]:
    """Compile to a cubin with ``nvcc -Xptxas -v`` (no GPU needed) and parse the report.

    Raises CompileError with the nvcc log when the kernel does not compile.
    """
    exe = nvcc or shutil.which("nvcc")
    if exe is None:
        raise HarnessError("nvcc not found on PATH (needed by harness check)")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [exe, "-cubin", f"-arch={arch}", "-Xptxas", "-v", *options(stage, variant),
               "-o", str(Path(tmp) / "k.cubin"), str(kernel_path(stage))]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise CompileError(f"{stage.name} [{variant.name}] does not compile (nvcc exit "
                           f"{proc.returncode})", detail=log)
    return parse_ptxas(log)


def compile_module(stage: Stage, variant: Variant, arch: str) -> Any:
    """Build the kernel with PyCUDA's SourceModule in the current context.

    Needs a context (``harness.backends.pycuda.context``); raises CompileError with the nvcc log on failure.
    """
    from pycuda import driver
    from pycuda.compiler import SourceModule

    src = kernel_path(stage).read_text()
    opts = [*BASE_OPTIONS, *variant.options()]
    try:
        return SourceModule(src, options=opts, arch=arch, no_extern_c=True,
                            include_dirs=[str(d) for d in include_dirs(stage)])
    except driver.CompileError as exc:
        raise CompileError(f"{stage.name} [{variant.name}] does not compile",
                           detail=str(getattr(exc, "stderr", "") or exc)) from exc
