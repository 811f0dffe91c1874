"""Compiling CUDA source into PyCUDA modules: a stage variant's kernel, cached by its hash,
and the backend's own timing kernels.

Compilation needs a current context (``harness.backends.pycuda.context``) and happens on
first use, outside any timed region.
"""

from __future__ import annotations

from typing import Any

from harness import paths
from harness.contract.kernel import (
    compile_flags,
    include_dirs,
    kernel_hash,
    kernel_path,
    library_dirs,
    target_arch,
)
from harness.contract.stage import Stage, Variant
from harness.errors import CompileError


def compile_module(stage: Stage, variant: Variant, arch: str) -> Any:
    """Build the kernel with PyCUDA's SourceModule in the current context.

    Needs a context (``harness.backends.pycuda.context``); raises CompileError with the nvcc
    log on failure.
    """
    from pycuda import driver
    from pycuda.compiler import SourceModule

    src = kernel_path(stage).read_text()
    try:
        return SourceModule(src, **_build_args(stage, variant, arch))
    except driver.CompileError as exc:
        raise CompileError(f"{stage.name} [{variant.name}] does not compile",
                           detail=str(getattr(exc, "stderr", "") or exc)) from exc


def _build_args(stage: Stage, variant: Variant, arch: str) -> dict[str, Any]:
    """What SourceModule and PyCUDA's compile get: flags, the stage's target arch, includes."""
    return {"options": compile_flags(stage, variant), "arch": target_arch(stage, arch),
            "no_extern_c": True,
            "include_dirs": [str(d) for d in [*include_dirs(stage), *library_dirs(stage)]]}


def compile_cubin(stage: Stage, variant: Variant, arch: str) -> bytes:
    """The cubin of a stage variant, built as ``compile_module`` builds it (PyCUDA's disk
    cache makes the second build a look-up): read for a kernel's parameter layout."""
    from pycuda.compiler import compile as pycuda_compile

    return pycuda_compile(kernel_path(stage).read_text(), **_build_args(stage, variant, arch))


def compile_timing_kernels(arch: str) -> Any:
    """The module of the backend's own timing kernels (``timing.cu``: the stream hold, the
    L2 flush, the clock probe, the gate and the read/write mix)."""
    from pycuda.compiler import SourceModule

    src = (paths.harness_cuda_dir() / "timing.cu").read_text()
    return SourceModule(src, no_extern_c=True, arch=arch)


class ModuleCache:
    """Compiled modules of one device, one per (stage, variant, kernel hash): a kernel is
    compiled once per process, and again only when its sources or defines change."""

    def __init__(self, arch: str) -> None:
        self.arch = arch
        self._modules: dict[tuple[str, str, str], Any] = {}
        self._cubins: dict[tuple[str, str, str], bytes] = {}

    def get(self, stage: Stage, variant: Variant) -> Any:
        """The compiled module of a stage variant (compiled on first use, then cached)."""
        key = (stage.name, variant.name, kernel_hash(stage, variant))
        if key not in self._modules:
            self._modules[key] = compile_module(stage, variant, self.arch)
        return self._modules[key]

    def cubin(self, stage: Stage, variant: Variant) -> bytes:
        """The cubin of a stage variant's module (built on first use, then cached)."""
        key = (stage.name, variant.name, kernel_hash(stage, variant))
        if key not in self._cubins:
            self._cubins[key] = compile_cubin(stage, variant, self.arch)
        return self._cubins[key]
