"""SPEC step 5: ``x_rec = q' * vth`` (float32)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Launcher, NormRel, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """``q`` and ``vth`` of step 1 on the family's activations (a lossless round trip
    decodes to that very ``q``)."""
    _, vth, q = inputs.activation_chain(rng, family, p["batch"], p["in_f"], p["k"])
    return {"q": q, "vth": vth}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """The product in float64."""
    return {"x_rec": spec.reverse(ins["q"], ins["vth"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One block per row."""
    b, f = int(p["batch"]), int(p["in_f"])
    launch("dynamic_spikes_reverse", (b, 1, 1), (launch.block, 1, 1), bufs["q"], bufs["vth"],
           np.int32(b), np.int32(f), bufs["x_rec"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """``q.float() * vth[:, None]``."""
    return {"x_rec": t["q"].to(torch.float32) * t["vth"][:, None]}


STAGE = Stage(
    name="dynamic_spikes_reverse",
    entry_points=("dynamic_spikes_reverse",),
    description="x_rec = q' * vth per row",
    axes=(axes.BATCH, axes.IN_F, axes.K_INPUT),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"q": ((p["batch"], p["in_f"]), np.dtype(np.int32)),
                      "vth": ((p["batch"],), np.dtype(np.float32))},
    outputs=lambda p: {"x_rec": ((p["batch"], p["in_f"]), np.dtype(np.float32))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    bytes_moved=lambda p: 8 * p["batch"] * p["in_f"] + 4 * p["batch"],
    flops=lambda p: p["batch"] * p["in_f"],
    tolerances={"x_rec": NormRel(1e-7, "one float32 rounding of an exact product: "
                                       "relative error <= 2^-24 per element")},
    cases=(*cases.ACTIVATION, {"batch": 12, "in_f": 4100}),
    default_sweep=axes.BATCH_SWEEP,
)
