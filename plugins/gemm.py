"""SPEC step 6: ``out = x_rec @ (w_q * scale)^T + bias`` in FP32."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Launcher, NormRel, Point, Rows, Stage, Variant
from harness.spikes import axes, families, inputs, spec

#: Output tile edge; each of a block's 16 x 16 threads computes 4 x 4 outputs of it, so the
#: kernel's block is fixed at 256 threads by the tile, whatever ``-DBLOCK`` says.
TILE = 64
THREADS = (TILE // 4) ** 2


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """``x_rec`` of a lossless round trip of the family's activations, quantized weights,
    their scales and a bias."""
    _, vth, q = inputs.activation_chain(rng, family, p["batch"], p["in_f"], p["k"])
    _, scale, w_q = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], p["group_size"])
    x_rec = spec.reverse(q, vth).astype(np.float32)  # one rounding, as the reverse kernel
    return {"x_rec": x_rec, "w_q": w_q, "scale": scale,
            "bias": families.bias(rng, family, p["out_f"])}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """The product in float64."""
    return {"out": spec.gemm64(ins["x_rec"], ins["w_q"], ins["scale"], ins["bias"],
                               p["group_size"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """64x64 output tiles, a block of THREADS each."""
    b, o, f, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    launch("gemm", (-(-o // TILE), -(-b // TILE), 1), (THREADS, 1, 1), bufs["x_rec"],
           bufs["w_q"], bufs["scale"], bufs["bias"], np.int32(b), np.int32(o), np.int32(f),
           np.int32(g), bufs["out"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Dequantise the weights, then one FP32 matmul (TF32 off) and the bias."""
    g = p["group_size"]
    s = t["scale"].repeat_interleave(g, dim=1)[:, : t["w_q"].shape[1]]
    return {"out": t["x_rec"] @ (t["w_q"].to(torch.float32) * s).T + t["bias"]}


STAGE = Stage(
    name="gemm",
    entry_points=("gemm",),
    description="x_rec @ dequant(w_q)^T + bias, FP32 tiles",
    axes=(axes.BATCH, axes.OUT_F, axes.IN_F, axes.GROUP_SIZE, axes.K_INPUT),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"x_rec": ((p["batch"], p["in_f"]), np.dtype(np.float32)),
                      "w_q": ((p["out_f"], p["in_f"]), np.dtype(np.int8)),
                      "scale": ((p["out_f"], spec.n_groups(p["in_f"], p["group_size"])),
                                np.dtype(np.float32)),
                      "bias": ((p["out_f"],), np.dtype(np.float32))},
    outputs=inputs.layer_out,
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    bytes_moved=lambda p: 4 * p["batch"] * p["in_f"] + p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]) + 4 * p["out_f"]
    + 4 * p["batch"] * p["out_f"],
    flops=inputs.layer_flops,
    tolerances={"out": NormRel(1e-5, "FP32 FFMA sums over F in another order than the "
                                     "float64 reference (SPEC: 1e-5)")},
    cases=(
        {"batch": 1, "out_f": 64, "in_f": 3584}, {"batch": 6, "out_f": 70, "in_f": 256},
        {"batch": 7, "out_f": 3, "in_f": 5}, {"batch": 1, "out_f": 1, "in_f": 1},
        {"batch": 33, "out_f": 130, "in_f": 130}, {"batch": 65, "out_f": 129, "in_f": 300,
                                                   "group_size": 7},
    ),
    default_sweep={"batch": tuple(2**i for i in range(0, 13, 2))},
    # Each row of out is that row of x_rec against the whole of the weights.
    rows=Rows("batch", {"x_rec": 0}, {"out": 0}),
    compute_peak="fp32",
)
