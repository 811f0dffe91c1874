"""SPEC step 1: per-row threshold ``vth`` and integer spikes ``q = round(x / vth)``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Axis, Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, spec, torchmath
from harness.spikes.refmath import is_away
from harness.spikes.tolerances import VTH


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Activations ``x [batch, in_f]`` of the family."""
    return {"x": families.activations(rng, family, p["batch"], p["in_f"], p["k"])}


def outputs(p: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``q [batch, in_f] int32`` and ``vth [batch] float32``."""
    return {"q": ((p["batch"], p["in_f"]), np.dtype(np.int32)),
            "vth": ((p["batch"],), np.dtype(np.float32))}


def reference(inputs: Mapping[str, np.ndarray], p: Point, v: Variant,
              given: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """``vth`` in float64; ``q`` from the kernel's own float32 ``vth`` when given (SPEC)."""
    x = inputs["x"]
    vth64 = spec.threshold64(x, p["k"], p["vth_min"], p["vth_max"])
    vth32 = given["vth"] if given is not None else vth64.astype(np.float32)
    return {"vth": vth64, "q": spec.quantise(x, vth32, is_away(v.defines))}


def check_inputs(inputs: Mapping[str, np.ndarray], p: Point) -> str | None:
    """A clamp bound that float32 cannot hold, or whose bounds are inverted, holds no value;
    step 1 must be well defined in float32 (:func:`harness.spikes.spec.threshold_problem`:
    a clamped vth can make |q| overflow int32, SPEC's bad input).

    A finite bound beyond float32's largest value (``vth_min=1e39``) is finite to the
    float64 reference but inf to the kernel, which takes the clamp in float32, and to the
    float32 vth the reference is cast to (numpy warns of the overflow): the row would time a
    clamp that no float32 value is. An infinite ``vth_max`` is the axis's default, no
    clamp, and passes."""
    for name in ("vth_min", "vth_max"):
        if math.isfinite(p[name]) and abs(p[name]) > spec.F32_MAX:
            return (f"bad input: {name} = {p[name]} is beyond float32 (the largest is "
                    f"{spec.F32_MAX:.4g}): the kernel takes the clamp in float32, where it "
                    "would be inf")
    if p["vth_min"] > p["vth_max"]:
        return (f"bad input: the clamp [vth_min, vth_max] = [{p['vth_min']}, {p['vth_max']}] "
                "holds no value (vth_min above vth_max)")
    return spec.threshold_problem(inputs["x"], p["k"], p["vth_min"], p["vth_max"])


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One block per row."""
    b, f = int(p["batch"]), int(p["in_f"])
    launch("dynamic_spikes", (b, 1, 1), (launch.block, 1, 1), bufs["x"], bufs["q"],
           bufs["vth"], np.int32(b), np.int32(f), np.float32(p["k"]),
           np.float32(p["vth_min"]), np.float32(p["vth_max"]))


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """The same math as a PyTorch user writes it (the torch and torch_compile peers)."""
    vth, q = torchmath.quantise(torch, t["x"], p["k"], (p["vth_min"], p["vth_max"]),
                                is_away(v.defines))
    return {"q": q, "vth": vth}


STAGE = Stage(
    name="dynamic_spikes",
    entry_points=("dynamic_spikes",),
    description="vth = mean|x| / k per row; q = round(x / vth) as int32",
    axes=(
        axes.BATCH,
        axes.IN_F,
        axes.K,
        Axis("vth_min", 0.0, float, "lower clamp of vth (0: none)"),
        Axis("vth_max", float("inf"), float, "upper clamp of vth (inf: none)"),
    ),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"x": ((p["batch"], p["in_f"]), np.dtype(np.float32))},
    outputs=outputs,
    reference=reference,
    enqueue=enqueue,
    check_inputs=check_inputs,
    torch_impl=torch_impl,
    # Read x once, write q and vth once.
    bytes_moved=lambda p: 8 * p["batch"] * p["in_f"] + 4 * p["batch"],
    # |x| and its sum, then one division per element.
    flops=lambda p: 3 * p["batch"] * p["in_f"],
    tolerances={
        "vth": VTH,
        "q": Exact("integer spikes, judged on the kernel's own vth so .5 ties match (SPEC)"),
    },
    variants=(
        Variant("default", help="round half to even (rintf)"),
        Variant("away", (("ROUNDING_AWAY", "1"),), "round half away from zero"),
    ),
    cases=(
        *cases.ACTIVATION,
        {"batch": 12, "in_f": 4100},  # wider than the register cache: aligned tail loop
        {"batch": 5, "in_f": 20003},  # long odd rows: scalar tail loop
        {"batch": 64, "in_f": 3584, "k": 2.5},
        {"batch": 8, "in_f": 3584, "vth_min": 1e-5, "vth_max": 1e4},
        {"batch": 8, "in_f": 96, "vth_min": 0.5, "vth_max": 0.6},  # the clamp bites
    ),
    default_sweep=axes.BATCH_SWEEP,
)
