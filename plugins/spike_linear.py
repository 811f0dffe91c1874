"""The spike linear layer end to end, as a deployed layer runs it: x fp32 -> the fused
activation stage (vth, the planes, stats and q as int8) -> the integer GEMM on q8 with the
weights' group scales, vth and bias -> out fp32. One stream, nothing read back by the host,
so the three launches capture as one CUDA graph (``--graph``).

The weights are quantised once when the inputs are made (SPEC steps A and B in NumPy, the
same bits as ``weight_quant_fused``, whose own rows time that step): a layer holds its
quantised weights, so their quantisation is outside the timed region.

The GEMM takes q8, the fused stage's q as int8: exact where q fits int8, as the ``normal``
and ``ramp`` families' q does (the int_gemm stage's int8 variant is validated on the same
two). The variants (the ``q_path`` axis):

- ``default``: q8 into the int8 GEMM alone. A run whose q does not fit (the ``llm`` family's
  outliers, |q| beyond 127) fails its ``q fits int8`` check instead of giving a wrong answer
  quietly.
- ``any``: exact for every family, with no host round trip. The fused stage writes q as int32
  (``q_wide``) where its stats say q does not fit int8, and after the int8 GEMM a third
  launch, the general path of a ``wide`` build guarded by those stats, runs only then and
  writes all of out over the int8 launch's. Where q fits, its blocks return at once: the
  price of the choice is that launch. Exact while |q| < 2^23 and every group sum within
  int32, which ``check_inputs`` holds k and in_f to.
- ``packed``: the spikes feed the GEMM. The fused stage writes its bit-packed planes
  (unidirectional), and ``int_gemm_packed`` reads them as its A operand, decoding q in its
  tile load: no int8 planes and no q read by the GEMM (q8 is still the fused stage's
  workspace). Where N and K are multiples of 128 and G is 128 its GEMM is int_gemm's Hopper
  kernel with the decode in its producer warpgroups (the general path elsewhere). Exact
  where q fits int8, as ``default``.
- ``operand``: ``default`` (unidirectional) with the activation stage writing only what the
  GEMM reads (vth, stats, q8: its ``operand`` layout, pass 1 alone): the spikes are not
  materialised: q8 written once, x read once where a row fits the thread caches. Where
  ``default`` runs the two passes, the difference to it measured beside it is the planes'
  price; where ``default`` takes a one-launch kernel (act_one, act_rows, act_grid), the
  choice of kernel too. Exact where q fits int8, as ``default``.
- ``operand_adjacent``: ``operand`` with no event between the activation stage and the
  GEMM (the ``handoff`` axis), as a deployed layer runs them: only the total is timed. Beside
  ``operand`` it measures what the event between the two costs.
- ``operand_early``: ``operand_adjacent`` with the GEMM launched as the programmatic
  dependent of the activation stage's kernel: act_stats lets its dependent start, the
  GEMM's blocks take the SMs its last blocks leave (their barriers and the cluster's
  handshake done there) and wait on the device (``griddepcontrol.wait``) for it to end
  before they read q8 or vth. Where the GEMM is not a wgmma kernel (small M, the general
  path), it launches as ``operand_adjacent``'s. No event can come between the two (an event
  there holds the dependent back), so only the total is timed.

Its peers (``--peers linear_bf16,linear_fp32``) are the float layer it replaces, PyTorch's
``F.linear`` on x itself with the weights dequantised beforehand: speed references timed
beside each point, not judged (no spikes, so not this layer's outputs).
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
    Peer,
    Pipeline,
    PipelineContext,
    PipelineTrace,
    Point,
    Variant,
)
from harness.spikes import axes, families, inputs, spec, torchmath
from harness.spikes.tolerances import VTH

STEPS = ("activation_fused", "int_gemm", "int_gemm_packed")
#: The ``any`` path's bound on k * in_f: |q| <= k F + 1/2 (vth = mean |x| / k), so |q| < 2^23,
#: what the wide build's three byte planes hold. Its group sums need a row's sum of |q|,
#: at most (k + 1/2) F, times 127 within int32 too (``check_inputs`` holds both).
ANY_KF = 2**23 - 2**16
#: How the GEMM follows the activation stage (the ``handoff`` axis): launched after it ends
#: with an event between the two (which times each), after it with nothing between, or as
#: its programmatic dependent.
HANDOFFS = ("after", "adjacent", "early")
#: Each q path: the activation stage's variant it runs (by mode) and the output holding its
#: planes (bit-packed words, int8 planes, or none).
PATHS = {"int8": ("{mode}", "spikes"), "any": ("{mode}", "spikes"),
         "packed": ("packed_{mode}", "packed"), "operand": ("operand_{mode}", None)}


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Activations of the family, and the weights quantised once (w_q, scale) with a bias."""
    x = families.activations(rng, family, p["batch"], p["in_f"], p["k"])
    _, scale, w_q = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], p["group_size"])
    return {"x": x, "w_q": w_q, "scale": scale,
            "bias": families.bias(rng, family, p["out_f"])}


