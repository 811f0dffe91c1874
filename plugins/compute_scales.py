"""Weight path step A: ``scale[o, g] = max |w| over group g / 127`` (float32)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, divisors, families, geometry, spec


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's weights ``w [out_f, in_f]``."""
    return {"w": families.weights(rng, family, p["out_f"], p["in_f"])}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """Group maxima over 127 in float32."""
    return {"scale": spec.scales(ins["w"], p["group_size"])}


#: The kernel's launch parameters (``enqueue`` reads them back from the variant, so
#: ``bench --define NAME=...`` tunes them): LANES lanes a group in scales_vec1 (32 / LANES
#: groups a warp's step), BPS blocks an SM resident (scales_vec1's ``__launch_bounds__``;
#: VEC4_BPS scales_vec4's), WARP_STEPS 1: blocks enough that each warp takes one step and
#: exits (0: one persistent wave of the blocks that fit, warps looping over steps),
#: PREFETCH 0: nothing loaded ahead (1: a warp with steps left loads its next before it
#: reduces this one; at WARP_STEPS 1 none has, so it changed nothing but the registers, 64
#: against 40, within the A/B's noise). The A/B: kernels/NOTES.md.
DEFINES = (("LANES", "8"), ("BPS", "8"), ("VEC4_BPS", "8"), ("PREFETCH", "0"),
           ("WARP_STEPS", "1"))


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """The list of ``out_f * ceil(in_f / G)`` groups, a team of lanes a group: blocks
    enough that no warp takes more than WARP_STEPS steps of groups (with 0, one grid of at
    most the blocks that fit at once, warps looping over the steps)."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    groups, path = o * spec.n_groups(f, g), geometry.group_path(f, g)
    grid = geometry.group_grid(launch, groups, path, v)
    launch(f"scales_{path}", grid, (launch.block, 1, 1), bufs["w"], np.int32(f), np.int32(g),
           np.int64(groups), bufs["scale"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Zero-pad to whole groups, view as groups, ``amax`` over a tensor 127 that
    torch.compile cannot fold (``divisors.divisor``: a constant's division is a multiply
    by its reciprocal, 1 ulp off SPEC's)."""
    w, g = t["w"], p["group_size"]
    d127 = divisors.divisor(torch, 127.0, w.device)
    o, f = w.shape
    ng = spec.n_groups(f, g)
    padded = torch.nn.functional.pad(w.abs(), (0, ng * g - f))
    return {"scale": padded.view(o, ng, g).amax(dim=2)
            / d127}


STAGE = Stage(
    name="compute_scales",
    entry_points=("scales_vec1", "scales_vec4", "scales_any"),
    description="per-group abs-max of w over 127",
    axes=axes.WEIGHT,
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"w": ((p["out_f"], p["in_f"]), np.dtype(np.float32))},
    outputs=lambda p: {"scale": ((p["out_f"], spec.n_groups(p["in_f"], p["group_size"])),
                                 np.dtype(np.float32))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    variants=(Variant("default", DEFINES, "a team of LANES lanes a group"),),
    block=128,
    bytes_moved=lambda p: 4 * p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]),
    flops=lambda p: p["out_f"] * p["in_f"],
    tolerances={"scale": Exact("a max is exact and /127 is one IEEE division on both sides")},
    cases=(
        *cases.WEIGHT,
        {"out_f": 9, "in_f": 4096, "group_size": 4096},  # scales_any: G > 512
        {"out_f": 33, "in_f": 520, "group_size": 256},  # scales_vec4, a short last group
        {"out_f": 40, "in_f": 1000, "group_size": 100},  # scales_vec1, G < 128: lanes left idle
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
