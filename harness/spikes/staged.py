"""SPEC steps 1-3 through the staged kernels, as the seed program enqueues them: one helper
for the pipelines that run them (spike_quant_gemm, activation_path's ``staged`` variant).

dynamic_spikes, find_min_max and transform_absmax on stream 0, then ``T`` read back by the
host after the transform (the seed program's host-side decision), then spike_encode with ``T``
planes. The caller marks ``start`` on stream 0 first; this marks ``dyn_end``, ``mm_end``,
``tr_end``, ``enc_start`` and ``enc_end``, the events of ``INTERVALS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.api import PipelineContext
from harness.spikes import spec

#: The seed program's activation-path intervals over the marks ``enqueue`` makes.
INTERVALS: dict[str, tuple[tuple[str, str], ...]] = {
    "dynamic_spikes": (("start", "dyn_end"),),
    "encoding_kernels": (("dyn_end", "mm_end"), ("mm_end", "tr_end"), ("enc_start", "enc_end")),
    "encoding_total": (("dyn_end", "enc_end"),),
}


@dataclass(frozen=True)
class Buffers:
    """The device buffers of steps 1-3 (``q`` holds ``v = q - o`` after the transform)."""

    q: Any
    vth: Any
    mm: Any
    off: Any
    amax: Any


def alloc(ctx: PipelineContext, batch: int, in_f: int) -> Buffers:
    """Steps 1-3's buffers, taken before the run's first mark (as the seed program allocates
    them before its timed region); the planes are taken once the host knows ``T``."""
    mm, off, amax = (ctx.alloc(s, np.int32) for s in ((2,), (1,), (1,)))
    return Buffers(ctx.alloc((batch, in_f), np.int32), ctx.alloc((batch,), np.float32),
                   mm, off, amax)


def enqueue(ctx: PipelineContext, x: Any, at: dict[str, Any], bufs: Buffers) -> tuple[Any, int]:
    """Steps 1-3 on stream 0 at the point ``at`` (``batch``, ``in_f``, ``k``, ``mode``, and
    any other axes the steps take); returns the planes buffer and ``T``."""
    b, f = int(at["batch"]), int(at["in_f"])
    q = bufs.q
    ctx.step("dynamic_spikes", "default", 0, {"x": x, "q": q, "vth": bufs.vth}, **at)
    ctx.mark("dyn_end", 0)
    ctx.step("find_min_max", "default", 0, {"q": q, "mm": bufs.mm}, **at)
    ctx.mark("mm_end", 0)
    ctx.step("transform_absmax", "default", 0,
             {"q": q, "mm": bufs.mm, "o": bufs.off, "amax": bufs.amax, "v": q}, **at)
    ctx.mark("tr_end", 0)
    planes = spec.planes(int(ctx.read(bufs.amax, (1,), np.int32, 0)[0]),
                         at["mode"])  # the host's decision
    spikes = ctx.alloc((planes, b, f), np.int8)
    ctx.mark("enc_start", 0)
    ctx.step("spike_encode", at["mode"], 0, {"v": q, "spikes": spikes}, planes=planes, **at)
    ctx.mark("enc_end", 0)
    return spikes, planes
