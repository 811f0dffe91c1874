"""Device memory of a run and its poisoning: what an element the kernel did not write, or a
byte it wrote past an output's end, looks like.

The poison rule lives here once: :func:`poison` writes it on the device (on a stream, or at
once), :func:`poisoned` is the same bytes on the host (for checks and fakes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.contract.backend import RunResult
from harness.contract.stage import Point, Stage, workspace

#: Poison written over every output before a launch: a NaN for floats, a value outside any
#: valid range for int32, -91 for int8. An element the kernel does not write fails validation.
POISON32 = 0x7FA5A5A5
POISON8 = 0xA5
#: The second poison (``pattern=1``), of another value in every byte (a NaN again, 90 for
#: int8): a run repeated under it differs from the first wherever the kernel left an
#: element unwritten, even where the first poison is a value the element may rightly hold
#: (-91 as an int8 weight, any 32-bit word of packed planes).
POISONS32 = (POISON32, 0x7FDA5A5A)
POISONS8 = (POISON8, 0x5A)
#: Poisoned bytes allocated past the end of every output: a write there is reported.
GUARD = 4096


def alloc(drv: Any, nbytes: int) -> Any:
    """A device allocation of ``nbytes`` (at least one byte: CUDA refuses zero)."""
    return drv.mem_alloc(max(int(nbytes), 1))


def poison(drv: Any, buf: Any, dtype: Any, nbytes: int, stream: Any = None,
           pattern: int = 0) -> None:
    """Fill ``nbytes`` of ``buf``, which holds ``dtype`` elements, with the poison (the
    second one for ``pattern=1``): 32-bit words for 4-byte types, bytes otherwise. Enqueued
    on ``stream``, or done at once (before any stream touches the buffer) when ``stream``
    is None."""
    if np.dtype(dtype).itemsize == 4:
        if stream is None:
            drv.memset_d32(buf, POISONS32[pattern], nbytes // 4)
        else:
            drv.memset_d32_async(buf, POISONS32[pattern], nbytes // 4, stream)
    elif stream is None:
        drv.memset_d8(buf, POISONS8[pattern], nbytes)
    else:
        drv.memset_d8_async(buf, POISONS8[pattern], nbytes, stream)


def poisoned_bytes(dtype: Any, nbytes: int, pattern: int = 0) -> np.ndarray:
    """The bytes :func:`poison` leaves in ``nbytes`` of memory holding ``dtype``."""
    if np.dtype(dtype).itemsize == 4:
        return np.full(nbytes // 4, POISONS32[pattern], dtype="<u4").view(np.uint8)
    return np.full(nbytes, POISONS8[pattern], dtype=np.uint8)


def poisoned(shape: tuple[int, ...], dtype: Any, pattern: int = 0) -> np.ndarray:
    """A host array of ``shape`` and ``dtype`` holding what :func:`poison` writes."""
    dt = np.dtype(dtype)
    return poisoned_bytes(dt, int(np.prod(shape)) * dt.itemsize, pattern).view(dt).reshape(
        shape)


def guard_pattern(dtype: np.dtype, pattern: int = 0) -> np.ndarray:
    """The bytes of an untouched guard band after an output of ``dtype``."""
    return poisoned_bytes(dtype, GUARD, pattern)


def _nbytes(shape: tuple[int, ...], dtype: Any) -> int:
    return int(np.prod(shape)) * np.dtype(dtype).itemsize


@dataclass
class Buffers:
    """Device allocations of one run: inputs, outputs, and what the outputs look like.

    Every output not written in place has a guard band of :data:`GUARD` poisoned bytes past
    its end; :meth:`download` reports how many of them changed.
    """

    drv: Any
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    specs: dict[str, tuple[tuple[int, ...], np.dtype]]
    #: Outputs written in place into an input's buffer: not allocated, not poisoned.
    aliased: frozenset[str] = frozenset()
    #: The stage's scratch (``Stage.workspace``): passed to the launch, never read back.
    work: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def allocate(cls, drv: Any, stage: Stage, inputs: Mapping[str, np.ndarray],
                 point: Point) -> Buffers:
        """Allocate a run of ``stage`` at ``point`` and upload ``inputs``; on failure, what
        was allocated is freed before the error goes on."""
        bufs = cls(drv, {}, {}, stage.outputs(point), frozenset(stage.inplace))
        try:
            for name, arr in inputs.items():
                bufs.inputs[name] = alloc(drv, arr.nbytes)
            bufs.upload(inputs)
            for name, (shape, dtype) in bufs.specs.items():
                if name in stage.inplace:
                    bufs.outputs[name] = bufs.inputs[stage.inplace[name]]
                else:
                    bufs.outputs[name] = alloc(drv, _nbytes(shape, dtype) + GUARD)
            for name, (shape, dtype) in workspace(stage, point).items():
                bufs.work[name] = alloc(drv, _nbytes(shape, dtype))
                if name in stage.zeroed:  # the kernel keeps it zero from here on
                    drv.memset_d8(bufs.work[name], 0, _nbytes(shape, dtype))
        except BaseException:
            bufs.free()
            raise
        return bufs

    def all(self) -> dict[str, Any]:
        """Every buffer by name: what a plugin's ``launch`` gets as ``bufs``."""
        return {**self.inputs, **self.outputs, **self.work}

    def upload(self, inputs: Mapping[str, np.ndarray]) -> None:
        """Copy the host inputs into their device buffers (synchronous)."""
        for name, arr in inputs.items():
            self.drv.memcpy_htod(self.inputs[name], np.ascontiguousarray(arr))

    def poison(self, stream: Any, pattern: int = 0) -> None:
        """Enqueue the poison (the second one for ``pattern=1``) over every allocated
        output and its guard band."""
        for name, (shape, dtype) in self.specs.items():
            if name not in self.aliased:
                poison(self.drv, self.outputs[name], dtype, _nbytes(shape, dtype) + GUARD,
                       stream, pattern)

    def download(self, inputs: Mapping[str, np.ndarray], pattern: int = 0) -> RunResult:
        """Outputs and inputs read back, with the damage to each guard band (poisoned with
        ``pattern``; synchronous: call it after the stream is synchronised)."""
        outs, damage = {}, {}
        for name, (shape, dtype) in self.specs.items():
            outs[name] = np.empty(shape, dtype=dtype)
            self.drv.memcpy_dtoh(outs[name], self.outputs[name])
            if name not in self.aliased:
                tail = np.empty(GUARD, dtype=np.uint8)
                self.drv.memcpy_dtoh(tail, int(self.outputs[name]) + outs[name].nbytes)
                damage[name] = int((tail != guard_pattern(np.dtype(dtype), pattern)).sum())
        after = {}
        for name, arr in inputs.items():
            after[name] = np.empty_like(arr)
            self.drv.memcpy_dtoh(after[name], self.inputs[name])
        return RunResult(outs, after, damage)

    def free(self) -> None:
        """Free every allocation this run owns (an aliased output is its input's)."""
        owned = [*self.inputs.values(), *self.work.values(),
                 *(a for n, a in self.outputs.items() if n not in self.aliased)]
        for a in owned:
            a.free()
