"""SPEC step 4 on activation_fused's bit-packed planes: ``q' = v + o`` from ``[P, B, W]``
words (``harness.spikes.spec.pack``'s layout); the mode is compiled in (``-DMODE``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Exact, Launcher, Point, Stage, Variant
from harness.spikes import axes, families, inputs, spec, torchmath
from harness.spikes import planes as plane_stages


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """The family's rescaled ``v`` in the point's mode, packed, and its ``o``."""
    v, o = inputs.encodable(rng, family, p["batch"], p["in_f"], p["k"], p["planes"], p["mode"])
    return {"packed": spec.pack(v, p["planes"], p["mode"]), "o": np.array([o], np.int32)}


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """The unpacked ``v`` plus ``o``."""
    vals = spec.unpack(ins["packed"], p["planes"], p["mode"], p["in_f"])
    return {"q": (vals.astype(np.int64) + int(ins["o"][0])).astype(np.int32)}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """One block per row."""
    b, f = int(p["batch"]), int(p["in_f"])
    launch("spike_decode_packed", (b, 1, 1), (launch.block, 1, 1), bufs["packed"],
           np.int32(b), np.int32(f), np.int32(p["planes"]), bufs["o"], bufs["q"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """Bits out of the words by shifts, then the weighted sum of the planes."""
    words, n, m = t["packed"], p["planes"], spec.check_mode(p["mode"])
    bits = torchmath.unpack_bits(torch, words, p["in_f"])
    w = (2 ** torch.arange(n - 1, -1, -1, device=words.device, dtype=torch.int64)).view(-1, 1, 1)
    acc = (bits[:n] * w).sum(dim=0)
    if m == 1:
        acc = torch.where(bits[n] == 1, -acc, acc)
    elif m == 2:
        acc = acc - 2 * (bits[0] << (n - 1))
    return {"q": (acc + t["o"]).to(torch.int32)}


STAGE = Stage(
    name="spike_decode_packed",
    entry_points=("spike_decode_packed",),
    description="bit-packed planes -> q' = v + o",
    axes=plane_stages.axes("encoding mode (set by the variant)"),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"packed": ((spec.packed_planes(p["planes"], p["mode"]), p["batch"],
                                  -(-p["in_f"] // 32)), np.dtype(np.uint32)),
                      "o": ((1,), np.dtype(np.int32))},
    outputs=lambda p: {"q": ((p["batch"], p["in_f"]), np.dtype(np.int32))},
    reference=reference,
    enqueue=enqueue,
    torch_impl=torch_impl,
    # The packed words read once (P planes of 4 bytes per 32 values), q' written once.
    bytes_moved=lambda p: 4 * spec.packed_planes(p["planes"], p["mode"]) * p["batch"]
    * -(-p["in_f"] // 32) + 4 * p["batch"] * p["in_f"],
    flops=lambda p: 0,
    tolerances={"q": Exact("integer sums: exact")},
    variants=plane_stages.mode_variants(),
    cases=plane_stages.CASES,
    default_sweep=axes.BATCH_SWEEP,
)
