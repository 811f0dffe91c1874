"""SPEC step 6 fed by the spikes themselves: the integer GEMM with group scales (as
``int_gemm``), whose A operand is the fused activation stage's bit-packed planes (its
``packed_unidirectional`` layout: T bits a value, 32 values a word) and the stats it decided
on the device (o and T), instead of q:
``out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in g} q[m, f] * w_q[n, f]) + bias[n]``
with ``q = sum_t 2^(T-1-t) plane_t + o``.

No decode pass and no q in memory: the kernel decodes q where it loads A. Two paths:
``int_gemm_packed_wgmma`` (and ``_single`` up to two M blocks, K split where its tiles are
few) where N and K are multiples of 128 and G is 128, the int8 decode only: int_gemm's
Hopper kernel, whose producer warpgroups (two, 512 threads a CTA) decode each stage's A tile
from the planes into shared memory where int_gemm's has TMA load q8
(``harness.spikes.wgmma`` launches both); and the general path (mma.sync, any shape), which
decodes 16 values at a time in its A-tile load. Two variants, as ``int_gemm``'s (the
``q_type`` axis): ``default`` decodes q as int8 in byte arithmetic mod 256 (planes worth 2^8
and more drop out, o is added bytewise), exact where q fits int8 as the q8 path; ``wide``
decodes q whole in int32 and splits it into three byte planes (three MMAs; the general path
only), exact for every family.

The wgmma kernels are built for sm_90a, so the stage is arch-specific, its general path too.
A ``--define`` of the general path's tile (``IGG_*``) reaches only the points that take it:
a tile sweep on N and K multiples of 128 (G = 128) times the wgmma kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Axis, BadInput, Launcher, Point, Rows, Stage, Variant
from harness.spikes import axes, families, geometry, inputs, spec, torchmath, wgmma
from harness.spikes.tolerances import INT_GEMM_OUT

MODE = "unidirectional"
#: Byte planes of q a k step, by the variant's decode (the module's PACKED_WIDE).
Q_PLANES = {"int8": 1, "int32": 3}



def words(p: Point) -> int:
    """32-value words a row of a plane."""
    return inputs.packed_words(p["in_f"])


def capacity(p: Point) -> int:
    """Planes the input buffer holds: the most T a row of this width can need at this k."""
    return spec.plane_bound(p["k"], p["in_f"], MODE)


def stage_rows(m: int, small_box: bool = True) -> int:
    """Rows of a staged box of the planes: the tile's 128, or M rounded up to 8 where M is
    smaller (the kernel's ``stage_rows``, whose barrier expects that many rows' bytes);
    128 at every M in a build of IGP_SMALL_BOX=0 (``small_box`` False)."""
    return min(wgmma.TILE, geometry.cdiv(m, 8) * 8) if small_box else wgmma.TILE


def _small_box(v: Variant) -> bool:
    """The build's IGP_SMALL_BOX as the kernel's preprocessor reads it (0 or 1; another value
    is refused: a box unlike the kernel's would leave its barrier waiting for bytes)."""
    raw = dict(v.defines).get("IGP_SMALL_BOX", "1")
    if raw not in ("0", "1"):
        raise BadInput(f"int_gemm_packed: IGP_SMALL_BOX={raw}: 0 or 1")
    return raw == "1"


def _shape(p: Point) -> tuple[int, int, int, int, int]:
    """M, N, K, G and q's byte planes of the point."""
    return (*(int(p[a]) for a in ("batch", "out_f", "in_f", "group_size")),
            Q_PLANES[p["q_type"]])


def path(p: Point) -> str:
    """The kernel a point runs on: ``wgmma`` (the int8 decode, N and K multiples of 128, G
    = 128) or ``general``."""
    _, n, k, g, _ = _shape(p)
    return "wgmma" if p["q_type"] == "int8" and wgmma.fits(n, k, g) else "general"


def plan(p: Point, tile: geometry.GeneralTile = geometry.GENERAL_TILE) -> dict[str, Any]:
    """The point's launch: the wgmma path's workspace (``wgmma.plan``), or the general
    path's launch on ``tile`` (int_gemm's, shared: ``geometry.general_gemm_plan``)."""
    if path(p) == "wgmma":
        return wgmma.plan(*_shape(p)[:3])
    return geometry.general_gemm_plan(*_shape(p), tile)


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Step 1's activations of the family as the fused stage leaves them (the packed planes
    of v = q - o in a buffer of ``capacity`` planes, T of them written, and [qmin, qmax, o,
    T]), the quantized weights and their scales, a bias."""
    act = inputs.packed_activations(rng, family, p, MODE)
    _, scale, w_q = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], p["group_size"])
    return {**act, "w_q": w_q, "scale": scale, "bias": families.bias(rng, family, p["out_f"])}


def q_of(ins: Mapping[str, np.ndarray], p: Point) -> np.ndarray:
    """q as the planes and stats give it (SPEC step 4)."""
    return inputs.packed_q(ins["planes"], ins["stats"], MODE, p["in_f"])


def check_inputs(ins: Mapping[str, np.ndarray], p: Point) -> str | None:
    """The planes buffer must hold T planes (on the wgmma path, the layout's ``capacity``
    planes, T at most that); q must fit the variant's decode (int8), and every group sum
    int32."""
    qmin, qmax, _, t = (int(x) for x in ins["stats"])
    if t < 1:
        return f"bad input: stats say T = {t}, SPEC's T is at least 1"
    if t > ins["planes"].shape[0]:
        return f"bad input: stats say T = {t}, the planes buffer holds {ins['planes'].shape[0]}"
    if path(p) == "wgmma":
        # The wgmma kernel's tensor map spans ``capacity`` planes (enqueue): a T past it
        # would read zeros, a shorter buffer would be read past its end.
        cap = capacity(p)
        if t > cap or ins["planes"].shape[0] < cap:
            return (f"bad input: stats say T = {t} in a buffer of {ins['planes'].shape[0]} "
                    f"planes; the layout at in_f {p['in_f']}, k {p['k']} is {cap} planes, "
                    "T at most that")
    if p["q_type"] == "int8" and not spec.fits_int8(qmin, qmax):
        return (f"bad input: q reaches [{qmin}, {qmax}], beyond int8: the wide variant "
                "decodes it")
    big = max(-qmin, qmax)
    return spec.q_reach_problem(big, p["group_size"], p["in_f"], byte_planes=True)


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """The product in float64 on the decoded q (exact group sums)."""
    return {"out": spec.group_gemm64(q_of(ins, p), ins["w_q"], ins["scale"], ins["vth"],
                                     ins["bias"], int(p["group_size"]))}


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """W8ASpike from the packed planes as PyTorch writes it: the T planes unpacked (T, a
    shape, read on the host), q = v + o, both sides dequantised, one fp32 matmul (TF32
    off)."""
    k, g = int(p["in_f"]), int(p["group_size"])
    q = torchmath.packed_q(torch, t["planes"], t["stats"], k)
    x_rec = q.to(torch.float32) * t["vth"][:, None]
    return {"out": x_rec @ torchmath.dequantised(torch, t["w_q"], t["scale"], g).T
            + t["bias"]}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """The wgmma path (its persistent grid, A's planes and stats after the tensor maps), or
    the general path's grid: column tiles, row tiles, splits of K."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    if path(p) == "wgmma":
        # The planes' map for the kernel's staging (P M rows of W words, a box of one
        # plane's K tile: 128 rows, or M rounded up to 8 where M is smaller, as the kernel's
        # stage_rows, so that no box of a small M runs far past the map; 4 words), then the
        # planes themselves and the stats.
        wgmma.enqueue(launch, "int_gemm_packed_wgmma", bufs, m, n, k, lambda cn: (
            launch.tensor_map(bufs["planes"], np.uint32, capacity(p) * m, words(p),
                              stage_rows(m, _small_box(v)),
                              wgmma.TILE // 32, swizzle=0),
            bufs["planes"], bufs["stats"]), a_first=False)
        return
    # a -D build as it was compiled
    pl = plan(p, geometry.GeneralTile.launchable(dict(v.defines), "int_gemm_packed"))
    launch("int_gemm_packed", pl["grid"], (pl["threads"], 1, 1),
           bufs["planes"], bufs["stats"], bufs["w_q"], bufs["scale"], bufs["vth"],
           bufs["bias"], np.int32(m), np.int32(n), np.int32(k), np.int32(g),
           np.int32(pl["splits"]), bufs["ws"], bufs["counters"], bufs["out"],
           shared=pl["smem"])


def workspace(p: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Split-K partial sums and their tickets (zeros between runs): the wgmma path's, or the
    general path's for any tile a build may have (``geometry.general_gemm_workspace``)."""
    pl = plan(p)
    ws, counters = ((pl["ws"], pl["counters"]) if pl["kind"] == "wgmma"
                    else geometry.general_gemm_workspace(*_shape(p)))
    return {"ws": ((ws,), np.dtype(np.float32)),
            "counters": ((counters,), np.dtype(np.uint32))}


def bytes_moved(p: Point) -> int:
    """T planes (T = 6 assumed), the weights and their scales, vth and bias read once; out
    written once."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    return 4 * spec.TYPICAL_T * m * words(p) + 16 + n * k + 4 * n * geometry.cdiv(k, g) \
        + 4 * m + 4 * n + 4 * m * n


STAGE = Stage(
    name="int_gemm_packed",
    entry_points=("int_gemm_packed_wgmma", "int_gemm_packed_wgmma_single", "int_gemm_packed"),
    description="exact integer GEMM with group scales, A read as bit-packed spike planes "
                "(decoded in the tile load; no q in memory)",
    axes=(axes.BATCH, axes.OUT_F, axes.WEIGHT_IN_F, axes.GROUP_SIZE, axes.K_INPUT,
          Axis("q_type", "int8", str, "the type q is decoded to (set by the variant)",
               choices=tuple(Q_PLANES))),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {
        "planes": ((capacity(p), p["batch"], words(p)), np.dtype(np.uint32)),
        "stats": ((4,), np.dtype(np.int32)),
        **inputs.layer_specs(p)},
    outputs=inputs.layer_out,
    reference=reference,
    enqueue=enqueue,
    bytes_moved=bytes_moved,
    flops=inputs.layer_flops,
    tolerances={"out": INT_GEMM_OUT},
    cases=(
        {"batch": 1, "out_f": 384, "in_f": 1024},          # one row (int8: wgmma, split K)
        {"batch": 77, "out_f": 256, "in_f": 512},          # M not a tile multiple
        {"batch": 300, "out_f": 384, "in_f": 3584},        # several row tiles (int8: pairs)
        {"batch": 520, "out_f": 1024, "in_f": 512},        # int8: 3 x 8 pair tiles, M partial
        {"batch": 12, "out_f": 256, "in_f": 1024, "k": 0.5},   # int8: wgmma, T small
        {"batch": 300, "out_f": 256, "in_f": 1024, "k": 16.0},  # int8: pairs, T = 8
        # int8: the decoder at every T the families give (normal T 2, 4, 7; ramp 1, 2, 5)
        {"batch": 12, "out_f": 256, "in_f": 1024, "k": 0.25},
        {"batch": 40, "out_f": 128, "in_f": 512, "k": 1.0},
        {"batch": 140, "out_f": 256, "in_f": 1024, "k": 8.0},
        {"batch": 7, "out_f": 3, "in_f": 5, "group_size": 2},     # odd all; K < a word
        {"batch": 33, "out_f": 130, "in_f": 130},          # K % 32 != 0: padding bits
        {"batch": 65, "out_f": 129, "in_f": 300, "group_size": 7},  # K % 16 != 0
        {"batch": 20, "out_f": 64, "in_f": 4096, "group_size": 64},  # split K
        {"batch": 12, "out_f": 200, "in_f": 1040, "k": 0.5},  # T small
        {"batch": 9, "out_f": 96, "in_f": 2048, "k": 16.0},   # normal: T = 8, v past 127
    ),
    default_sweep={"batch": (1, 16, 1024, 8192), "out_f": (18944, 3584)},
    # The wgmma path under compute-sanitizer: the single kernel on two M tiles, the second
    # mostly past M (its rows decoded from no planes), K split; the paired kernel on three M
    # tiles, its second pair's second CTA wholly past M, eight K tiles (the ring wraps); the
    # staged boxes of a small M (8 rows at M 1; 16 at M 9, 7 past M).
    sanitize_shapes=({"batch": 130, "out_f": 256, "in_f": 1024},
                     {"batch": 300, "out_f": 256, "in_f": 1024},
                     {"batch": 1, "out_f": 256, "in_f": 1024},  # a box of 8 rows
                     {"batch": 9, "out_f": 256, "in_f": 1024}),  # 16 rows, 7 past M
    variants=(
        # The families whose q fits int8 (the llm family's outliers do not).
        Variant("default", (("PACKED_WIDE", "0"),), "q decoded as int8 (bytewise)",
                pins=(("q_type", "int8"),), families=("normal", "ramp")),
        Variant("wide", (("PACKED_WIDE", "1"),), "q decoded as int32, three byte planes",
                pins=(("q_type", "int32"),),
                cases=({"batch": 9, "out_f": 256, "in_f": 512, "k": 16.0},
                       {"batch": 40, "out_f": 128, "in_f": 384, "k": 64.0})),
    ),
    check_inputs=check_inputs,
    torch_impl=torch_impl,
    workspace=workspace,
    zeroed=("counters",),
    header_libraries=("cutlass",),
    arch_specific=True,
    # Each row of out is that row of the planes and vth against the whole of the weights.
    rows=Rows("batch", {"planes": 1, "vth": 0}, {"out": 0}),
    compute_peak="int8_dense",
)
