"""SPEC step 6 as an exact integer GEMM with group scales, on the tensor cores:
``out[m, n] = vth[m] * sum_g scale[n, g] * (sum_{f in g} q[m, f] * w_q[n, f]) + bias[n]``.

Each group sum is an integer dot product, exact in int32; only its promotion to float (times
the group's scale, into an fp32 accumulator) and the epilogue round. The launch picks the
kernel by shape. At M <= 16 the layer is a read of the weights: ``int_gemm_stream1`` (M <= 8)
and ``int_gemm_stream`` (M <= 16) for int8 q and G = 128 (the weights by TMA into a deep
shared-memory ring, the units spread evenly over a persistent grid, mma.sync); else
``int_gemm_small1`` and ``int_gemm_small`` (the weights streamed into registers and
prefetched to L2 ahead, split-K with a deterministic reduction). ``int_gemm_wgmma`` where N
and K are multiples of 128 and G is 128 (Hopper wgmma fed by TMA, warp-specialised,
persistent, CTA pairs sharing B; ``int_gemm_wgmma_single``, the same without the pairs, up
to M = 256, K split where its tiles fill at most half the SMs), ``int_gemm_general`` for every
other shape.
The ``int8`` variant takes q as int8 (the activations of families whose q fits); ``wide``
takes q as int32 (|q| < 2^23) and splits it into byte planes in the load, so every family fits.

Its PyTorch peers: ``torch_impl`` (W8ASpike: quantised sides dequantised, one fp32 matmul;
``torch`` and ``torch_compile``), ``linear_fp32`` (judged), and two speed references that are
not judged: ``linear_bf16`` and ``int_mm`` (int8, no scales; where its shape rules allow).

Which kernel a shape takes and each path's launch plan (split-K, shared memory, workspace)
are ``harness.spikes.gemm_paths``; the wgmma path's grid and tensor maps
``harness.spikes.wgmma``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Axis, BadInput, Launcher, Peer, Point, Rows, Stage, Variant
from harness.spikes import axes, families, gemm_paths, geometry, inputs, spec, torchmath, wgmma
from harness.spikes.tolerances import INT_GEMM_OUT

#: The wgmma path's tile (BM = BN = BK) and group size (its launch: harness.spikes.wgmma),
#: also the stream paths' K box.
TILE = wgmma.TILE
Q_TYPES = {"int8": np.int8, "int32": np.int32}



def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """q and vth of step 1 on the family's activations, the quantized weights and their
    scales, a bias. q is int8 for the int8 variant where it fits (``check_inputs`` says
    when it does not), int32 for ``wide``."""
    _, vth, q = inputs.activation_chain(rng, family, p["batch"], p["in_f"], p["k"])
    _, scale, w_q = inputs.weight_chain(rng, family, p["out_f"], p["in_f"], p["group_size"])
    if p["q_type"] == "int8" and (q.size == 0 or spec.fits_int8(int(q.min()), int(q.max()))):
        q = q.astype(np.int8)
    return {"q": q.astype(np.int32) if p["q_type"] == "int32" else q, "w_q": w_q,
            "scale": scale, "vth": vth, "bias": families.bias(rng, family, p["out_f"])}


def check_inputs(ins: Mapping[str, np.ndarray], p: Point) -> str | None:
    """q must fit the variant's type, and every group sum int32."""
    q = ins["q"]
    big = int(np.abs(q.astype(np.int64)).max()) if q.size else 0
    if p["q_type"] == "int8" and q.dtype != np.int8:
        return (f"bad input: q spans [{int(q.min())}, {int(q.max())}], beyond int8: the wide "
                "variant takes it")
    return spec.q_reach_problem(big, p["group_size"], p["in_f"], byte_planes=True)


