"""SPEC step 5: ``x_rec = q' * vth`` (float32)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Launcher, NormRel, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec

#: 16-byte units a thread loads before it stores (the kernel's -DUNITS; ``bench --define``
#: tunes it): a block is a chunk of BLOCK x UNITS units of one row.
UNITS = 4


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """``q`` and ``vth`` of step 1 on the family's activations (a lossless round trip
    decodes to that very ``q``)."""
    _, vth, q = inputs.activation_chain(rng, family, p["batch"], p["in_f"], p["k"])
    return {"q": q, "vth": vth}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """The product in float64."""
    return {"x_rec": spec.reverse(ins["q"], ins["vth"])}


def chunks(f: int, block: int, units: int) -> int:
    """Blocks a row takes: ``block x units`` 16-byte units each (single values where the row
    is not a multiple of 4)."""
    n = f // 4 if f % 4 == 0 else f
    return max(1, -(-n // (block * units)))


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """A block per chunk of a row, every load issued before any store."""
    b, f = int(p["batch"]), int(p["in_f"])
    c = chunks(f, launch.block, int(dict(v.defines).get("UNITS", UNITS)))
    launch("dynamic_spikes_reverse", (b * c, 1, 1), (launch.block, 1, 1), bufs["q"],
           bufs["vth"], np.int32(b), np.int32(f), np.int32(c), bufs["x_rec"])


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
    cases=(*cases.ACTIVATION, {"batch": 12, "in_f": 4100},   # two chunks a row
           {"batch": 5, "in_f": 2051}),                      # three, single values
    default_sweep=axes.BATCH_SWEEP,
    variants=(Variant("default", (("UNITS", str(UNITS)),), "x_rec from q' and vth"),),
)
