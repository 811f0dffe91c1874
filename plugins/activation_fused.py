"""SPEC steps 1-3 fused: ``x -> (vth, spikes, stats = [qmin, qmax, o, T], q8)`` in two
kernels over x (one where the rows fit on chip: act_one, act_rows, act_grid), with the
transform decision and ``T`` made on the device (no host round trip), so the launches
capture as one CUDA graph.

Bit-identical to the staged path (dynamic_spikes, find_min_max, transform_absmax,
spike_encode): the row threshold is the same code (``kernels/common/threshold.cuh``). The
kernel decides ``T``, so the spikes buffer holds :func:`harness.spikes.spec.plane_bound` planes and
only the first ``T`` are written and judged (``trim``). Variants: the three modes, each in
the int8 layout of SPEC step 3 and in a bit-packed layout (32 values a word; 8x fewer bytes
than int8 planes in unidirectional and twos_complement, ``8T/(T+1)``x in bidirectional,
which needs a sign plane). ``q8`` is step 1's q as int8 (clamped to [-128, 127]; exact
wherever ``stats`` says q fits): pass 2 reads it back, and the integer GEMM takes it as its
operand (the ``spike_linear`` pipeline). Where q does not fit int8, the int8 layout's pass 2
also writes q as int32 to ``q_wide``, the operand of the layer's exact path, which the GEMM
chooses on the device from ``stats``; where q fits, ``q_wide`` is not written.

The ``operand`` layout (unidirectional, the layer's mode) writes no planes: pass 1 alone
(``act_stats``, at every batch), so ``vth``, ``stats`` and ``q8``, what the integer GEMM
reads: q8 written once, and x read once where three rows fit pass 1's ring
(STATS_RING_BYTES: rows up to 19028 values; wider rows' tail twice, by the register
prefetch). It is the int8 build's pass 1, launched without pass 2: the layer's activation
where the spikes are not materialised. Against the int8 layout at batches that run the two
passes, the difference is the planes' pass; at those act_one, act_rows or act_grid take,
the kernel differs too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import Axis, Exact, Launcher, Point, Stage, Variant
from harness.spikes import activation_grids as grids
from harness.spikes import axes, cases, families, spec, torchmath
from harness.spikes.tolerances import VTH

#: The layouts that write planes, and the one that writes none.
PLANES_LAYOUTS = ("int8", "packed")
LAYOUTS = (*PLANES_LAYOUTS, "operand")
def capacity(p: Point) -> int:
    """Planes the output buffer holds: the largest T a row of this width can need."""
    return spec.plane_bound(p["k"], p["in_f"], p["mode"])


def words(p: Point) -> int:
    """32-value words per row of the packed layout."""
    return -(-int(p["in_f"]) // 32)


def make_inputs(rng: np.random.Generator, family: str, p: Point) -> dict[str, np.ndarray]:
    """Activations ``x [batch, in_f]`` of the family."""
    return {"x": families.activations(rng, family, p["batch"], p["in_f"], p["k"])}


def outputs(p: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``vth``, ``stats``, ``q8`` and the planes buffer (``capacity`` planes; T of them
    written); in the int8 layout ``q_wide`` too (written where q does not fit int8); in the
    ``operand`` layout no more than the first three."""
    b, f = p["batch"], p["in_f"]
    out = {"vth": ((b,), np.dtype(np.float32)), "stats": ((4,), np.dtype(np.int32)),
           "q8": ((b, f), np.dtype(np.int8))}
    if p["layout"] == "operand":
        return out
    if p["layout"] == "packed":
        out["packed"] = ((spec.packed_planes(capacity(p), p["mode"]), b, words(p)),
                         np.dtype(np.uint32))
    else:
        out["spikes"] = ((capacity(p), b, f), np.dtype(np.int8))
        out["q_wide"] = ((b, f), np.dtype(np.int32))
    return out


def planes_of(got: Mapping[str, np.ndarray], mode: str) -> int:
    """The planes a run wrote, from its own ``stats`` (T, plus the bidirectional sign plane
    in the packed layout)."""
    t = int(got["stats"][3])
    return spec.packed_planes(t, mode) if "packed" in got else t