def run(ctx: PipelineContext, bufs: Mapping[str, Any], p: Point) -> PipelineTrace:
    """Enqueue one pass of the layer on stream 0; the activation stage's and the GEMM's
    shares are timed apart as well as together."""
    b, f, n, g, k, mode = (p[a] for a in ("batch", "in_f", "out_f", "group_size", "k", "mode"))
    path, cap = p["q_path"], spec.plane_bound(k, f, mode)
    vth = ctx.alloc((b,), np.float32)
    stats = ctx.alloc((4,), np.int32)
    q8 = ctx.alloc((b, f), np.int8)
    out = ctx.alloc((b, n), np.float32)
    act = {"x": bufs["x"], "vth": vth, "stats": stats, "q8": q8}
    outputs = {"vth": (vth, (b,), np.dtype(np.float32)),
               "stats": (stats, (4,), np.dtype(np.int32)),
               "q8": (q8, (b, f), np.dtype(np.int8))}
    # The planes buffer: bit-packed words on the packed path, int8 planes otherwise, none on
    # the operand path.
    name = planes_output(p)
    if name is not None:
        buf_shape, buf_dtype = (((spec.packed_planes(cap, mode), b, -(-f // 32)),
                                 np.dtype(np.uint32))
                                if name == "packed" else ((cap, b, f), np.dtype(np.int8)))
        act[name] = ctx.alloc(buf_shape, buf_dtype)
        outputs[name] = (act[name], buf_shape, buf_dtype)
    if path == "any":
        act["q_wide"] = ctx.alloc((b, f), np.int32)
    weights = {"w_q": bufs["w_q"], "scale": bufs["scale"], "vth": vth, "bias": bufs["bias"],
               "out": out}
    shape = {"batch": b, "in_f": f, "out_f": n, "group_size": g, "k": k}
    early, marked = p["handoff"] == "early", p["handoff"] == "after"
    ctx.mark("start", 0)
    ctx.step("activation_fused", PATHS[path][0].format(mode=mode), 0, act,
             batch=b, in_f=f, k=k)
    if marked:  # an event between the two: each timed, at the price of the event itself
        ctx.mark("act_end", 0)
    if path == "packed":
        ctx.step("int_gemm_packed", "default", 0,
                 {"planes": act["packed"], "stats": stats, **weights}, early=early, **shape)
    else:
        ctx.step("int_gemm", "int8", 0, {"q": q8, **weights}, early=early, **shape)
    if path == "any":  # runs only where stats say q does not fit int8
        ctx.step("int_gemm", "wide", 0, {"q": act["q_wide"], "stats": stats, **weights},
                 **shape)
    ctx.mark("end", 0)
    outputs["out"] = (out, (b, n), np.dtype(np.float32))
    intervals = ({"activation": (("start", "act_end"),), "gemm": (("act_end", "end"),),
                  "total": (("start", "end"),)} if marked else {"total": (("start", "end"),)})
    return PipelineTrace(outputs, {}, intervals)


def _float_weights(torch: Any, t: Mapping[str, Any], p: Point) -> dict[str, Any]:
    """The weights as a float layer holds them, dequantised once (fp32 and bf16) with the
    bias: made outside the timed region, as a deployment holds its weights."""
    w = torchmath.dequantised(torch, t["w_q"], t["scale"], p["group_size"])
    return {"w_fp32": w, "w_bf16": w.to(torch.bfloat16),
            "bias_bf16": t["bias"].to(torch.bfloat16)}


def linear_fp32(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """The float layer this one replaces: ``F.linear`` on x in fp32 (TF32 off)."""
    return {"out": torch.nn.functional.linear(t["x"], t["w_fp32"], t["bias"])}


def linear_bf16(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """The float layer this one replaces in bf16: x cast to bf16 in the call, the weights
    and bias beforehand; the output stays bf16."""
    x = t["x"].to(torch.bfloat16)
    return {"out": torch.nn.functional.linear(x, t["w_bf16"], t["bias_bf16"])}


#: The same layer without spikes, as PyTorch runs it from the same x and weights
#: (``--peers``): what the spike layer is set against. Speed references: neither quantises
#: the activations, so neither gives this layer's outputs.
PEERS = {
    "linear_fp32": Peer(linear_fp32, judged=False, prepare=_float_weights,
                        note="the float layer on x itself (no spikes): fp32 F.linear, TF32 "
                             "off"),
    "linear_bf16": Peer(linear_bf16, judged=False, prepare=_float_weights,
                        note="the float layer on x itself (no spikes), in bf16"),
}


def planes_output(p: Point) -> str | None:
    """The output holding the planes: ``packed`` (bit-packed words) on the packed path, none
    on the operand path, ``spikes`` (int8 planes) otherwise."""
    return PATHS[p["q_path"]][1]


def reference(ins: Mapping[str, np.ndarray], p: Point,
              vth: np.ndarray | None = None) -> dict[str, Any]:
    """The chained references: steps 1-3 (on ``vth`` when given, the run's own threshold;
    ``planes`` is T), the T planes as the path lays them out, then the layer in float64 on
    x_rec = q * vth (exact in float64)."""
    c = spec.activation_chain(ins["x"], p["k"], p["mode"], vth)
    x_rec = c["q"].astype(np.float64) * c["vth32"].astype(np.float64)[:, None]
    out = {**c, "q8": np.clip(c["q"], -128, 127).astype(np.int8),
           "out": spec.gemm64(x_rec, ins["w_q"], ins["scale"], ins["bias"], p["group_size"])}
    name = planes_output(p)
    if name is not None:
        laid = spec.pack if name == "packed" else spec.encode
        out[name] = laid(c["v"], c["planes"], p["mode"])
    return out


def check(ins: Mapping[str, np.ndarray], p: Point, got: Mapping[str, np.ndarray],
          host: Mapping[str, Any]) -> list[Comparison]:
    """vth, the integers (stats, q8, the first T planes: int8, or packed, where the path
    writes them) exact on the run's own vth, q within int8 (every path but ``any``), and
    out within SPEC's 1e-6 of the float64 layer."""
    ref = reference(ins, p, got["vth"])
    exact = Exact("integers: exact, judged on the run's own vth")
    stats = np.asarray(got["stats"])
    t = int(stats[3])
    want = np.array([ref["mm"][0], ref["mm"][1], ref["o"], ref["planes"]], np.int32)
    qmax = int(np.abs(ref["q"]).max()) if ref["q"].size else 0
    comps = [VTH.compare("vth", got["vth"], ref["vth64"]),
             exact.compare("stats [qmin, qmax, o, T]", stats, want),
             exact.compare("q8", got["q8"], ref["q8"])]
    if p["q_path"] != "any":
        fits = spec.fits_int8(int(ref["mm"][0]), int(ref["mm"][1]))
        comps.append(exact.compare("q fits int8", np.array([int(fits)]), np.array([1])))
    name = planes_output(p)
    if name is not None and t == ref["planes"]:
        comps.append(exact.compare(name, got[name][:t], ref[name]))
    comps.append(NormRel(1e-6, f"exact int32 group sums, one fp32 rounding per group "
                               f"promotion and in the epilogue (SPEC; |q| <= {qmax})")
                 .compare("out", got["out"], ref["out"]))
    return comps


def check_inputs(ins: Mapping[str, np.ndarray], p: Point) -> str | None:
    """The ``any`` path is exact while k * in_f stays under ``ANY_KF`` and 127 (k + 1/2)
    in_f under 2^31; the early handoff needs the operand path (its kernel lets the GEMM
    start); step 1 must be well defined in float32 (``spec.threshold_problem``)."""
    k, f = float(p["k"]), int(p["in_f"])
    if p["q_path"] == "any" and (k * f >= ANY_KF or 127 * (k + 0.5) * f >= 2**31):
        return (f"bad input: k * in_f = {k * f:.4g} allows |q| or a group sum beyond what the "
                f"exact path holds (k * in_f < {ANY_KF}, 127 (k + 1/2) in_f < 2^31)")
    if p["handoff"] == "early" and p["q_path"] != "operand":
        return ("bad input: handoff early needs q_path operand: only act_stats, the operand "
                "layout's kernel, lets a dependent start")
    return spec.threshold_problem(ins["x"], k)


def bytes_moved(p: Point) -> int:
    """The layer's byte floor: x read, T planes and vth written (T = 6 assumed; on the
    operand path q8, its only integer output, in their place), the quantised weights,
    scales and bias read, out written. Where the planes are written, q8's round trip is
    the design's cost, not the floor's."""
    b, f, n, g = (int(p[a]) for a in ("batch", "in_f", "out_f", "group_size"))
    written = 1 if p["q_path"] == "operand" else spec.TYPICAL_T
    return (4 + written) * b * f + 4 * b + n * f + 4 * n * spec.n_groups(f, g) + 4 * n \
        + 4 * b * n


STAGE = Pipeline(
    name="spike_linear",
    steps=STEPS,
    description="the layer end to end: x -> fused activation (q8) -> integer GEMM -> out",
    axes=(
        axes.BATCH,
        axes.IN_F,
        axes.OUT_F,
        axes.GROUP_SIZE,
        axes.K,
        axes.mode(),
        Axis("q_path", "int8", str, "the GEMM's q: int8 alone, any q with the exact path "
             "chosen on the device, the packed planes, or int8 with no planes written (set "
             "by the variant)",
             choices=tuple(PATHS)),
        Axis("handoff", "after", str, "how the GEMM follows the activation stage: after it "
             "with an event between (the two timed apart), adjacent (after it, nothing "
             "between: only the total timed), or early, as its programmatic dependent (the "
             "GEMM's blocks take the SMs the stage's last blocks leave and wait on the device "
             "for it to end; only the total timed)",
             choices=HANDOFFS),
    ),
    families=families.NAMES,
    make_inputs=make_inputs,
    run=run,
    check=check,
    check_inputs=check_inputs,
    reference=reference,
    bytes_moved=bytes_moved,
    flops=inputs.layer_flops,
    cases=(
        {"batch": 1, "in_f": 3584, "out_f": 384},          # act_one, GEMM small1
        {"batch": 1, "in_f": 18944, "out_f": 256},         # act_one past the cache
        {"batch": 3, "in_f": 1024, "out_f": 200},          # act_rows, N odd tile
        {"batch": 8, "in_f": 3584, "out_f": 256},          # act_rows' most rows of 3584
        {"batch": 12, "in_f": 3584, "out_f": 256},         # act_grid (packed: two passes)
        {"batch": 77, "in_f": 512, "out_f": 256},          # wgmma, M not a tile multiple
        {"batch": 300, "in_f": 1024, "out_f": 384},        # wgmma, several tiles
        {"batch": 33, "in_f": 130, "out_f": 129, "group_size": 7},  # general: odd all
        {"batch": 20, "in_f": 256, "out_f": 64, "mode": "bidirectional"},
        {"batch": 20, "in_f": 256, "out_f": 64, "mode": "twos_complement"},
    ),
    default_sweep={"batch": (1, 4, 16, 64, 256, 1024, 4096, 8192), "out_f": (18944, 3584)},
    peers=PEERS,
    variants=(
        # The int8 GEMM alone: families whose q fits int8 (the llm family's outliers do not).
        Variant("default", help="q8 into int_gemm's int8 variant", pins=(("q_path", "int8"),),
                families=("normal", "ramp")),
        Variant("any", help="q8 into the int8 GEMM, then the exact wide path where the "
                            "stats say q does not fit int8, chosen on the device",
                pins=(("q_path", "any"),),
                cases=({"batch": 40, "in_f": 3584, "out_f": 256, "k": 64.0},  # wgmma + wide
                       {"batch": 2, "in_f": 1024, "out_f": 384, "k": 64.0})),  # stream1 + wide
        # The spikes into the GEMM: the unidirectional packed planes, q decoded as int8.
        Variant("packed", help="the packed planes into int_gemm_packed (A decoded in its "
                               "tile load)",
                pins=(("q_path", "packed"), ("mode", "unidirectional")),
                families=("normal", "ramp")),
        # What the GEMM reads and no more: the activation stage's pass 1 alone.
        Variant("operand", help="q8 into int_gemm's int8 variant, the activation stage "
                                "writing no planes (vth, stats, q8)",
                pins=(("q_path", "operand"), ("mode", "unidirectional")),
                families=("normal", "ramp")),
        # The same with no event between the two steps: the layer as a deployment runs it.
        Variant("operand_adjacent", help="operand with no event between the activation "
                                         "stage and the GEMM (only the total timed)",
                pins=(("q_path", "operand"), ("mode", "unidirectional"),
                      ("handoff", "adjacent")),
                families=("normal", "ramp")),
        # The same, the GEMM launched under the activation stage's tail.
        Variant("operand_early", help="operand, the GEMM launched as the activation stage's "
                                      "programmatic dependent (only the total timed)",
                pins=(("q_path", "operand"), ("mode", "unidirectional"),
                      ("handoff", "early")),
                families=("normal", "ramp")),
    ),
)
