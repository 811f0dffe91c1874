"""The machine code of a cubin, by ``cuobjdump -sass``: each function's instructions counted
by opcode, so that what a build runs can be read without a GPU (a diagnostic build whose
MMAs ptxas removed as dead code shows none)."""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.tools import process

#: Opcodes of the tensor cores' matrix multiply-adds through sm_90: Hopper's warpgroup ones
#: and mma.sync's (QMMA: Ada's FP8). Blackwell's tensor-memory MMAs are not listed.
MMA_OPCODES = frozenset({"HGMMA", "IGMMA", "QGMMA", "BGMMA", "HMMA", "IMMA", "QMMA", "DMMA",
                         "BMMA"})

_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$")
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


@dataclass(frozen=True)
class FunctionCode:
    """One function's instructions, counted by opcode (``IGMMA.64x128x32.S8.S8`` counts as
    ``IGMMA``)."""

    name: str
    opcodes: Counter[str]
    #: MMAs that compute nothing: ptxas's placeholders (``HGMMA.64x8x16.F16 RZ,
    #: gdesc[URZ], RZ``), left where a warpgroup's arrive and wait remain after the real
    #: MMAs were removed.
    null_mma: int = 0

    @property
    def instructions(self) -> int:
        """Every instruction of the function (NOPs and the trailing branch-to-self too)."""
        return sum(self.opcodes.values())

    @property
    def mma(self) -> int:
        """Its tensor-core matrix multiply-adds that compute something."""
        return sum(n for op, n in self.opcodes.items() if op in MMA_OPCODES) - self.null_mma


def find() -> str:
    """cuobjdump: ``$CUOBJDUMP`` where set, else on PATH; a one-line error when missing."""
    given = os.environ.get("CUOBJDUMP")
    if given:
        found = shutil.which(given)
        if found is None:
            raise HarnessError(f"CUOBJDUMP={given} is not an executable file")
        return found
    return process.executable("cuobjdump", "not found on PATH (set CUOBJDUMP to its path: "
                                           "the CUDA toolkit's, or a wheel's)")


def parse(listing: str) -> list[FunctionCode]:
    """The functions of a ``cuobjdump -sass`` listing, in order, their opcodes counted."""
    out: list[FunctionCode] = []
    name, ops, null = None, Counter[str](), 0
    for line in listing.splitlines():
        if m := _FUNCTION.match(line):
            if name is not None:
                out.append(FunctionCode(name, ops, null))
            name, ops, null = m.group(1), Counter(), 0
        elif name is not None and (m := _INSTRUCTION.match(line)):
            words = _PREDICATE.sub("", m.group(1)).split(None, 1)
            op = words[0].split(".")[0]
            ops[op] += 1
            if op in MMA_OPCODES and len(words) > 1 and words[1].split(",")[0].strip() == "RZ":
                null += 1  # its result goes nowhere
    if name is not None:
        out.append(FunctionCode(name, ops, null))
    return out


def disassemble(cubin: Path, exe: str | None = None, timeout_s: float = 120) -> str:
    """``cuobjdump -sass`` of ``cubin``; a one-line HarnessError when it fails."""
    proc = process.run([exe or find(), "-sass", str(cubin)], "cuobjdump", timeout_s)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise HarnessError(f"cuobjdump -sass failed (exit {proc.returncode}): {last[0]}")
    return proc.stdout
