"""SPEC steps 1-3 alone, end to end: the staged kernels (dynamic_spikes, find_min_max,
transform_absmax, then ``T`` read back by the host and spike_encode) against the fused
stage (activation_fused: ``T`` decided on the device, nothing read back). Its rows compare
with the activation path's targets (stated at k = 4) and with the torch peers of
activation_fused. The variant pins ``path``; both run on stream 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import (
    Axis,
    Comparison,
    Exact,
    Pipeline,
    PipelineContext,
    PipelineTrace,
    Point,
    Variant,
)
from harness.spikes import axes, cases, families, spec, staged
from harness.spikes.tolerances import VTH

PATHS = ("staged", "fused")
STEPS = ("dynamic_spikes", "find_min_max", "transform_absmax", "spike_encode",
         "activation_fused")


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Activations ``x [batch, in_f]`` of the family."""
    return {"x": families.activations(rng, family, p["batch"], p["in_f"], p["k"])}


def _staged(ctx: PipelineContext, x: Any, p: Point) -> PipelineTrace:
    b, f = int(p["batch"]), int(p["in_f"])
    act = staged.alloc(ctx, b, f)
    ctx.mark("start", 0)
    spikes, planes = staged.enqueue(ctx, x, {"batch": b, "in_f": f, "k": p["k"],
                                             "mode": p["mode"]}, act)
    ctx.mark("end", 0)
    outputs = {"vth": (act.vth, (b,), np.dtype(np.float32)),
               "mm": (act.mm, (2,), np.dtype(np.int32)),
               "o": (act.off, (1,), np.dtype(np.int32)),
               "spikes": (spikes, (planes, b, f), np.dtype(np.int8))}
    intervals = {**staged.INTERVALS, "total": (("start", "end"),)}
    return PipelineTrace(outputs, {"planes": planes}, intervals)


def _fused(ctx: PipelineContext, x: Any, p: Point) -> PipelineTrace:
    b, f, mode = int(p["batch"]), int(p["in_f"]), p["mode"]
    cap = spec.plane_bound(p["k"], f, mode)
    vth = ctx.alloc((b,), np.float32)
    stats = ctx.alloc((4,), np.int32)
    spikes = ctx.alloc((cap, b, f), np.int8)
    q8 = ctx.alloc((b, f), np.int8)
    ctx.mark("start", 0)
    ctx.step("activation_fused", mode, 0, {"x": x, "vth": vth, "stats": stats,
                                            "spikes": spikes, "q8": q8},
             batch=b, in_f=f, k=p["k"])
    ctx.mark("end", 0)
    outputs = {"vth": (vth, (b,), np.dtype(np.float32)),
               "stats": (stats, (4,), np.dtype(np.int32)),
               "spikes": (spikes, (cap, b, f), np.dtype(np.int8))}
    return PipelineTrace(outputs, {}, {"total": (("start", "end"),)})


def run(ctx: PipelineContext, bufs: Mapping[str, Any], p: Point) -> PipelineTrace:
    """Enqueue one pass of the path the point names."""
    return _staged(ctx, bufs["x"], p) if p["path"] == "staged" else _fused(ctx, bufs["x"], p)


def reference(ins: Mapping[str, np.ndarray], p: Point,
              vth: np.ndarray | None = None) -> dict[str, Any]:
    """The chained references of steps 1-3; ``vth`` given: judged on that ``vth``."""
    c = spec.activation_chain(ins["x"], p["k"], p["mode"], vth)
    return {**c, "spikes": spec.encode(c["v"], c["planes"], p["mode"])}


def check(ins: Mapping[str, np.ndarray], p: Point, got: Mapping[str, np.ndarray],
          host: Mapping[str, Any]) -> list[Comparison]:
    """vth, [qmin, qmax], o, T and the planes against the chained references (the integers
    judged on the run's own vth); the fused path's planes cut to its own T."""
    ref = reference(ins, p, got["vth"])
    exact = Exact("integers: exact, judged on the run's own vth")
    if "stats" in got:
        mm, o, t = got["stats"][:2], int(got["stats"][2]), int(got["stats"][3])
        spikes = got["spikes"][:t] if 0 <= t <= got["spikes"].shape[0] else got["spikes"]
    else:
        mm, o, t, spikes = got["mm"], int(got["o"][0]), int(host["planes"]), got["spikes"]
    comps = [VTH.compare("vth", got["vth"], ref["vth64"]),
             exact.compare("[qmin, qmax]", np.asarray(mm), ref["mm"]),
             exact.compare("o", np.array([o]), np.array([ref["o"]])),
             exact.compare("T", np.array([t]), np.array([ref["planes"]]))]
    if t == ref["planes"]:
        comps.append(exact.compare("spikes", spikes, ref["spikes"]))
    return comps



STAGE = Pipeline(
    name="activation_path",
    steps=STEPS,
    description="steps 1-3 end to end: the staged kernels vs the fused stage",
    axes=(
        axes.BATCH,
        axes.IN_F,
        Axis("k", 4.0, float, "threshold divisor (4: the targets' k)", minimum=1e-30),
        axes.mode(),
        Axis("path", "staged", str, "staged kernels or the fused stage (set by the variant)",
             choices=PATHS),
    ),
    families=families.NAMES,
    make_inputs=make_inputs,
    check_inputs=spec.x_problem,
    run=run,
    check=check,
    reference=reference,
    # The activation path's byte floor: x read once, T planes written once (T = 6 assumed,
    # as the normal family gives at batch >= 64).
    bytes_moved=lambda p: (4 + 6) * p["batch"] * p["in_f"],
    flops=lambda p: 0,
    cases=cases.per_mode((*cases.ACTIVATION[:3], {"batch": 33, "in_f": 130},
                          {"batch": 300, "in_f": 256, "k": 2.5})),
    default_sweep=axes.BATCH_SWEEP,
    variants=tuple(Variant(path, help=f"the {path} path", pins=(("path", path),))
                   for path in PATHS),
)
