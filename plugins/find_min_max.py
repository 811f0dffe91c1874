"""SPEC step 2a: the global minimum and maximum of the integer spikes ``q``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec
from harness.spikes.geometry import reduce_grid


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """``q`` of step 1 on the family's activations."""
    return {"q": inputs.activation_chain(rng, family, p["batch"], p["in_f"], p["k"])[2]}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """``mm = [min q, max q]``."""
    return {"mm": spec.min_max(ins["q"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One launch: a grid-stride scan whose last block (or only one) writes ``mm``; at
    most REDUCE_BLOCKS blocks, the kernel's slots."""
    n = int(p["batch"]) * int(p["in_f"])
    launch("find_min_max", *reduce_grid(n, launch.block, v.defines), bufs["q"],
           np.int64(n), bufs["mm"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """``torch.stack([q.min(), q.max()])``."""
    q = t["q"]
    return {"mm": torch.stack([q.min(), q.max()]).to(torch.int32)}


STAGE = Stage(
    name="find_min_max",
    entry_points=("find_min_max",),
    description="[min q, max q] over the whole tensor",
    axes=(axes.BATCH, axes.IN_F, axes.K_INPUT),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"q": ((p["batch"], p["in_f"]), np.dtype(np.int32))},
    outputs=lambda p: {"mm": ((2,), np.dtype(np.int32))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    bytes_moved=lambda p: 4 * p["batch"] * p["in_f"] + 8,
    flops=lambda p: 2 * p["batch"] * p["in_f"],
    tolerances={"mm": Exact("integer min and max: exact")},
    # At BLOCK 256: one block (1 x 3584, 7 x 5, 3 x 1: the kernel writes mm itself), a few to
    # a few hundred (its last block reduces their slots), and past REDUCE_BLOCKS blocks of
    # one pass (the last two, 16-byte units and single values: every slot, two passes).
    cases=(*cases.ACTIVATION, {"batch": 301, "in_f": 4100}, {"batch": 5, "in_f": 20003},
           {"batch": 1200, "in_f": 3584}, {"batch": 263, "in_f": 4099}),
    sanitize_shapes=({"batch": 263, "in_f": 4099},),  # every slot of the kernel's used
    default_sweep=axes.BATCH_SWEEP,
)
