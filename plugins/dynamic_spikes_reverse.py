"""SPEC step 5: ``x_rec = q' * vth`` (float32)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Launcher, NormRel, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec

#: The most 16-byte units a thread loads before it stores (the kernel's -DUNITS, its
#: registers; ``bench --define`` tunes it): a block is a chunk of BLOCK x units units of one
#: row, ``units`` chosen at each launch (``launch_units``), at most this.
UNITS = 4
#: Units a block takes where the grid is more than one wave: two chunks a row of 3584, more
#: and shorter blocks, so an SM's slots turn over sooner (2.1 % faster than 4 at batch 16384
#: on the H200; 4 is 4.5 % faster where the grid is one wave, batch 1024).
PAST_WAVE_UNITS = 2
#: Threads an SM holds (Hopper's 2048; the kernel's SM_THREADS): its ``__launch_bounds__``
#: keep SM_THREADS / BLOCK blocks an SM resident, at most 32 (the kernel's SM_BLOCKS).
SM_THREADS = 2048


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


def launch_units(b: int, f: int, block: int, sm_count: int, most: int) -> int:
    """The units a block takes at ``b`` rows of ``f``: ``most`` (the kernel's UNITS) where
    the grid of ``b x chunks`` blocks is one wave (every block resident at once, so each is
    one round trip), else PAST_WAVE_UNITS (at most ``most``)."""
    wave = sm_count * min(32, SM_THREADS // block)
    return most if b * chunks(f, block, most) <= wave else min(PAST_WAVE_UNITS, most)


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """A block per chunk of a row, every load issued before any store; the chunk's units
    by ``launch_units``."""
    b, f = int(p["batch"]), int(p["in_f"])
    u = launch_units(b, f, launch.block, launch.sm_count,
                     int(dict(v.defines).get("UNITS", UNITS)))
    c = chunks(f, launch.block, u)
    launch("dynamic_spikes_reverse", (b * c, 1, 1), (launch.block, 1, 1), bufs["q"],
           bufs["vth"], np.int32(b), np.int32(f), np.int32(c), np.int32(u), bufs["x_rec"])


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
           {"batch": 5, "in_f": 2051},                       # three, single values
           # Past one wave (more than 8 blocks an SM on up to 148 SMs): PAST_WAVE_UNITS, two
           # chunks a row of 16-byte units, three of single values.
           {"batch": 1200, "in_f": 2052}, {"batch": 600, "in_f": 1030}),
    sanitize_shapes=({"batch": 1200, "in_f": 2052}, {"batch": 600, "in_f": 1030}),
    default_sweep=axes.BATCH_SWEEP,
    variants=(Variant("default", (("UNITS", str(UNITS)),), "x_rec from q' and vth"),),
)
