"""``harness sass``: what a stage variant's build is made of, without a GPU. The build is
compiled as the harness compiles it (its variant's defines, ``--define`` values over them,
the arch of the device named), disassembled with ``cuobjdump -sass``, and each of the
stage's entry points is counted by opcode. A tensor-core stage's entry point with no MMA
instruction is named: ptxas removes an MMA whose results nothing reads, and a diagnostic
build that leaves a step out can lose its tensor work that way without a warning."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.contract.datasheet import TENSOR_CORE_RATES
from harness.contract.kernel import check_arch, compile_cubin, target_arch
from harness.contract.registry import Registry
from harness.engine.jobs import one_variant
from harness.errors import BadInput
from harness.tools import sass as disasm


@dataclass(frozen=True)
class SassReport:
    """A build's entry points, counted; the notes on them; the whole listing."""

    stage: str
    #: The build: the variant's name, with the ``--define`` values (``int8[IG_PROMOTE=0]``).
    variant: str
    arch: str
    functions: tuple[disasm.FunctionCode, ...]
    notes: tuple[str, ...]
    listing: str


def sass(reg: Registry, stage: str, *, variant: str | None = None,
         defines: Sequence[str] = (), arch: str = "sm_90") -> SassReport:
    """Compile the stage's variant (its first by default) with ``defines`` (``NAME=V``, one
    value each) for ``arch`` and count its entry points' instructions."""
    check_arch(arch)
    st = reg.get(stage)
    v = one_variant(st, variant, {}, defines)
    exe = disasm.find()  # before the compile: a missing tool is said at once
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        compile_cubin(st, v, cubin, arch)
        listing = disasm.disassemble(cubin, exe)
    parsed = disasm.parse(listing)
    found = {f.name: f for f in parsed}
    if len(found) < len(parsed):
        raise BadInput(f"{st.name} [{v.name}]: the listing names a function twice (a cubin "
                       "of several archs?); give one --arch")
    missing = [e for e in st.entry_points if e not in found]
    if missing:
        raise BadInput(f"{st.name} [{v.name}]: the cubin has no function "
                       f"{', '.join(missing)} (an entry point the plugin declares)")
    functions = tuple(found[e] for e in st.entry_points)
    notes = ()
    if st.compute_peak in TENSOR_CORE_RATES:
        notes = tuple(f"{f.name} has no tensor-core MMA instruction, though {st.name}'s "
                      f"arithmetic is {st.compute_peak}: its timings would not be of "
                      "tensor work" for f in functions if f.mma == 0)
    return SassReport(st.name, v.name, target_arch(st, arch), functions, notes, listing)
