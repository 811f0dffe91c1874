"""SPEC step 6 evaluated plane by plane, as spiking hardware evaluates the layer: the fused
activation stage's bit-packed spike planes (its ``packed_unidirectional`` layout, T bits a
value) against the weights' eight bit planes (w_q in two's complement), every pair one binary
tensor-core MMA (AND, then popcount over 128 values), the planes' significances put back by
shifts:
``out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in g} q[m, f] * w_q[n, f]) + bias[n]``
with ``q = sum_t 2^(T-1-t) plane_t + o`` and the offset folded back through each group's
weight sum (``w_sum``, emitted with the weights' planes, once).

It prices literal spike-by-spike evaluation on tensor cores (8 T binary MMAs where
``int_gemm`` takes one int8 MMA per 32 values): a measured number beside ``int_gemm_packed``
(the same planes decoded to int8 in the tile load), not a tuned GEMM. Exact for T <= 8
(v = q - o within 8 bits) and G a multiple of 128, every group sum within int32; any M, N,
K.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Launcher, Point, Rows, Stage, Variant
from harness.spikes import axes, families, geometry, inputs, spec, torchmath
from harness.spikes.tolerances import INT_GEMM_OUT

MODE = "unidirectional"
#: The weights' planes: w_q's 8 bits in two's complement (plane 0 the sign, worth -128).
WEIGHT_MODE = "twos_complement"
WEIGHT_PLANES = 8
#: The most spike planes the kernel holds (PL_TMAX): v = q - o within 8 bits.
MAX_T = 8
#: Values one binary MMA sums (m16n8k128): a group must be whole multiples of it.
CHUNK = 128
#: A CTA's tile of out (PL_BM x PL_BN) and its threads (four warps).
TILE_M, TILE_N, THREADS = 64, 32, 128



def words(p: Point) -> int:
    """32-value words a row of a plane."""
    return inputs.packed_words(p["in_f"])


def capacity(p: Point) -> int:
    """Spike planes the input buffer holds: the most T a row of this width can need."""
    return spec.plane_bound(p["k"], p["in_f"], MODE)


def weight_planes(w_q: np.ndarray) -> np.ndarray:
    """w_q's bit planes ``[8, N, ceil(K / 32)] uint32``, packed as the spike planes."""
    return spec.pack(w_q.astype(np.int32), WEIGHT_PLANES, WEIGHT_MODE)


def group_sums(w_q: np.ndarray, g: int) -> np.ndarray:
    """``sum_{f in g} w_q[n, f]`` as int32 ``[N, ceil(K / G)]`` (the last group may be
    shorter)."""
    n, k = w_q.shape
    pad = np.zeros((n, spec.n_groups(k, g) * g), dtype=np.int64)
    pad[:, :k] = w_q
    return pad.reshape(n, -1, g).sum(axis=2).astype(np.int32)


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Step 1's activations as the fused stage leaves them (the packed planes of v = q - o
    in a buffer of ``capacity`` planes, T written, and [qmin, qmax, o, T]); the quantized
    weights as their bit planes and group sums, their scales; a bias."""
    g = int(p["group_size"])
    act = inputs.packed_activations(rng, family, p, MODE)
    _, scale, w_q = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], g)
    return {**act, "w_bits": weight_planes(w_q), "w_sum": group_sums(w_q, g), "scale": scale,
            "bias": families.bias(rng, family, p["out_f"])}


def q_of(ins: Mapping[str, np.ndarray], p: Point) -> np.ndarray:
    """q as the planes and stats give it (SPEC step 4)."""
    return inputs.packed_q(ins["planes"], ins["stats"], MODE, p["in_f"])


def w_q_of(ins: Mapping[str, np.ndarray], p: Point) -> np.ndarray:
    """w_q as its bit planes give it."""
    return spec.unpack(ins["w_bits"], WEIGHT_PLANES, WEIGHT_MODE, int(p["in_f"]))


def check_inputs(ins: Mapping[str, np.ndarray], p: Point) -> str | None:
    """T between 1 and the kernel's 8 planes, held by the buffer; G whole binary MMAs;
    every group sum within int32."""
    qmin, qmax, _, t = (int(x) for x in ins["stats"])
    if not 1 <= t <= MAX_T:
        return (f"bad input: stats say T = {t}; plane-by-plane evaluation takes 1 to {MAX_T} "
                "planes (v = q - o within 8 bits)")
    if t > ins["planes"].shape[0]:
        return f"bad input: stats say T = {t}, the planes buffer holds {ins['planes'].shape[0]}"
    if int(p["group_size"]) % CHUNK:
        return (f"bad input: group_size {p['group_size']} is not a multiple of {CHUNK}: a "
                "binary MMA's values would straddle two groups")
    big = max(-qmin, qmax)
    return spec.q_reach_problem(big, p["group_size"], p["in_f"], byte_planes=False)


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Any) -> dict[str, np.ndarray]:
    """The product in float64 on the decoded q and w_q (exact group sums)."""
    return {"out": spec.group_gemm64(q_of(ins, p), w_q_of(ins, p), ins["scale"], ins["vth"],
                                     ins["bias"], int(p["group_size"]))}


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Any) -> dict[str, Any]:
    """W8ASpike from both sides' planes as PyTorch writes it: the planes unpacked (T read on
    the host), q and w_q rebuilt, both dequantised, one fp32 matmul (TF32 off)."""
    k, g = int(p["in_f"]), int(p["group_size"])
    dev = t["planes"].device
    q = torchmath.packed_q(torch, t["planes"], t["stats"], k)
    wsig = torch.tensor([-128, 64, 32, 16, 8, 4, 2, 1], dtype=torch.int64, device=dev)
    w_q = (torchmath.unpack_bits(torch, t["w_bits"], k) * wsig[:, None, None]).sum(dim=0)
    x_rec = q.to(torch.float32) * t["vth"][:, None]
    return {"out": x_rec @ torchmath.dequantised(torch, w_q, t["scale"], g).T + t["bias"]}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Any) -> None:
    """One CTA a 64 x 32 tile of out."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    grid = (geometry.cdiv(n, TILE_N), geometry.cdiv(m, TILE_M), 1)
    launch("int_gemm_planes", grid, (THREADS, 1, 1),
           bufs["planes"], bufs["stats"], bufs["w_bits"], bufs["w_sum"], bufs["scale"],
           bufs["vth"], bufs["bias"], np.int32(m), np.int32(n), np.int32(k), np.int32(g),
           bufs["out"])


