"""Which of the integer GEMM's kernels (``kernels/int_gemm.cu``) a shape takes, and the launch
plan of each: the stream paths' workspace, the register-fed small paths' split of K, grid and
shared memory, the general path's (``geometry.general_gemm_plan``) and the wgmma path's
(``wgmma.plan``), and the workspace a point needs for any of them. The plugin ``int_gemm``
declares the stage and launches it by these rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.api import BadInput, Point
from harness.spikes import geometry, wgmma

#: The wgmma path's tile and group size, also the stream paths' K box.
TILE = wgmma.TILE
#: The small paths take up to this many rows (8 IGS_MT: the module's MT of 1 and of 2).
SMALL1_M = 8
SMALL_M = 16
#: Warps a block of each small kernel (the module's IGS1_WARPS and IGS_WARPS): 16 weight
#: rows a warp.
SMALL_WARPS = {"small1": 4, "small": 8}
#: The small kernels' build as the plan below counts it (int_gemm.cu's defaults: MT, NT,
#: warps, U, MAP, and the one-tile kernel's warps): a ``--define`` of another value is
#: refused where a small path would run, since its launch would be planned for this one.
SMALL_BUILD = {"IGS_MT": 2, "IGS_NT": 1, "IGS_WARPS": 8, "IGS_U": 2, "IGS_MAP": 0,
               "IGS1_WARPS": 4}
#: Blocks an SM of the exact path's persistent grid: int_gemm_general_unfit in a wide build
#: takes 232 registers a thread and 61 KB of shared memory, so two blocks fit an SM. Where q
#: fits int8 its blocks return at once: one wave of them, not one a tile.
UNFIT_BLOCKS_PER_SM = 2
#: The stream paths' q tiles of 8 rows (M <= 8 and M <= 16), weight rows a unit, and the
#: most CTAs their workspace holds (restated from common/igemm_stream.cuh's ST_ROWS and
#: ST_MAX_CTAS: the workspace is sized before anything is compiled; validation and
#: compute-sanitizer catch a disagreement).
STREAM_MT = {"stream1": 1, "stream": 2}
STREAM_ROWS = 64
STREAM_MAX_CTAS = 256
#: Most splits of K the small paths use (whole groups each; the general path's rule is
#: geometry.general_gemm_plan, which int_gemm_packed shares).
MAX_SPLITS = geometry.GEMM_MAX_SPLITS
#: Weight tiles of 16 rows that keep the small path streaming (the tuning runs' figure).
SMALL_TILES = 1800
#: Shared memory the small path may take before it splits K further.
SMALL_SMEM_CAP = 200 * 1024



def path(p: Point, stream: bool = True) -> str:
    """The kernel a point runs on: ``stream1``, ``stream``, ``small1``, ``small``, ``wgmma``
    or ``general``. ``stream``: whether the module takes the TMA-ring small paths where they
    apply (its ``IGS_STREAM``; else the register-fed ones)."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    if stream and m <= SMALL_M and p["q_type"] == "int8" and g == TILE and k % 16 == 0:
        return "stream1" if m <= SMALL1_M else "stream"
    if m <= SMALL_M and k % 16 == 0 and g % 128 == 0:
        return "small1" if m <= SMALL1_M else "small"
    if p["q_type"] == "int8" and wgmma.fits(n, k, g):
        return "wgmma"
    return "general"


def small_smem(mt: int, rows: int, qp: int, u: int, layout: int, k: int, g: int,
               splits: int) -> int:
    """``igemm::small_smem_bytes`` of common/igemm_small.cuh: q's rows padded and the block's
    scales (restated: the launch needs it before the kernel runs; validation and
    compute-sanitizer catch a disagreement)."""
    ng, ks = geometry.cdiv(k, g), 64 * u
    cap = geometry.cdiv(geometry.cdiv(ng, splits) * g, ks) * ks
    kcap = min(cap, geometry.cdiv(k, ks) * ks)
    qstride = ((kcap + 127) & ~127) + (16 if (layout == 0 and u == 2) else 64)
    return qp * mt * 8 * qstride + 4 * rows * (geometry.cdiv(ng, splits) | 1)


