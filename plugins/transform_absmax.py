"""SPEC steps 2b-2c: the transform decision ``o`` (on the device), ``v = q - o`` in place,
and ``amax = max |v|``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec, torchmath
from harness.spikes.geometry import reduce_grid


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """``q`` of step 1 and its ``mm = [qmin, qmax]`` (step 2a)."""
    q = inputs.activation_chain(rng, family, p["batch"], p["in_f"], p["k"])[2]
    return {"q": q, "mm": spec.min_max(q)}


def outputs(p: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``v`` (written over ``q``), ``o`` and ``amax``."""
    return {"v": ((p["batch"], p["in_f"]), np.dtype(np.int32)),
            "o": ((1,), np.dtype(np.int32)), "amax": ((1,), np.dtype(np.int32))}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """SPEC's decision from ``mm`` and the mode, then the transform."""
    o = spec.offset(int(ins["mm"][0]), int(ins["mm"][1]), p["mode"])
    vv, amax = spec.transform(ins["q"], o)
    return {"v": vv, "o": np.array([o], np.int32), "amax": np.array([amax], np.int32)}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One launch: every block decides from ``mm``, transforms its part of a grid-stride
    pass, and the last block (or only one) writes ``o`` and ``amax``; at most
    REDUCE_BLOCKS blocks, the kernel's slots."""
    n = int(p["batch"]) * int(p["in_f"])
    launch("transform_absmax", *reduce_grid(n, launch.block, v.defines), bufs["q"],
           np.int64(n), bufs["mm"], np.int32(spec.check_mode(p["mode"])), bufs["o"],
           bufs["amax"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """The decision with tensor ops (no host sync), then ``q.sub_(o)`` and ``abs().max()``."""
    q, mm = t["q"], t["mm"]
    o = torchmath.offset(torch, mm[0], mm[1], p["mode"])
    q.sub_(o)
    return {"v": q, "o": o.reshape(1), "amax": q.abs().max().reshape(1)}


STAGE = Stage(
    name="transform_absmax",
    entry_points=("transform_absmax",),
    description="o from [qmin, qmax] and the mode; v = q - o in place; amax = max |v|",
    axes=(axes.BATCH, axes.IN_F, axes.K_INPUT, axes.mode()),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"q": ((p["batch"], p["in_f"]), np.dtype(np.int32)),
                      "mm": ((2,), np.dtype(np.int32))},
    outputs=outputs,
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    inplace={"v": "q"},
    # Read q, write v over it; mm, o and amax are a few words.
    bytes_moved=lambda p: 8 * p["batch"] * p["in_f"] + 16,
    flops=lambda p: 2 * p["batch"] * p["in_f"],
    tolerances={
        "v": Exact("integer subtraction: exact"),
        "o": Exact("integer decision: exact"),
        "amax": Exact("integer max: exact"),
    },
    # At BLOCK 256: one block (1 x 3584, 7 x 5, 3 x 1: the kernel writes o and amax itself), a
    # few to a few hundred (its last block reduces their slots), and past REDUCE_BLOCKS
    # blocks of one pass (the last two, 16-byte units and single values: every slot, two
    # passes).
    cases=cases.per_mode((*cases.ACTIVATION, {"batch": 301, "in_f": 4100},
                          {"batch": 1200, "in_f": 3584}, {"batch": 263, "in_f": 4099})),
    sanitize_shapes=({"batch": 263, "in_f": 4099},),  # every slot of the kernel's used
    default_sweep=axes.BATCH_SWEEP,
)
