"""SPEC step 3: bitwise spike encoding ``v -> spikes [T, B, F] int8``; the three modes are
compiled variants (``-DMODE``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, families, inputs, spec, torchmath
from harness.spikes import planes as plane_stages

#: The kernel's launch parameters (``enqueue`` reads them back from the variant, so
#: ``bench --define NAME=...`` tunes them): UNITS int4 a lane loads before it stores, BPS
#: blocks an SM resident (the kernel's ``__launch_bounds__``), WARP_STEPS 1: blocks enough
#: that each warp takes one chunk and exits, blocks retiring and refilling (0: one wave of
#: at most BPS blocks an SM, warps looping over chunks). The A/B that chose WARP_STEPS:
#: kernels/NOTES.md.
DEFINES = (("UNITS", "4"), ("BPS", "4"), ("WARP_STEPS", "1"))



def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's transformed spikes ``v``, rescaled to fill the mode's ``T`` planes."""
    v, _ = inputs.encodable(rng, family, p["batch"], p["in_f"], p["k"], p["planes"], p["mode"])
    return {"v": v}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """SPEC's planes, most significant first."""
    return {"spikes": spec.encode(ins["v"], p["planes"], p["mode"])}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One streaming pass: read v once, write every plane."""
    n = int(p["batch"]) * int(p["in_f"])
    launch("spike_encode", plane_stages.stream_grid(launch, n, v), (launch.block, 1, 1), bufs["v"],
           np.int64(n), np.int32(p["planes"]), bufs["spikes"])


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
    variants=plane_stages.mode_variants(*DEFINES),
    cases=(
        *plane_stages.CASES,
        {"batch": 5, "in_f": 100},  # 125 units: a warp's chunk cut short
        # More units than an H200's one wave of warps takes in a chunk: at the default
        # (WARP_STEPS 1) a grid past one wave, a chunk a warp; with WARP_STEPS 0 (a --define
        # build, each bench point checked) the warps loop.
        {"batch": 700, "in_f": 3584},
        {"batch": 3, "in_f": 3588, "planes": 8},  # the most planes of the byte path
    ),
    default_sweep=axes.BATCH_SWEEP,
)
