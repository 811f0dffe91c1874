"""The seed program's end-to-end pipeline: the activation path (steps 1-3) on stream 0 and
the weight path (A-B) on stream 1, joined by events; steps 4-6 (decode, reverse, GEMM) with
``with_gemm=1``. It enqueues the stages through their own plugins' ``enqueue``.

As in the seed program, ``T`` is a host-side decision: the activation stream is read back for
``amax`` after the transform, ``T`` computed on the host, and the encode launched with it;
the weight path runs on meanwhile.

Step 6 is the integer GEMM (int_gemm's ``wide`` variant, exact group sums on the tensor
cores) on the decoded q and the run's own vth; the seed's float steps stay beside it (decode,
reverse to x_rec), so the chain keeps every output the seed program had.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import (
    Axis,
    Comparison,
    Exact,
    NormRel,
    Pipeline,
    PipelineContext,
    PipelineTrace,
    Point,
)
from harness.spikes import axes, families, inputs, spec, staged
from harness.spikes.tolerances import VTH

STEPS = ("dynamic_spikes", "find_min_max", "transform_absmax", "spike_encode",
         "compute_scales", "weight_quantize", "spike_decode", "dynamic_spikes_reverse",
         "int_gemm")


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Activations, weights and bias of the family (the seed program's tensors for
    ``ramp``)."""
    return {"x": families.activations(rng, family, p["batch"], p["in_f"], p["k"]),
            "w": families.weights(rng, family, p["out_f"], p["in_f"]),
            "bias": families.bias(rng, family, p["out_f"])}


def run(ctx: PipelineContext, bufs: Mapping[str, Any], p: Point) -> PipelineTrace:
    """Enqueue one pass of the pipeline; returns its buffers and timing intervals."""
    b, f, o_f, g = (int(p[a]) for a in ("batch", "in_f", "out_f", "group_size"))
    mode = p["mode"]
    at = {"batch": b, "in_f": f, "out_f": o_f, "group_size": g, "k": p["k"], "mode": mode}
    act = staged.alloc(ctx, b, f)
    q, vth, off, amax = act.q, act.vth, act.off, act.amax
    scale = ctx.alloc((o_f, spec.n_groups(f, g)), np.float32)
    w_q = ctx.alloc((o_f, f), np.int8)

    ctx.mark("start", 0)
    ctx.wait("start", 1)
    # Stream 1, the weight path: A then B.
    ctx.mark("wq_start", 1)
    ctx.step("compute_scales", "default", 1, {"w": bufs["w"], "scale": scale}, **at)
    ctx.step("weight_quantize", "default", 1, {"w": bufs["w"], "scale": scale, "w_q": w_q},
             **at)
    ctx.mark("wq_end", 1)
    # Stream 0, the activation path (T read back by the host, as the seed program does).
    spikes, planes = staged.enqueue(ctx, bufs["x"], at, act)
    outputs = {"vth": (vth, (b,), np.dtype(np.float32)), "v": (q, (b, f), np.dtype(np.int32)),
               "o": (off, (1,), np.dtype(np.int32)), "amax": (amax, (1,), np.dtype(np.int32)),
               "spikes": (spikes, (planes, b, f), np.dtype(np.int8)),
               "scale": (scale, (o_f, spec.n_groups(f, g)), np.dtype(np.float32)),
               "w_q": (w_q, (o_f, f), np.dtype(np.int8))}
    intervals = {**staged.INTERVALS, "weight_quant": (("wq_start", "wq_end"),)}
    if p["with_gemm"]:
        qd = ctx.alloc((b, f), np.int32)
        x_rec = ctx.alloc((b, f), np.float32)
        out = ctx.alloc((b, o_f), np.float32)
        ctx.mark("dr_start", 0)
        ctx.step("spike_decode", "default", 0, {"spikes": spikes, "o": off, "q": qd},
                 planes=planes, **at)
        ctx.step("dynamic_spikes_reverse", "default", 0,
                 {"q": qd, "vth": vth, "x_rec": x_rec}, **at)
        ctx.mark("dr_end", 0)  # before the join: the wait for the weight path is not theirs
        ctx.wait("wq_end", 0)  # the GEMM needs the weight path
        ctx.mark("gemm_start", 0)
        ctx.step("int_gemm", "wide", 0, {"q": qd, "w_q": w_q, "scale": scale, "vth": vth,
                                         "bias": bufs["bias"], "out": out}, **at)
        ctx.mark("gemm_end", 0)
        intervals["decode_reverse"] = (("dr_start", "dr_end"),)
        intervals["gemm"] = (("gemm_start", "gemm_end"),)
        outputs.update({"qd": (qd, (b, f), np.dtype(np.int32)),
                        "x_rec": (x_rec, (b, f), np.dtype(np.float32)),
                        "out": (out, (b, o_f), np.dtype(np.float32))})
    ctx.wait("wq_end", 0)  # join the weight path
    ctx.mark("end", 0)
    intervals["total"] = (("start", "end"),)
    return PipelineTrace(outputs, {"planes": planes}, intervals)


