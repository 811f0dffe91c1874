"""Weight path steps A and B in one pass over w: ``scale`` and ``w_q`` from ``w``.

A team of lanes per group whatever the matrix's shape, so tall (18944x3584) and wide
(3584x18944) matrices are the same list of groups; w is read once and kept in registers
between the group max and the quantisation. Exactly ``compute_scales`` then
``weight_quantize``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, divisors, families, geometry, spec

#: The kernel's launch parameters (``enqueue`` reads them back from the variant, so
#: ``bench --define NAME=...`` tunes them): LANES lanes a group in wq_vec1 (32 / LANES
#: groups a warp's step, 128 / LANES values a lane), BPS blocks an SM resident (wq_vec1's
#: ``__launch_bounds__``; VEC4_BPS wq_vec4's, which spills at BPS 16's 32 registers),
#: WARP_STEPS 1: blocks enough that each warp takes one step and exits, blocks retiring and
#: refilling (0: one persistent wave of the blocks that fit, warps looping over steps),
#: PREFETCH 0: nothing loaded ahead (1: a warp loads its next step before it quantises this
#: one). The A/B that chose them: kernels/NOTES.md.
DEFINES = (("LANES", "16"), ("BPS", "16"), ("VEC4_BPS", "12"), ("PREFETCH", "0"),
           ("WARP_STEPS", "1"))


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's weights ``w [out_f, in_f]``."""
    return {"w": families.weights(rng, family, p["out_f"], p["in_f"])}


def outputs(p: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``scale [out_f, groups] float32`` and ``w_q [out_f, in_f] int8``."""
    ng = spec.n_groups(p["in_f"], p["group_size"])
    return {"scale": ((p["out_f"], ng), np.dtype(np.float32)),
            "w_q": ((p["out_f"], p["in_f"]), np.dtype(np.int8))}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """SPEC's steps A and B."""
    s = spec.scales(ins["w"], p["group_size"])
    return {"scale": s, "w_q": spec.weight_quantize(ins["w"], s, p["group_size"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """The list of ``out_f * ceil(in_f / G)`` groups, a team of lanes a group: blocks
    enough that no warp takes more than WARP_STEPS steps (the default, 1: a step each); with
    WARP_STEPS 0 one grid of at most the blocks that fit at once (BPS an SM, VEC4_BPS on the
    warp-a-group kernel), warps looping over steps."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    groups, path = o * spec.n_groups(f, g), geometry.group_path(f, g)
    grid = geometry.group_grid(launch, groups, path, v)
    launch(f"wq_{path}", grid, (launch.block, 1, 1), bufs["w"], np.int32(f), np.int32(g),
           np.int64(groups), bufs["scale"], bufs["w_q"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Group max, then divide: by a tensor 127 that torch.compile cannot fold
    (``divisors.divisor``: a constant's division is a multiply by its reciprocal, 1 ulp off
    SPEC's), and by the group's scale."""
    w, g = t["w"], p["group_size"]
    d127 = divisors.divisor(torch, 127.0, w.device)
    o, f = w.shape
    ng = spec.n_groups(f, g)
    padded = torch.nn.functional.pad(w, (0, ng * g - f)).view(o, ng, g)
    scale = padded.abs().amax(dim=2) / d127
    r = torch.round(padded / scale[:, :, None])
    wq = torch.where(scale[:, :, None] == 0, torch.zeros_like(r), r).clamp(-127, 127)
    return {"scale": scale, "w_q": wq.to(torch.int8).view(o, ng * g)[:, :f]}


STAGE = Stage(
    name="weight_quant_fused",
    entry_points=("wq_vec1", "wq_vec4", "wq_any"),
    description="scales and int8 weights in one pass over w",
    axes=axes.WEIGHT,
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"w": ((p["out_f"], p["in_f"]), np.dtype(np.float32))},
    outputs=outputs,
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    variants=(Variant("default", DEFINES, "a team of LANES lanes a group"),),
    block=128,
    # The floor: w read once, w_q and the scales written once.
    bytes_moved=lambda p: 5 * p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]),
    flops=lambda p: 2 * p["out_f"] * p["in_f"],
    tolerances={
        "scale": Exact("a max is exact and /127 is one IEEE division on both sides"),
        "w_q": Exact("one IEEE division and rint per element: exact (SPEC)"),
    },
    cases=(
        *cases.WEIGHT,
        {"out_f": 9, "in_f": 4096, "group_size": 4096},
        {"out_f": 33, "in_f": 520, "group_size": 256},  # wq_vec4, a short last group
        {"out_f": 40, "in_f": 1000, "group_size": 100},  # wq_vec1, G < 128: lanes left idle
        {"out_f": 301, "in_f": 3456},  # 8127 groups: a warp's last step cut short
        # More groups than an H200's one wave of warps takes in a step (16896): at the
        # default (WARP_STEPS 1) a grid past one wave, a step a warp; with WARP_STEPS 0
        # (a --define build, each bench point checked) the warps loop, over rows of whole
        # groups (PREFETCH's rotation) and over rows whose last group is short (a plain loop).
        {"out_f": 1201, "in_f": 2048},
        {"out_f": 2500, "in_f": 1000},
    ),
    default_sweep={"out_f": (3584, 18944), "in_f": (3584, 18944)},
    sanitize_shapes=cases.WEIGHT_SANITIZE,
)