def reference(ins: Mapping[str, np.ndarray], p: Point, v: Variant) -> dict[str, np.ndarray]:
    """The product in float64 (exact group sums: integers far below 2^53)."""
    return {"out": spec.group_gemm64(ins["q"], ins["w_q"], ins["scale"], ins["vth"],
                                     ins["bias"], int(p["group_size"]))}


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """The kernel the shape calls for (``gemm_paths.path``); given the activation stage's
    ``stats``, the exact path that runs only where they say q does not fit int8
    (``_enqueue_unfit``)."""
    m, n, k = (int(p[a]) for a in ("batch", "out_f", "in_f"))
    if "stats" in bufs:
        if p["q_type"] != "int32":
            raise BadInput("int_gemm: the exact path (given the activation stage's stats) "
                           f"takes q as int32, the wide variant, not {p['q_type']}")
        _enqueue_unfit(launch, bufs, p, v)
        return
    pl = gemm_paths.planned(p, dict(v.defines))
    if pl["kind"] == "wgmma":
        # A by TMA: a CTA loads its part of the A tile its cluster row shares (cn along N).
        wgmma.enqueue(launch, "int_gemm_wgmma", bufs, m, n, k, lambda cn: (
            launch.tensor_map(bufs["q"], np.int8, m, k, TILE // cn, TILE),), a_first=True)
        return
    if pl["kind"] in gemm_paths.STREAM_MT:
        on, threads, smem1, smem2, groups = (
            int(x) for x in launch.constant("int_gemm_stream_config", 5))
        if on:
            _enqueue_stream(launch, bufs, m, n, k, pl["kind"], threads, (smem1, smem2), groups)
            return
        pl = gemm_paths.planned(p, dict(v.defines), stream=False)
    name = f"int_gemm_{pl['kind']}"
    launch(name, pl["grid"], (pl["threads"], 1, 1), *_register_fed_args(bufs, p, pl),
           shared=pl["smem"])


def _register_fed_args(bufs: Mapping[str, Any], p: Point, pl: Mapping[str, Any]
                       ) -> tuple[Any, ...]:
    """The arguments the small and general kernels take, q to out (int_gemm.cu)."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    return (bufs["q"], bufs["w_q"], bufs["scale"], bufs["vth"], bufs["bias"], np.int32(m),
            np.int32(n), np.int32(k), np.int32(g), np.int32(pl["splits"]), bufs["ws"],
            bufs["counters"], bufs["out"])


def _enqueue_unfit(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """The layer's exact path, chosen on the device: the general path's tiles (a ``wide``
    build takes q as int32) over a persistent grid, guarded by ``stats`` = [qmin, qmax, o,
    T]. Where q fits int8 every block returns at once, and the int8 launch before it stands;
    where it does not, this launch writes all of out."""
    pl = gemm_paths.plan(p, kind="general",
                         tile=geometry.GeneralTile.launchable(dict(v.defines), "int_gemm"))
    tiles = pl["grid"][0] * pl["grid"][1] * pl["grid"][2]
    grid = (max(1, min(tiles, gemm_paths.UNFIT_BLOCKS_PER_SM * launch.sm_count)), 1, 1)
    launch("int_gemm_general_unfit", grid, (pl["threads"], 1, 1), bufs["stats"],
           *_register_fed_args(bufs, p, pl), shared=pl["smem"])


def _enqueue_stream(launch: Launcher, bufs: Mapping[str, Any], m: int, n: int, k: int,
                    kind: str, threads: int, smem: tuple[int, int], groups: int) -> None:
    """A stream path's launch: one CTA an SM, no more than the units (``groups`` groups of
    one 64-row tile each: a CTA without one would stall the kernel) nor than the workspace
    holds; the weights and q as tensor maps of 128-byte swizzled boxes."""
    mt = gemm_paths.STREAM_MT[kind]
    tw = launch.tensor_map(bufs["w_q"], np.int8, n, k, gemm_paths.STREAM_ROWS, TILE)
    tq = launch.tensor_map(bufs["q"], np.int8, m, k, 8 * mt, TILE)
    units = geometry.cdiv(n, gemm_paths.STREAM_ROWS) * geometry.cdiv(geometry.cdiv(k, TILE),
                                                                     max(1, groups))
    grid = (max(1, min(launch.sm_count, gemm_paths.STREAM_MAX_CTAS, units)), 1, 1)
    launch(f"int_gemm_{kind}", grid, (threads, 1, 1), tw, tq, bufs["scale"], bufs["vth"],
           bufs["bias"], bufs["ws"], bufs["counters"], bufs["out"], np.int32(m), np.int32(n),
           np.int32(k), shared=smem[mt - 1])


def bytes_moved(p: Point) -> int:
    """q, the weights and their scales, vth and bias read once; out written once."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    qb = np.dtype(Q_TYPES[p["q_type"]]).itemsize
    return m * k * qb + n * k + 4 * n * geometry.cdiv(k, g) + 4 * m + 4 * n + 4 * m * n


def _x_rec(torch: Any, t: Mapping[str, Any]) -> Any:
    """The activations dequantised, x_rec = q * vth, in fp32."""
    return t["q"].to(torch.float32) * t["vth"][:, None]


def _weights(torch: Any, t: Mapping[str, Any], p: Point) -> Any:
    """The weights dequantised, w_q * scale of each one's group, in fp32."""
    return torchmath.dequantised(torch, t["w_q"], t["scale"], p["group_size"])


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """W8ASpike as PyTorch writes it: dequantise both sides, one fp32 matmul (TF32 off)."""
    return {"out": _x_rec(torch, t) @ _weights(torch, t, p).T + t["bias"]}


def _fp32_weights(torch: Any, t: Mapping[str, Any], p: Point) -> dict[str, Any]:
    return {"w_fp32": _weights(torch, t, p)}


def linear_fp32(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """``F.linear`` in fp32 (TF32 off) on x_rec and the weights dequantised beforehand."""
    return {"out": torch.nn.functional.linear(_x_rec(torch, t), t["w_fp32"], t["bias"])}


def _bf16_weights(torch: Any, t: Mapping[str, Any], p: Point) -> dict[str, Any]:
    return {"w_bf16": _weights(torch, t, p).to(torch.bfloat16),
            "bias_bf16": t["bias"].to(torch.bfloat16)}


def linear_bf16(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """``F.linear`` in bf16: x_rec cast to bf16, the weights and bias cast beforehand; the
    output stays bf16 (read back widened)."""
    x = _x_rec(torch, t).to(torch.bfloat16)
    return {"out": torch.nn.functional.linear(x, t["w_bf16"], t["bias_bf16"])}


def int_mm(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """``torch._int_mm``: q @ w_q^T in int8, int32 out, no scales, vth or bias."""
    return {"out": torch._int_mm(t["q"], t["w_q"].t())}


def int_mm_skip(p: Point) -> str | None:
    """Where ``torch._int_mm`` cannot run: q not int8, or outside its shape rules on the
    GPU (M > 16, K and N multiples of 8)."""
    m, n, k = (int(p[a]) for a in ("batch", "out_f", "in_f"))
    if p["q_type"] != "int8":
        return f"torch._int_mm takes int8 q, not {p['q_type']}"
    if m <= 16 or k % 8 or n % 8:
        return f"torch._int_mm needs M > 16 and K, N multiples of 8 (M={m}, N={n}, K={k})"
    return None


#: PyTorch's other ways to this layer, timed beside ours (``--peers``).
PEERS = {
    "linear_fp32": Peer(linear_fp32, prepare=_fp32_weights),
    "linear_bf16": Peer(linear_bf16, judged=False, prepare=_bf16_weights,
                        note="bf16 activations and weights: bf16 rounding is far above "
                             "SPEC's 1e-6"),
    "int_mm": Peer(int_mm, judged=False, skip=int_mm_skip,
                   note="int8 q @ w_q^T without scales, vth or bias: a speed reference"),
}


def _variant(name: str, q_type: str, wide: str, help: str, fams: tuple[str, ...] = (),
             cases: tuple[dict[str, Any], ...] = ()) -> Variant:
    return Variant(name, (("Q_WIDE", wide),), help, pins=(("q_type", q_type),),
                   families=fams, cases=cases)


STAGE = Stage(
    name="int_gemm",
    # int_gemm_general_unfit is launched by spike_linear's ``any`` path alone (it needs the
    # activation stage's stats), so it is not a stage entry point: compute-sanitizer watches
    # it through that pipeline's validation (scripts/gpu-check.sh, sanitize).
    entry_points=("int_gemm_wgmma", "int_gemm_wgmma_single", "int_gemm_stream1",
                  "int_gemm_stream", "int_gemm_small1", "int_gemm_small", "int_gemm_general"),
    description="exact integer GEMM with group scales on the tensor cores "
                "(small-M, wgmma and general paths by shape)",
    axes=(
        axes.BATCH, axes.OUT_F, axes.WEIGHT_IN_F, axes.GROUP_SIZE, axes.K_INPUT,
        Axis("q_type", "int8", str, "q's element type (set by the variant)",
             choices=tuple(Q_TYPES)),
    ),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {
        "q": ((p["batch"], p["in_f"]), np.dtype(Q_TYPES[p["q_type"]])),
        **inputs.layer_specs(p)},
    outputs=inputs.layer_out,
    reference=reference,
    enqueue=enqueue,
    bytes_moved=bytes_moved,
    flops=inputs.layer_flops,
    tolerances={"out": INT_GEMM_OUT},
    cases=(
        {"batch": 1, "out_f": 384, "in_f": 1024},          # stream1: every tile shared
        {"batch": 16, "out_f": 200, "in_f": 3584},         # stream, N not a tile multiple
        {"batch": 5, "out_f": 100, "in_f": 3584},          # stream1, N not a tile multiple
        {"batch": 9, "out_f": 3584, "in_f": 1024},         # stream: a unit a CTA (4 groups)
        {"batch": 3, "out_f": 9000, "in_f": 1040},         # stream1: K % 128 != 0, long runs
        {"batch": 13, "out_f": 10600, "in_f": 1040},       # stream: heads wait (4 groups a unit)
        {"batch": 13, "out_f": 12600, "in_f": 1040},       # stream: heads read early, or wait
        {"batch": 12, "out_f": 384, "in_f": 1024, "group_size": 256},  # small, split K
        {"batch": 77, "out_f": 256, "in_f": 512},          # wgmma, M not a tile multiple
        {"batch": 300, "out_f": 512, "in_f": 1024},        # wgmma, several tiles each way
        {"batch": 200, "out_f": 384, "in_f": 1024},        # wgmma single, K split 2 ways
        {"batch": 45, "out_f": 640, "in_f": 2304},         # single: 4 uneven splits of 18
        {"batch": 130, "out_f": 256, "in_f": 1536},        # single: 3 splits, M tile partial
        {"batch": 520, "out_f": 1024, "in_f": 512},        # wgmma: 3 x 2 cluster tiles
        {"batch": 7, "out_f": 3, "in_f": 5, "group_size": 2},     # general: odd everything
        {"batch": 33, "out_f": 130, "in_f": 130},          # general: K % G != 0
        {"batch": 65, "out_f": 129, "in_f": 300, "group_size": 7},
        {"batch": 20, "out_f": 64, "in_f": 4096, "group_size": 64},  # general, split K
    ),
    default_sweep={"batch": (1, 4, 16, 64, 256, 1024, 4096, 8192),
                   "out_f": (18944, 3584)},
    # The wgmma path (N and K multiples of 128) under compute-sanitizer: the single kernel
    # on two M tiles, the second mostly past M (TMA zero-fill, rows not stored), two N
    # tiles, three K tiles; then eight K tiles, split two ways; the clustered kernel on three
    # M tiles (its second pair's second CTA wholly past M), eight K tiles, so its ring of
    # stages wraps inside a tile; the single kernel's four uneven splits.
    # The stream paths too: a K tail, a row tail, tiles shared between CTAs, M < 8 and > 8,
    # and (13 x 12600 x 1040, at four groups a unit on 132 SMs) a ring that wraps.
    sanitize_shapes=({"batch": 130, "out_f": 256, "in_f": 384},
                     {"batch": 130, "out_f": 256, "in_f": 1024},
                     {"batch": 300, "out_f": 256, "in_f": 1024},
                     {"batch": 45, "out_f": 640, "in_f": 2304},
                     {"batch": 3, "out_f": 200, "in_f": 1040},
                     {"batch": 13, "out_f": 12600, "in_f": 1040}),
    variants=(
        _variant("int8", "int8", "0", "q as int8 (families whose q fits int8)",
                 ("normal", "ramp")),
        _variant("wide", "int32", "2", "q as int32 (|q| < 2^23), split into byte planes",
                 cases=({"batch": 9, "out_f": 256, "in_f": 512, "k": 16.0},
                        {"batch": 40, "out_f": 128, "in_f": 384, "k": 16.0})),
    ),
    check_inputs=check_inputs,
    torch_impl=torch_impl,
    peers=PEERS,
    workspace=gemm_paths.workspace,
    zeroed=("counters",),
    header_libraries=("cutlass",),
    arch_specific=True,
    # Each row of out is that row of q and vth against the whole of the weights.
    rows=Rows("batch", {"q": 0, "vth": 0}, {"out": 0}),
    compute_peak="int8_dense",
)
