"""SPEC step 4: ``q' = sum_t 2^(T-1-t) spikes[t] + o``, the same kernel for every mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, cases, families, inputs, spec
from harness.spikes import planes as plane_stages

#: The kernel's launch parameters (``enqueue`` reads them back from the variant, so
#: ``bench --define NAME=...`` tunes them): UNITS units of 4 values a lane loads (every
#: plane's word of each) before it sums, BPS blocks an SM resident (the kernel's
#: ``__launch_bounds__``), WARP_STEPS 1: blocks enough that each warp takes one chunk and
#: exits, blocks retiring and refilling (0: one wave of at most BPS blocks an SM, warps
#: looping over chunks). The A/B that chose WARP_STEPS: kernels/NOTES.md.
DEFINES = (("UNITS", "2"), ("BPS", "4"), ("WARP_STEPS", "1"))



def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Planes encoding the family's rescaled ``v`` in the point's mode, and its ``o``."""
    v, o = inputs.encodable(rng, family, p["batch"], p["in_f"], p["k"], p["planes"], p["mode"])
    return {"spikes": spec.encode(v, p["planes"], p["mode"]), "o": np.array([o], np.int32)}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """SPEC's weighted sum of the planes plus ``o``."""
    return {"q": spec.decode(ins["spikes"], int(ins["o"][0]))}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One streaming pass over the elements, every plane read once."""
    n = int(p["batch"]) * int(p["in_f"])
    launch("spike_decode", plane_stages.stream_grid(launch, n, v), (launch.block, 1, 1),
           bufs["spikes"], np.int64(n), np.int32(p["planes"]), bufs["o"], bufs["q"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """A weighted sum over the planes plus ``o``."""
    s, n = t["spikes"], p["planes"]
    w = (2 ** torch.arange(n - 1, -1, -1, device=s.device, dtype=torch.int32)).view(-1, 1, 1)
    return {"q": (s.to(torch.int32) * w).sum(dim=0, dtype=torch.int32) + t["o"]}


STAGE = Stage(
    name="spike_decode",
    entry_points=("spike_decode",),
    description="T int8 spike planes + o -> q' int32",
    axes=plane_stages.axes("mode the input planes were encoded in"),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"spikes": ((p["planes"], p["batch"], p["in_f"]), np.dtype(np.int8)),
                      "o": ((1,), np.dtype(np.int32))},
    outputs=lambda p: {"q": ((p["batch"], p["in_f"]), np.dtype(np.int32))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    bytes_moved=lambda p: (4 + p["planes"]) * p["batch"] * p["in_f"] + 4,
    flops=lambda p: 2 * p["planes"] * p["batch"] * p["in_f"],
    tolerances={"q": Exact("integer sum: exact")},
    variants=(Variant("default", DEFINES, "every mode: the planes carry their signs"),),
    cases=cases.per_mode((
        {"batch": 1, "in_f": 3584}, {"batch": 6, "in_f": 3584, "planes": 1},
        {"batch": 7, "in_f": 5, "planes": 3}, {"batch": 13, "in_f": 130, "planes": 8},
        {"batch": 33, "in_f": 4100, "planes": 12},
        {"batch": 2, "in_f": 999, "planes": spec.MAX_PLANES},
        {"batch": 5, "in_f": 100},  # 125 units: a warp's chunk cut short
        # More units than an H200's one wave of warps takes in a chunk: at the default
        # (WARP_STEPS 1) a grid past one wave, a chunk a warp; with WARP_STEPS 0 (a --define
        # build, each bench point checked) the warps loop.
        {"batch": 700, "in_f": 3584},
        {"batch": 3, "in_f": 3588, "planes": 8},  # the most planes summed in 16-bit lanes
    )),
    default_sweep=axes.BATCH_SWEEP,
)
