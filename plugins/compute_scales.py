"""Weight path step A: ``scale[o, g] = max |w| over group g / 127`` (float32)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Axis, Exact, Launcher, Point, Stage, Variant
from harness.spikes import families, spec

WARPS = 8  # groups per block of 256 threads: one warp a group


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's weights ``w [out_f, in_f]``."""
    return {"w": families.weights(rng, family, p["out_f"], p["in_f"])}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant,
              given: Mapping[str, np.ndarray] | None) -> dict[str, np.ndarray]:
    """Group maxima over 127 in float32."""
    return {"scale": spec.scales(ins["w"], p["group_size"])}


def launch(run: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One warp per (row, group)."""
    o, f, g = int(p["out_f"]), int(p["in_f"]), int(p["group_size"])
    groups = o * spec.n_groups(f, g)
    run("compute_scales", (-(-groups // WARPS), 1, 1), (32 * WARPS, 1, 1), bufs["w"],
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
    kernel="compute_scales.cu",
    entry_points=("compute_scales",),
    description="per-group abs-max of w over 127",
    axes=(
        Axis("out_f", 3584, int, "weight rows O", minimum=1),
        Axis("in_f", 3584, int, "weight columns F", minimum=1),
        Axis("group_size", 128, int, "G, columns per scale", minimum=1),
    ),
    make_inputs=make_inputs,
    outputs=lambda p: {"scale": ((p["out_f"], spec.n_groups(p["in_f"], p["group_size"])),
                                 np.dtype(np.float32))},
    reference=reference,
    launch=launch,
    torch_impl=torch_impl,
    bytes_moved=lambda p: 4 * p["out_f"] * p["in_f"]
    + 4 * p["out_f"] * spec.n_groups(p["in_f"], p["group_size"]),
    flops=lambda p: p["out_f"] * p["in_f"],
    tolerances={"scale": Exact("a max is exact and /127 is one IEEE division on both sides")},
    cases=(
        {"out_f": 1, "in_f": 3584}, {"out_f": 6, "in_f": 3584}, {"out_f": 7, "in_f": 5},
        {"out_f": 3, "in_f": 1}, {"out_f": 13, "in_f": 130}, {"out_f": 64, "in_f": 1000},
        {"out_f": 12, "in_f": 300, "group_size": 7}, {"out_f": 5, "in_f": 64, "group_size": 1},
        {"out_f": 9, "in_f": 4096, "group_size": 4096},
    ),
    default_sweep={"out_f": (3584, 4608, 18944)},
)