def bytes_moved(p: Point) -> int:
    """T spike planes (T = 6 assumed), the weights' 8 planes (a byte a weight), their group
    sums and scales, vth and bias read once; out written once."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    w = words(p)
    return 4 * spec.TYPICAL_T * m * w + 16 + 4 * WEIGHT_PLANES * n * w \
        + 8 * n * spec.n_groups(k, g) + 4 * m + 4 * n + 4 * m * n


STAGE = Stage(
    name="int_gemm_planes",
    entry_points=("int_gemm_planes",),
    description="the layer plane by plane: spike planes x weight bit planes, binary MMAs "
                "(AND, popcount) and shifts, exact group sums",
    axes=(axes.BATCH, axes.OUT_F, axes.WEIGHT_IN_F, axes.GROUP_SIZE, axes.K_INPUT),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {
        "planes": ((capacity(p), p["batch"], words(p)), np.dtype(np.uint32)),
        "stats": ((4,), np.dtype(np.int32)),
        "w_bits": ((WEIGHT_PLANES, p["out_f"], words(p)), np.dtype(np.uint32)),
        "w_sum": ((p["out_f"], spec.n_groups(p["in_f"], p["group_size"])), np.dtype(np.int32)),
        # the layer's scale, vth and bias; w_q comes as its planes
        **{k: s for k, s in inputs.layer_specs(p).items() if k != "w_q"}},
    outputs=inputs.layer_out,
    reference=reference,
    enqueue=enqueue,
    bytes_moved=bytes_moved,
    flops=inputs.layer_flops,
    tolerances={"out": INT_GEMM_OUT},
    block=THREADS,
    cases=(
        {"batch": 1, "out_f": 384, "in_f": 1024},          # one row
        {"batch": 77, "out_f": 70, "in_f": 512},           # M, N not tile multiples
        {"batch": 7, "out_f": 3, "in_f": 5},               # K < a word, one short group
        {"batch": 33, "out_f": 130, "in_f": 130},          # K % 32 != 0: padding bits
        {"batch": 65, "out_f": 129, "in_f": 300, "group_size": 256},  # two MMAs a group
        {"batch": 130, "out_f": 64, "in_f": 3584},         # several row tiles, 28 groups
        {"batch": 12, "out_f": 256, "in_f": 1024, "k": 0.25},   # T small
        {"batch": 140, "out_f": 96, "in_f": 1024, "k": 8.0},
        {"batch": 9, "out_f": 96, "in_f": 2048, "k": 16.0},     # T = 8, v past 127
    ),
    default_sweep={"batch": (1, 16, 1024, 8192), "out_f": (18944, 3584)},
    sanitize_shapes=({"batch": 70, "out_f": 40, "in_f": 300},),
    # T <= 8 planes: the llm family's outliers and the edge rows' extremes need more.
    variants=(Variant("default", help="T <= 8 spike planes, G a multiple of 128",
                      families=("normal", "ramp")),),
    check_inputs=check_inputs,
    torch_impl=torch_impl,
    # Each row of out is that row of the planes and vth against the whole of the weights.
    rows=Rows("batch", {"planes": 1, "vth": 0}, {"out": 0}),
    compute_peak="int8_dense",
)
