"""Weight path step B: ``w_q = round(w / scale[o, f // G])`` as int8 in [-127, 127]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec

#: Scales of a row cached in shared memory up to this many groups (48 KiB of dynamic smem).
SMEM_GROUPS = 12 * 1024


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's weights and their exact step-A scales."""
    w, s, _ = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], p["group_size"])
    return {"w": w, "scale": s}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """Half-to-even rounding of the true float32 quotient, clamped."""
    return {"w_q": spec.weight_quantize(ins["w"], ins["scale"], p["group_size"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One block per row; the row's scales in shared memory when they fit."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    ng = spec.n_groups(f, g)
    smem = ng <= SMEM_GROUPS
    launch("weight_quantize", (o, 1, 1), (launch.block, 1, 1), bufs["w"], bufs["scale"],
           np.int32(o), np.int32(f), np.int32(g), np.int32(smem), bufs["w_q"],
           shared=4 * ng if smem else 0)


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Scales repeated over their groups, ``round(w / s)``, clamped, int8."""
    w, g = t["w"], p["group_size"]
    s = t["scale"].repeat_interleave(g, dim=1)[:, : w.shape[1]]
    r = torch.where(s == 0, torch.zeros_like(w), torch.round(w / s))
    return {"w_q": r.clamp(-127, 127).to(torch.int8)}


STAGE = Stage(
    name="weight_quantize",
    entry_points=("weight_quantize",),
    description="w / group scale, rounded half to even, as int8",
    axes=axes.WEIGHT,
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"w": ((p["out_f"], p["in_f"]), np.dtype(np.float32)),
                      "scale": ((p["out_f"], spec.n_groups(p["in_f"], p["group_size"])),
                                np.dtype(np.float32))},
    outputs=lambda p: {"w_q": ((p["out_f"], p["in_f"]), np.dtype(np.int8))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    bytes_moved=lambda p: 5 * p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]),
    flops=lambda p: p["out_f"] * p["in_f"],
    tolerances={"w_q": Exact("integer weights, from one IEEE division and rint: exact")},
    cases=(
        *cases.WEIGHT,
        {"out_f": 2, "in_f": 13000, "group_size": 1},  # more groups than fit in smem
    ),
    default_sweep=axes.WEIGHT_SWEEP,
)
