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
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
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
    #: Instructions of the innermost loop that holds an MMA computing something (the
    #: shortest backward branch's range around one); None where no loop holds one. In a
    #: GEMM it is the main loop: what each K step costs to issue.
    mma_loop: int | None = None

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


_BRANCH = re.compile(r"^BRA\S*\s+(?:`\(\S+\)\s*)?(0x[0-9a-f]+)")


class _Function:
    """A function being read: its opcodes, null MMAs, and addresses for the loop."""

    def __init__(self, name: str) -> None:
        self.name, self.ops, self.null = name, Counter[str](), 0
        self.addresses: list[int] = []
        self.mma_at: list[int] = []
        self.back: list[tuple[int, int]] = []  # (branch target, branch address)

    def add(self, address: int, text: str) -> None:
        text = _PREDICATE.sub("", text)
        words = text.split(None, 1)
        op = words[0].split(".")[0]
        self.ops[op] += 1
        self.addresses.append(address)
        if op in MMA_OPCODES:
            if len(words) > 1 and words[1].split(",")[0].strip() == "RZ":
                self.null += 1  # its result goes nowhere
            else:
                self.mma_at.append(address)
        if (b := _BRANCH.match(text)) and int(b.group(1), 16) <= address:
            self.back.append((int(b.group(1), 16), address))

    def done(self) -> FunctionCode:
        loops = [(hi - lo, lo, hi) for lo, hi in self.back
                 if any(lo <= a <= hi for a in self.mma_at)]
        n = None
        if loops:
            _, lo, hi = min(loops)
            n = sum(lo <= a <= hi for a in self.addresses)
        return FunctionCode(self.name, self.ops, self.null, n)


def parse(listing: str) -> list[FunctionCode]:
    """The functions of a ``cuobjdump -sass`` listing, in order, their opcodes counted."""
    out: list[FunctionCode] = []
    fn: _Function | None = None
    for line in listing.splitlines():
        if m := _FUNCTION.match(line):
            if fn is not None:
                out.append(fn.done())
            fn = _Function(m.group(1))
        elif fn is not None and (m := _INSTRUCTION.match(line)):
            fn.add(int(m.group(1), 16), m.group(2))
    if fn is not None:
        out.append(fn.done())
    return out


def disassemble(cubin: Path, exe: str | None = None, timeout_s: float = 120) -> str:
    """``cuobjdump -sass`` of ``cubin``; a one-line HarnessError when it fails."""
    proc = process.run([exe or find(), "-sass", str(cubin)], "cuobjdump", timeout_s)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise HarnessError(f"cuobjdump -sass failed (exit {proc.returncode}): {last[0]}")
    return proc.stdout