def small_splits(n: int, k: int, g: int, mt: int, rows: int, qp: int) -> int:
    """Splits of K for a small path: enough 16-row weight tiles streaming, then as many
    more as q's tile needs to fit shared memory."""
    ng = geometry.cdiv(k, g)
    splits = max([s for s in range(1, min(ng, MAX_SPLITS) + 1)
                  if geometry.cdiv(n, 16) * s <= SMALL_TILES] or [1])
    while splits < ng and small_smem(mt, rows, qp, 2, 0, k, g, splits) > SMALL_SMEM_CAP:
        splits += 1
    return splits


def q_planes(p: Point) -> int:
    """q's byte planes a k step: one as int8, three as int32 (the ``wide`` build)."""
    return 1 if p["q_type"] == "int8" else 3


def plan(p: Point, stream: bool = True, kind: str | None = None,
         tile: geometry.GeneralTile = geometry.GENERAL_TILE) -> dict[str, Any]:
    """The launch of a point: kernel, grid, splits and the workspace it needs (``ws``
    floats, ``counters`` words). The small paths' tiles are the module's defaults
    (int_gemm.cu), the general path's ``tile`` (the build's); the stream paths' grid is
    the device's, so only their workspace is planned here (for the most CTAs they take),
    and the wgmma path's is ``wgmma.plan``'s. ``kind``: a path other than the shape's (the
    exact path of a layer is the general one at every shape)."""
    m, n, k, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    qp = q_planes(p)
    kind = kind or path(p, stream)
    if kind in STREAM_MT:
        return {"kind": kind, "splits": 1, "counters": geometry.cdiv(n, STREAM_ROWS),
                "ws": STREAM_MAX_CTAS * STREAM_ROWS * 8 * STREAM_MT[kind]}
    if kind in SMALL_WARPS:
        mt, rows = (1 if kind == "small1" else 2), SMALL_WARPS[kind] * 16  # warps * NT * 16
        splits = small_splits(n, k, g, mt, rows, qp)
        grid = (geometry.cdiv(n, rows), splits, 1)
        return {"kind": kind, "grid": grid, "splits": splits, "counters": grid[0],
                "ws": wgmma.split_ws(splits, m, n), "threads": 32 * SMALL_WARPS[kind],
                "smem": small_smem(mt, rows, qp, 2, 0, k, g, splits)}
    if kind == "general":
        return geometry.general_gemm_plan(m, n, k, g, qp, tile)
    return wgmma.plan(m, n, k)


def planned(p: Point, defines: Mapping[str, str], stream: bool = True) -> dict[str, Any]:
    """``plan`` of a build of these ``defines``: the general path on its tile
    (``GeneralTile.launchable``); a small path only on the build the plan counts
    (SMALL_BUILD), else BadInput."""
    kind = path(p, stream)
    if kind == "general":
        return plan(p, stream, tile=geometry.GeneralTile.launchable(dict(defines), "int_gemm"))
    if kind in SMALL_WARPS:
        other = [k for k, want in SMALL_BUILD.items() if k in defines and defines[k] != str(want)]
        if other:
            raise BadInput("int_gemm: the small paths' launch is planned for "
                           f"{', '.join(f'{k}={SMALL_BUILD[k]}' for k in other)}; a build "
                           f"of {', '.join(f'{k}={defines[k]}' for k in other)} is not "
                           "launched")
    return plan(p, stream)


def workspace(p: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Split-K partial sums and the tickets of their reduction (zeros between runs), enough
    for either small path (the module chooses: ``IGS_STREAM``); a ``wide`` launch's for the
    general path too (the exact path of a layer takes it at every shape)."""
    plans = (plan(p), plan(p, stream=False))
    sizes = [(pl["ws"], pl["counters"]) for pl in plans]
    if p["q_type"] == "int32" or any(pl["kind"] == "general" for pl in plans):
        # any general tile a build may have (a --define sweep's)
        sizes.append(geometry.general_gemm_workspace(
            *(int(p[a]) for a in ("batch", "out_f", "in_f", "group_size")), q_planes(p)))
    ws = max(w for w, _ in sizes)
    counters = max(c for _, c in sizes)
    return {"ws": ((ws,), np.dtype(np.float32)),
            "counters": ((counters,), np.dtype(np.uint32))}