def trim(got: Mapping[str, np.ndarray], p: Point) -> dict[str, np.ndarray]:
    """The part of the outputs the kernel was asked to write: the first T planes, and
    ``q_wide`` only where its own ``stats`` say q does not fit int8 (no rows otherwise)."""
    out = dict(got)
    name = "packed" if "packed" in got else "spikes"
    t = planes_of(got, p["mode"])
    if name in got and 0 <= t <= got[name].shape[0]:
        out[name] = got[name][:t]
    if "q_wide" in got and spec.fits_int8(int(got["stats"][0]), int(got["stats"][1])):
        out["q_wide"] = got["q_wide"][:0]
    return out


def reference(inputs: Mapping[str, np.ndarray], p: Point, v: Variant,
              given: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The staged chain of SPEC steps 1-3, on the kernel's own float32 ``vth`` when given."""
    mode = p["mode"]
    c = spec.activation_chain(inputs["x"], p["k"], mode,
                              given["vth"] if given is not None else None)
    mm, t = c["mm"], c["planes"]
    out = {"vth": c["vth64"], "stats": np.array([mm[0], mm[1], c["o"], t], dtype=np.int32),
           "q8": q8(c["q"])}
    if p["layout"] == "operand":
        return out
    if p["layout"] == "packed":
        out["packed"] = spec.pack(c["v"], t, mode)
    else:
        out["spikes"] = spec.encode(c["v"], t, mode)
        q = c["q"].astype(np.int32, copy=False)
        out["q_wide"] = q[:0] if spec.fits_int8(int(mm[0]), int(mm[1])) else q
    return out


def check_inputs(inputs: Mapping[str, np.ndarray], p: Point) -> str | None:
    """A buffer of more than 31 planes would be needed for some row of this width and k;
    step 1 must be well defined in float32 (``spec.threshold_problem``)."""
    if capacity(p) > spec.MAX_PLANES:
        return (f"bad input: k={p['k']} and in_f={p['in_f']} allow |q| up to "
                f"{p['k'] * p['in_f']:.3g}, more than {spec.MAX_PLANES} planes hold")
    return spec.threshold_problem(inputs["x"], p["k"])


def q8(q: np.ndarray) -> np.ndarray:
    """q as the kernel keeps it: int8, clamped to [-128, 127]."""
    return np.clip(q, -128, 127).astype(np.int8)


def enqueue(launch: Launcher, bufs: Mapping[str, Any], p: Point, v: Variant) -> None:
    """Where act_one holds the rows (``grids.one_geometry``: rows up to 128 x BLOCK values, as
    many as 32 warps a block take, on a cluster of blocks, act_rows past batch 1; or batch
    1 up to 4 x CACHE_VEC x BLOCK on one block), q kept in registers between the passes.
    Up to SMALL_B rows otherwise: act_small, one block, one launch. In the int8 layout,
    where each row fits a thread's cache and the rows fit GRID_ROWS a block on a grid
    resident at once (``grids.grid_geometry``): act_grid, the two passes in one launch.
    Otherwise pass 1: rows over ``grids.stats_blocks`` blocks (vth, q to q8, q's range; the
    last block decides o and T), and pass 2: the planes from q8 (or from x, a block per
    row, when q is wider than int8, and then q to ``q_wide`` as well). The ``operand``
    layout: pass 1 alone, at every batch."""
    b, f, block = int(p["batch"]), int(p["in_f"]), launch.block
    # Every kernel's arguments are these, in this order: act_one takes no B (batch 1),
    # act_stats no outputs past q8, act_encode no k.
    head = (bufs["x"], bufs["vth"], bufs["stats"], bufs["q8"])
    bfk = (np.int32(b), np.int32(f), np.float32(p["k"]))
    d = dict(v.defines)  # read back, so that a -D build is launched as it was compiled
    shared = grids.stats_shared(d, block, f)

    def pass_1() -> None:
        # Blocks an SM holds at the ring's shared memory, as the driver counts this build
        # (asked only where pass 1 runs).
        resident = (launch.max_active_blocks("act_stats", block, shared), launch.sm_count) \
            if shared else None
        launch("act_stats", (grids.stats_blocks(d, b, ring=shared > 0, resident=resident), 1, 1),
               (block, 1, 1), *head, *bfk, shared=shared)

    if p["layout"] == "operand":
        pass_1()
        return
    dest = bufs["packed"] if p["layout"] == "packed" else bufs["spikes"]
    q_wide = bufs.get("q_wide", 0)  # null: not written (packed, or a pipeline without it)
    tail = (dest, q_wide)
    one = grids.one_geometry(d, block, f, b)
    if one is not None:  # batch 1: act_one; several rows: act_rows, the same code on (32 R, B)
        name, shape = ("act_rows", bfk) if b > 1 else ("act_one", bfk[1:])
        launch(name, (one[0], 1, 1), (one[1], one[2], 1), *head, *shape, *tail)
        return
    if b <= int(d["SMALL_B"]):  # act_small's shared arrays hold SMALL_B rows
        launch("act_small", (1, 1, 1), (block, 1, 1), *head, *bfk, *tail)
        return
    grid = grids.grid_geometry(d, block, launch.sm_count, f, b)
    if grid is not None:  # the residency the build promises, checked with the driver
        grid = grids.grid_geometry(d, block, launch.sm_count, f, b,
                             launch.max_active_blocks("act_grid", block))
    if grid is not None:  # both passes in one launch, q kept in registers
        launch("act_grid", (grid[0], 1, 1), (block, 1, 1), *head, *bfk, *tail)
        return
    units = int(d["ENC_UNITS"])
    pass_1()
    flat = -(-b * f // (16 * block * units))  # one thread-step each over the flat q8
    launch("act_encode", (max(flat, min(b, grids.ENC_MIN_BLOCKS)), 1, 1), (block, 1, 1), *head,
           *bfk[:2], *tail)


def torch_impl(torch: Any, t: Mapping[str, Any], p: Point, v: Variant) -> dict[str, Any]:
    """The activation path as a PyTorch user writes it; T, a shape, is read on the host."""
    x, mode = t["x"], p["mode"]
    vth, q = torchmath.quantise(torch, x, p["k"])
    qmin, qmax = q.min(), q.max()
    o = torchmath.offset(torch, qmin, qmax, mode)
    vq = q - o
    n = spec.planes(int(vq.abs().max().item()), mode)  # T is a shape: read on the host
    stats = torch.stack([qmin, qmax, o, torch.full_like(qmin, n)])
    q8 = q.clamp(-128, 127).to(torch.int8)
    if p["layout"] == "operand":
        return {"vth": vth, "stats": stats, "q8": q8}
    planes = torchmath.encode(torch, vq, n, mode)
    if p["layout"] != "packed":
        fits = spec.fits_int8(int(qmin.item()), int(qmax.item()))
        q_wide = q.to(torch.int32)[:0] if fits else q.to(torch.int32)
        return {"vth": vth, "spikes": planes.to(torch.int8), "stats": stats, "q8": q8,
                "q_wide": q_wide}
    bits_ = planes.abs().to(torch.int64)
    if spec.check_mode(mode) == 1:
        bits_ = torch.cat([bits_, (vq < 0).to(torch.int64)[None]])
    w = words(p)
    pad = torch.nn.functional.pad(bits_, (0, w * 32 - x.shape[1]))
    weights = torch.bitwise_left_shift(
        torch.ones(32, dtype=torch.int64, device=x.device),
        torch.arange(32, dtype=torch.int64, device=x.device))
    packed = (pad.view(bits_.shape[0], x.shape[0], w, 32) * weights).sum(dim=3)
    return {"vth": vth, "packed": packed, "stats": stats, "q8": q8}


def floor_bytes(p: Point, t: int) -> int:
    """The activation path's byte floor: x read once, T planes (or packed words) written
    once, vth written; in the ``operand`` layout q8 in the planes' place."""
    b, f = int(p["batch"]), int(p["in_f"])
    if p["layout"] == "operand":
        out = b * f
    elif p["layout"] == "packed":
        out = 4 * spec.packed_planes(t, p["mode"]) * b * words(p)
    else:
        out = t * b * f
    return 4 * b * f + out + 4 * b


def variant(mode: str, layout: str) -> Variant:
    """The compiled variant of one mode and layout."""
    name = mode if layout == "int8" else f"{layout}_{mode}"
    what = "no planes (vth, stats, q8)" if layout == "operand" else f"{layout} planes"
    return Variant(name, (*((define, str(value)) for define, value in grids.TUNING),
                          ("MODE", str(spec.check_mode(mode))),
                          ("LAYOUT", str(grids.BUILD_LAYOUT[layout]))),
                   f"{mode}, {what}", pins=(("mode", mode), ("layout", layout)))


STAGE = Stage(
    name="activation_fused",
    entry_points=("act_stats", "act_encode", "act_small", "act_one", "act_rows", "act_grid"),
    description="steps 1-3 fused: x -> vth, T planes, [qmin, qmax, o, T]; T on the device",
    axes=(
        axes.BATCH,
        axes.IN_F,
        axes.K,
        axes.mode("encoding mode (set by the variant)"),
        Axis("layout", "int8", str, "int8 planes, bit-packed, or none: the GEMM's operand "
             "only (set by the variant)",
             choices=LAYOUTS),
    ),
    families=families.NAMES,
    make_inputs=make_inputs,
    inputs=lambda p: {"x": ((p["batch"], p["in_f"]), np.dtype(np.float32))},
    outputs=outputs,
    reference=reference,
    enqueue=enqueue,
    check_inputs=check_inputs,
    torch_impl=torch_impl,
    trim=trim,
    optional_outputs=("q_wide",),
    bytes_moved=lambda p: floor_bytes(p, spec.TYPICAL_T),  # a row counts its run's own T
    bytes_from_outputs=lambda p, got: floor_bytes(p, int(got["stats"][3])),
    # |x| and its sum, a division per element (twice: once per pass).
    flops=lambda p: 4 * p["batch"] * p["in_f"],
    tolerances={
        "vth": VTH,
        "stats": Exact("integer min, max and decisions: exact"),
        "q8": Exact("q clamped to int8, judged on the kernel's own vth: exact"),
        "spikes": Exact("integer planes, judged on the kernel's own vth (SPEC)"),
        "packed": Exact("bit-packed planes, judged on the kernel's own vth (SPEC)"),
        "q_wide": Exact("q as int32 where it does not fit int8, on the kernel's own vth"),
    },
    # The operand layout for the layer's mode only (spike_linear's operand path pins it).
    variants=(*(variant(m, lay) for lay in PLANES_LAYOUTS for m in spec.MODES),
              variant("unidirectional", "operand")),
    cases=(
        *cases.ACTIVATION[:4],  # act_one at batch 1, act_rows at 6; batch 3 (in_f 1): two passes
        {"batch": 1, "in_f": 4096},  # act_one: four turns a thread, every lane a value
        {"batch": 1, "in_f": 3584, "k": 64.0},  # act_one, q wider than int8 (T > 8, q_wide)
        {"batch": 1, "in_f": 12},  # act_one: one packed word, most threads holding no value
        {"batch": 1, "in_f": 100},  # act_one: a packed row ending in a partial word
        {"batch": 1, "in_f": 4100},  # act_one past the cache: five turns a thread
        {"batch": 1, "in_f": 18944},  # act_one on the layer's widest row (19 turns)
        {"batch": 1, "in_f": 18944, "k": 64.0},  # ... with q wider than int8 (q_wide)
        {"batch": 1, "in_f": 32768},  # act_one's widest: 32 warps a block
        {"batch": 1, "in_f": 32772},  # act_small: wider than act_one's 32 warps a block
        {"batch": 1, "in_f": 130},  # act_small: F % 4 != 0
        {"batch": 1, "in_f": 20003, "k": 64.0},  # act_small, q wider than int8, a long row
        {"batch": 2, "in_f": 3584, "k": 0.5},  # act_rows on two rows, T <= 8
        {"batch": 8, "in_f": 3584},  # act_rows' most rows at four turns: 32 warps a block
        {"batch": 4, "in_f": 4100},  # act_rows, four rows of five turns
        {"batch": 32, "in_f": 1024},  # act_rows, a row a warp
        {"batch": 4, "in_f": 3584, "k": 64.0},  # act_rows, q wider than int8 (q_wide)
        {"batch": 3, "in_f": 100},  # act_rows, packed rows ending in partial words
        {"batch": 2, "in_f": 18944, "k": 0.5},  # the two passes at their smallest, T <= 8
        {"batch": 9, "in_f": 3584},  # act_grid: past act_rows' 32 warps a block
        cases.ACTIVATION[4],  # the two passes: F % 4 != 0
        {"batch": 12, "in_f": 4100},  # the two passes: wider than the register cache
        {"batch": 2, "in_f": 20003},
        {"batch": 300, "in_f": 256, "k": 2.5},  # act_grid: 300 blocks at its barrier
        {"batch": 64, "in_f": 3584, "k": 4.0},  # act_grid
        {"batch": 8200, "in_f": 5},  # more rows than STATS_BLOCKS: blocks take several
        {"batch": 40, "in_f": 3584, "k": 64.0},  # act_grid, q wider than int8: planes from x
        {"batch": 33, "in_f": 96, "k": 64.0},  # packed: the two passes, rows without padding
        {"batch": 33, "in_f": 96},  # packed: flat words from q8 at a few words
        {"batch": 16, "in_f": 3584, "k": 0.5},  # act_grid, T <= 8
        {"batch": 9, "in_f": 4096},  # act_grid, every slot of the cache a value
        {"batch": 40, "in_f": 100},  # act_grid, short rows; packed: two passes, partial words
        {"batch": 600, "in_f": 3584},  # act_grid, two rows a block (132 SMs)
        {"batch": 2000, "in_f": 1024},  # act_grid, four rows a block (132 SMs)
        {"batch": 2500, "in_f": 1024},  # the two passes: past act_grid's rows (<= 156 SMs)
        {"batch": 2200, "in_f": 4096},  # the ring at the widest row the caches hold, 48 KB
        {"batch": 1100, "in_f": 4100},  # the ring past the caches (a tail from the stage), wrapped
        {"batch": 700, "in_f": 18944},  # the ring at one block an SM, 5-6 rows a block (132 SMs)
        {"batch": 60000, "in_f": 68},  # pass 1's ring wrapped: 7-8 rows a block, 272 B rows
        {"batch": 16383, "in_f": 8},  # the ring on STATS_RING_BLOCKS: 63-64 rows a block
        {"batch": 16384, "in_f": 8},  # ... and from twice STATS_BLOCKS on, two rows a block
    ),
    # act_one at four turns a thread and at five, at its widest (32 warps a block), a
    # packed row ending in a partial word, most threads holding no value, act_rows
    # (eight rows of four turns; three packed rows ending in partial words), and act_grid
    # (short rows, most threads holding no value; every cache slot a value; four rows a
    # block on 132 SMs, several up to 400), and pass 1's ring refilled (24600 rows on 8192
    # blocks: 24 of them take a fourth row into their first stage; 1100 rows past the
    # caches on 256 blocks, their tails read from the stages). The odd shapes reach
    # act_one only at in_f 3584 (batch 1) and act_rows at batch 3 there.
    sanitize_shapes=({"batch": 1, "in_f": 4096}, {"batch": 1, "in_f": 100},
                     {"batch": 1, "in_f": 12}, {"batch": 1, "in_f": 4100},
                     {"batch": 1, "in_f": 32768}, {"batch": 8, "in_f": 3584},
                     {"batch": 3, "in_f": 100}, {"batch": 40, "in_f": 100},
                     {"batch": 9, "in_f": 4096}, {"batch": 1600, "in_f": 64},
                     {"batch": 24600, "in_f": 8}, {"batch": 1100, "in_f": 4100}),
    default_sweep=axes.BATCH_SWEEP,
)
