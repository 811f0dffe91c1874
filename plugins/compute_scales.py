"""Weight path step A: ``scale[o, g] = max |w| over group g / 127`` (float32)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, spec


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's weights ``w [out_f, in_f]``."""
    return {"w": families.weights(rng, family, p["out_f"], p["in_f"])}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """Group maxima over 127 in float32."""
    return {"scale": spec.scales(ins["w"], p["group_size"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One warp per (row, group): a block holds ``block / 32`` groups."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    groups, warps = o * spec.n_groups(f, g), launch.block // 32
    launch("compute_scales", (-(-groups // warps), 1, 1), (launch.block, 1, 1), bufs["w"],
           np.int32(o), np.int32(f), np.int32(g), bufs["scale"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Zero-pad to whole groups, view as groups, ``amax / 127``."""
    w, g = t["w"], p["group_size"]
    o, f = w.shape
    ng = spec.n_groups(f, g)
    padded = torch.nn.functional.pad(w.abs(), (0, ng * g - f))
    return {"scale": padded.view(o, ng, g).amax(dim=2) / 127.0}


STAGE = Stage(
    name="compute_scales",
    entry_points=("compute_scales",),
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
    bytes_moved=lambda p: 4 * p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]),
    flops=lambda p: p["out_f"] * p["in_f"],
    tolerances={"scale": Exact("a max is exact and /127 is one IEEE division on both sides")},
    cases=(*cases.WEIGHT, {"out_f": 9, "in_f": 4096, "group_size": 4096}),
    default_sweep=axes.WEIGHT_SWEEP,
)
