"""SPEC step 3: bitwise spike encoding ``v -> spikes [T, B, F] int8``; the three modes are
compiled variants (``-DMODE``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, families, inputs, spec, torchmath
from harness.spikes import planes as plane_stages
from harness.spikes.geometry import grid_stride


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's transformed spikes ``v``, rescaled to fill the mode's ``T`` planes."""
    v, _ = inputs.encodable(rng, family, p["batch"], p["in_f"], p["k"], p["planes"], p["mode"])
    return {"v": v}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """SPEC's planes, most significant first."""
    return {"spikes": spec.encode(ins["v"], p["planes"], p["mode"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One grid-stride pass: read v once, write every plane."""
    n = int(p["batch"]) * int(p["in_f"])
    launch("spike_encode", *grid_stride(n, launch.block), bufs["v"], np.int64(n),
           np.int32(p["planes"]), bufs["spikes"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Shifts and masks per plane, stacked (most significant first)."""
    return {"spikes": torchmath.encode(torch, t["v"], p["planes"], p["mode"]).to(torch.int8)}


STAGE = Stage(
    name="spike_encode",
    entry_points=("spike_encode",),
    description="v -> T int8 spike planes, most significant first",
    axes=plane_stages.axes("encoding mode (set by the variant)"),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"v": ((p["batch"], p["in_f"]), np.dtype(np.int32))},
    outputs=lambda p: {"spikes": ((p["planes"], p["batch"], p["in_f"]), np.dtype(np.int8))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    bytes_moved=lambda p: (4 + p["planes"]) * p["batch"] * p["in_f"],
    flops=lambda p: 0,
    tolerances={"spikes": Exact("integer planes: exact")},
    variants=plane_stages.mode_variants(),
    cases=plane_stages.CASES,
    default_sweep=axes.BATCH_SWEEP,
)
