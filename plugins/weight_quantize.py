"""Weight path step B: ``w_q = round(w / scale[o, f // G])`` as int8 in [-127, 127]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, geometry, inputs, spec

#: The kernel's launch parameters (``enqueue`` reads them back from the variant, so
#: ``bench --define NAME=...`` tunes them): LANES lanes a group in wquant_vec1 (32 / LANES
#: groups a warp's step), BPS blocks an SM resident (wquant_vec1's ``__launch_bounds__``;
#: VEC4_BPS wquant_vec4's, which spills at BPS 16's 32 registers), WARP_STEPS 1: blocks
#: enough that each warp takes one step and exits (0: one persistent wave of the blocks that
#: fit, warps looping over steps), PREFETCH 0: nothing loaded ahead (1: a warp loads its
#: next step before it quantises this one). The A/B that chose them: kernels/NOTES.md.
DEFINES = (("LANES", "16"), ("BPS", "16"), ("VEC4_BPS", "12"), ("PREFETCH", "0"),
           ("WARP_STEPS", "1"))


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's weights and their exact step-A scales."""
    w, s, _ = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], p["group_size"])
    return {"w": w, "scale": s}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """Half-to-even rounding of the true float32 quotient, clamped."""
    return {"w_q": spec.weight_quantize(ins["w"], ins["scale"], p["group_size"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """The list of ``out_f * ceil(in_f / G)`` groups, a team of lanes a group: blocks
    enough that no warp takes more than WARP_STEPS steps of groups (with 0, one grid of at
    most the blocks that fit at once, warps looping over the steps); a block a row where
    rows or groups are not 16-byte aligned."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    path = geometry.group_path(f, g)
    if path == "any":
        launch("wquant_any", (o, 1, 1), (launch.block, 1, 1), bufs["w"], bufs["scale"],
               np.int32(o), np.int32(f), np.int32(g), bufs["w_q"])
        return
    groups = o * spec.n_groups(f, g)
    grid = geometry.group_grid(launch, groups, path, v)
    launch(f"wquant_{path}", grid, (launch.block, 1, 1), bufs["w"], bufs["scale"],
           np.int32(f), np.int32(g), np.int64(groups), bufs["w_q"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Scales repeated over their groups, ``round(w / s)``, clamped, int8."""
    w, g = t["w"], p["group_size"]
    s = t["scale"].repeat_interleave(g, dim=1)[:, : w.shape[1]]
    r = torch.where(s == 0, torch.zeros_like(w), torch.round(w / s))
    return {"w_q": r.clamp(-127, 127).to(torch.int8)}


STAGE = Stage(
    name="weight_quantize",
    entry_points=("wquant_vec1", "wquant_vec4", "wquant_any"),
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
    variants=(Variant("default", DEFINES, "a team of LANES lanes a group"),),
    block=128,
    bytes_moved=lambda p: 5 * p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]),
    flops=lambda p: p["out_f"] * p["in_f"],
    tolerances={"w_q": Exact("integer weights, from one IEEE division and rint: exact (a "
                             "multiply by the reciprocal only where it gives the same)")},
    cases=(
        *cases.WEIGHT,
        {"out_f": 2, "in_f": 13000, "group_size": 1},  # wquant_any: 13000 groups a row
        {"out_f": 33, "in_f": 520, "group_size": 256},  # wquant_vec4, a short last group
        {"out_f": 40, "in_f": 1000, "group_size": 100},  # wquant_vec1, G < 128: lanes left idle
        {"out_f": 301, "in_f": 3456},  # 8127 groups: a warp's last step cut short
        # More groups than an H200's one wave of warps takes in a step (16896): at the
        # default (WARP_STEPS 1) a grid past one wave, a step a warp; with WARP_STEPS 0
        # (a --define build, each bench point checked) the warps loop, over rows of whole
        # groups (PREFETCH's rotation) and over rows whose last group is short (a plain loop).
        {"out_f": 1201, "in_f": 2048},
        {"out_f": 2500, "in_f": 1000},
    ),
    default_sweep=axes.WEIGHT_SWEEP,
    sanitize_shapes=cases.WEIGHT_SANITIZE,
)