def reference(ins: Mapping[str, np.ndarray], p: Point,
              vth: np.ndarray | None = None) -> dict[str, Any]:
    """The chained references; ``vth`` given: the integer chain judged on that ``vth``."""
    w, mode, g = ins["w"], p["mode"], p["group_size"]
    c = spec.activation_chain(ins["x"], p["k"], mode, vth)
    scale = spec.scales(w, g)
    out = {**{n: c[n] for n in ("vth64", "q", "v", "o", "amax", "planes")}, "vth": c["vth32"],
           "spikes": spec.encode(c["v"], c["planes"], mode), "scale": scale,
           "w_q": spec.weight_quantize(w, scale, g)}
    if p["with_gemm"]:
        out["x_rec"] = spec.reverse(c["q"], c["vth32"])
        # The layer on q and vth themselves (q * vth is exact in float64).
        x64 = c["q"].astype(np.float64) * c["vth32"].astype(np.float64)[:, None]
        out["out"] = spec.gemm64(x64, out["w_q"], scale, ins["bias"], g)
    return out


def _bound(name: str, err: np.ndarray, limit: np.ndarray) -> Comparison:
    """``err <= limit`` everywhere; the worst is reported as the largest ``err / limit``."""
    ratio = np.where(limit > 0, err / np.where(limit > 0, limit, 1), np.where(err > 0, np.inf, 0))
    bad = ~(err <= limit)
    idx = tuple((tuple(int(i) for i in ix), float(err[tuple(ix)]), float(limit[tuple(ix)]))
                for ix in np.argwhere(bad)[:5])
    return Comparison(name, not bad.any(), "ratio", float(ratio.max()) if ratio.size else 0.0,
                      int(bad.sum()), int(err.size), 0, 0, idx)


def check(ins: Mapping[str, np.ndarray], p: Point, got: Mapping[str, np.ndarray],
          host: Mapping[str, Any]) -> list[Comparison]:
    """Every output against the chained references, and SPEC's round-trip properties."""
    ref = reference(ins, p, got["vth"])
    exact = Exact("integers: exact, judged on the kernel's own vth")
    comps = [VTH.compare("vth", got["vth"], ref["vth64"]),
             exact.compare("v", got["v"], ref["v"]),
             exact.compare("o", got["o"], np.array([ref["o"]], np.int32)),
             exact.compare("amax", got["amax"], np.array([ref["amax"]], np.int32)),
             exact.compare("planes", np.array([host["planes"]]), np.array([ref["planes"]]))]
    if host["planes"] == ref["planes"]:
        comps.append(exact.compare("spikes", got["spikes"], ref["spikes"]))
    comps += [exact.compare("scale", got["scale"], ref["scale"]),
              exact.compare("w_q", got["w_q"], ref["w_q"])]
    if p["with_gemm"]:
        comps.append(exact.compare("decode(encode(q)) == q", got["qd"], ref["q"]))
        x, vth = ins["x"].astype(np.float64), got["vth"].astype(np.float64)[:, None]
        err = np.abs(got["x_rec"].astype(np.float64) - x)
        # vth/2, plus the float32 roundings of x / vth and of q * vth
        limit = np.broadcast_to(vth * (0.5 + 2e-6), err.shape) + 2e-7 * np.abs(x)
        comps.append(_bound("|x_rec - x| <= vth/2", err, limit))
        comps.append(NormRel(1e-7, "one rounding").compare("x_rec", got["x_rec"],
                                                           ref["x_rec"]))
        comps.append(NormRel(1e-6, "exact int32 group sums, one fp32 rounding per group "
                                   "promotion and in the epilogue (SPEC)").compare(
            "out", got["out"], ref["out"]))
    return comps



STAGE = Pipeline(
    name="spike_quant_gemm",
    steps=STEPS,
    description="activation path || weight path on two streams; optional decode + GEMM",
    axes=(
        axes.BATCH,
        axes.IN_F,
        axes.OUT_F,
        axes.GROUP_SIZE,
        axes.K,
        axes.mode(),
        Axis("with_gemm", 0, int, "1: also steps 4-6", minimum=0, maximum=1),
    ),
    families=families.NAMES,
    make_inputs=make_inputs,
    check_inputs=spec.x_problem,
    run=run,
    check=check,
    reference=reference,
    # Activation path: x read, q written, read (min/max), read+written (transform), read
    # (encode) and T planes written, assuming T = 6; weight path: w read twice, w_q written.
    bytes_moved=lambda p: (4 * 6 + 6) * p["batch"] * p["in_f"] + 9 * p["out_f"] * p["in_f"],
    flops=lambda p: inputs.layer_flops(p) * p["with_gemm"],
    cases=(
        *({**c, "mode": m, "with_gemm": 1} for m in spec.MODES for c in (
            {"batch": 1, "in_f": 3584, "out_f": 64}, {"batch": 6, "in_f": 256, "out_f": 70},
            {"batch": 7, "in_f": 5, "out_f": 3},
            {"batch": 33, "in_f": 130, "out_f": 129, "group_size": 7},
        )),
        {"batch": 64, "in_f": 3584, "out_f": 3584},  # without the GEMM, as the seed program runs
    ),
    default_sweep={**axes.BATCH_SWEEP, "out_f": (3584, 18944)},
    seed_summaries=True,
)
