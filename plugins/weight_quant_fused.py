"""Weight path steps A and B in one pass over w: ``scale`` and ``w_q`` from ``w``.

One warp per group whatever the matrix's shape, so tall (18944x3584) and wide (3584x18944)
matrices are the same list of groups; w is read once and kept in registers between the
group max and the quantisation. Exactly ``compute_scales`` then ``weight_quantize``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, spec

#: Warps per block (a launch parameter; ``bench --define WARPS=...`` tunes it): on the H200,
#: 4 was faster than 8 at every UNROLL (statistics/h200/tuning/).
WARPS = 4
#: UNROLL-group steps per warp (a launch parameter: the grid shrinks by it, and each warp
#: loads its next step while it reduces this one). ITERS 8 with UNROLL 1 was the fastest
#: setting tuned on the H200, on both 3584 x 3584 and 18944 x 3584.
ITERS = 8
#: Groups a warp loads at a time in the vector kernels (kernels/weight_quant_fused.cu,
#: -DUNROLL; ``enqueue`` reads it from the variant, so ``bench --define UNROLL=...`` tunes it).
UNROLL = 1


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


def kernel_for(f: int, g: int) -> str:
    """The entry point for this shape: 16-byte loads when rows and groups are aligned."""
    if f % 4 == 0 and g % 4 == 0:
        if g <= 128:
            return "wq_vec1"
        if g <= 512:
            return "wq_vec4"
    return "wq_any"


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """A warp per UNROLL groups of the O * ceil(F / G), all in one grid: a grid capped at
    1056 blocks with a grid-stride loop (1.33 waves of 792 resident blocks) keeps the kernel
    at 57 % of DRAM peak. Blocks of WARPS warps, the variant's launch parameter."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    groups = o * spec.n_groups(f, g)
    name = kernel_for(f, g)
    d = dict(v.defines)
    per_warp = int(d["UNROLL"]) if name != "wq_any" else 1
    warps, iters = int(d.get("WARPS", WARPS)), int(d.get("ITERS", ITERS))
    blocks = max(1, -(-groups // (warps * per_warp * iters)))
    launch(name, (blocks, 1, 1), (32 * warps, 1, 1), bufs["w"], np.int32(f), np.int32(g),
           np.int64(groups), bufs["scale"], bufs["w_q"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Group max, then divide: by a tensor 127 (a Python 127.0 makes torch multiply by its
    reciprocal, 1 ulp off SPEC's division), and by the group's scale."""
    w, g = t["w"], p["group_size"]
    o, f = w.shape
    ng = spec.n_groups(f, g)
    padded = torch.nn.functional.pad(w, (0, ng * g - f)).view(o, ng, g)
    scale = padded.abs().amax(dim=2) / torch.full((1, 1), 127.0, device=w.device)
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
    variants=(Variant("default", (("UNROLL", str(UNROLL)), ("WARPS", str(WARPS)),
                                  ("ITERS", str(ITERS))), "one warp per group"),),
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
        {"out_f": 40, "in_f": 1000, "group_size": 100},  # wq_vec1, a short last group
        {"out_f": 301, "in_f": 3584},  # an odd number of groups: half-used UNROLL
    ),
    default_sweep={"out_f": (3584, 18944), "in_f": (3584, 18944)},
)
