"""The launch of the Hopper integer GEMM (``kernels/common/igemm_wgmma.cuh``), shared by the
stages built on it: ``int_gemm`` (A by TMA from q as int8) and ``int_gemm_packed`` (A decoded
from the spikes' bit-packed planes by the kernel's producer). Its shape rule, its persistent
grid of CTA clusters, the split of K where its tiles are few, that split's workspace, and the
tensor maps of the weights and of out.

A module built on the body names its two entry points ``<prefix>`` (clusters along M, the
last waves stream-K) and ``<prefix>_single`` (none along M, K split), and its constants
``<prefix>_smem``, ``<prefix>_config`` and ``<prefix>_out_box``, laid out as
``int_gemm.cu``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from harness.api import BadInput, Launcher

#: The tile (BM = BN = BK) and the group size the path takes.
TILE = 128
#: CTAs along N in a cluster (the modules' IG_CLUSTER_N default): N must be a multiple of
#: TILE times this (a build with IG_CLUSTER_N=2 needs N % 256 == 0, as 18944 and 3584 are).
CLUSTER_N = 1
#: Up to this many rows (one or two M blocks) the path runs without its cluster along M
#: (``<prefix>_single``): measured faster there for int_gemm's q8 kernel on both shapes of
#: the A/B (2-21 % at M 64-256; kernels/NOTES.md, statistics/<gpu>/tuning/cluster-m/);
#: int_gemm_packed's decoding kernel takes the same rule, not measured apart.
SINGLE_M = 2 * TILE
#: The most ways the single kernel splits K (the modules' IG_SPLITS_MAX default; the
#: workspace is sized for it), and the fewest K tiles a split takes.
SPLITS_MAX = 4
SPLIT_MIN_K_TILES = 4
#: More SMs than any GPU the harness is built for has (132 on the H100 and H200 SXM): the
#: single kernel's workspace is sized before the device is known, for this many.
MOST_SMS = 256
#: The swizzle the kernels' shared-memory layout of their out boxes assumes (bytes); the box
#: itself (rows x fp32 columns, 128 bytes a row) is the module's ``<prefix>_out_box``.
OUT_SWIZZLE = 128
#: Consumer warps of a CTA: a split tile's tickets, one counter each.
CONSUMER_WARPS = 8
#: Cluster tiles a group of the persistent walk takes along M, for L2 reuse.
GROUP_M = 8
#: The clustered kernel walks its last waves stream-K where that saves at least this share
#: of its time, as counted by ``stream_gain`` (kernels/NOTES.md).
STREAM_MIN_GAIN = 0.01
#: Stream-K only where the int8 operands (A's M x K and the weights' N x K bytes) fit in
#: this: half of sm_90's 50 MB L2 (H100 and H200 alike). There every operand byte comes
#: from DRAM once whatever order the clusters walk K in (out's fp32 stores pass through the
#: rest, and at M 2048 on 3584 x 3584 they are more than it: the A/B says whether that
#: costs); past it, ranges that start at scattered K offsets lose the reuse that waves
#: walking K together get (measured: +8 to +11 % on 3584 x 18944, kernels/NOTES.md).
STREAM_OPERAND_BYTES = 25 * 2**20
#: Floats of a cut tile's two pieces for one consumer warp (16 rows of 128 columns each:
#: igemm_wgmma.cuh's CUT_WARP_FLOATS).
CUT_WARP_FLOATS = 2 * 16 * TILE
#: The walk's arithmetic is in 32 bits (igemm_wgmma.cuh's Walk).
_INT32 = 2**31


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def fits(n: int, k: int, g: int) -> bool:
    """Whether the path takes the shape: N and K multiples of the tile (N of the tile times
    ``CLUSTER_N``), one group a K tile."""
    return n % (TILE * CLUSTER_N) == 0 and k % TILE == 0 and g == TILE


def cluster_tiles(m: int, n: int, cm: int = 1, cn: int = 1) -> int:
    """The tiles of clusters of ``cm`` x ``cn`` CTAs (N a multiple of ``TILE * cn``): the
    units of the persistent walk before any split of K."""
    return _cdiv(_cdiv(m, TILE), cm) * (n // (TILE * cn))


def splits(m: int, n: int, k: int, cn: int, sm_count: int, most: int = SPLITS_MAX) -> int:
    """Ways the single kernel splits K: as many as leave each unit a cluster of its own (of
    the ``sm_count`` CTAs that run at once, in clusters of ``cn`` along N), at most
    ``most``, each split at least ``SPLIT_MIN_K_TILES`` K tiles; 1 where the tiles fill
    more than half of them."""
    clusters = min(sm_count, MOST_SMS) // cn
    return max(1, min(most, clusters // max(1, cluster_tiles(m, n, cn=cn)),
                      (k // TILE) // SPLIT_MIN_K_TILES))


def stream_gain(tiles: int, clusters: int) -> float:
    """The share of the clustered kernel's time a stream-K walk of its last waves saves, as
    counted from the waves alone: the clusters the last wave leaves idle, over the waves."""
    if clusters < 1 or tiles <= clusters or tiles % clusters == 0:
        return 0.0
    return (clusters - tiles % clusters) / clusters / _cdiv(tiles, clusters)


def stream_tiles(tiles: int, clusters: int, k_tiles: int, operand_bytes: int) -> int:
    """Tiles the clustered kernel walks stream-K (the first ones; 0: none): the last full
    wave and the partial one, where ``stream_gain`` is at least ``STREAM_MIN_GAIN`` and the
    operands' ``operand_bytes`` are within ``STREAM_OPERAND_BYTES``. Each cluster's range is
    then at least a tile long, so a tile is cut at most once."""
    if stream_gain(tiles, clusters) < STREAM_MIN_GAIN or operand_bytes > STREAM_OPERAND_BYTES:
        return 0
    sk = clusters + tiles % clusters
    return sk if sk * k_tiles * clusters < _INT32 else 0


def split_ws(n_splits: int, m: int, n: int) -> int:
    """Floats of a split-K launch's partial sums: one M x N slice a split (none unsplit)."""
    return n_splits * m * n if n_splits > 1 else 1


def plan(m: int, n: int, k: int) -> dict[str, Any]:
    """The path's workspace for M x N x K: the single kernel's (M <= ``SINGLE_M``) for the
    most splits any device would take (``MOST_SMS``; the launch chooses its own for the
    device's SMs), or the clustered kernel's stream-K cuts: at most one a cluster, each
    with a ticket and two pieces for every consumer warp of its CTAs (``MOST_SMS`` CTAs)."""
    if m <= SINGLE_M:
        most = max(splits(m, n, k, cn, MOST_SMS) for cn in (1, 2))
        return {"kind": "wgmma", "splits": most, "ws": split_ws(most, m, n),
                "counters": cluster_tiles(m, n) * CONSUMER_WARPS}
    return {"kind": "wgmma", "splits": 1, "counters": MOST_SMS * CONSUMER_WARPS,
            "ws": MOST_SMS * CONSUMER_WARPS * CUT_WARP_FLOATS}


def enqueue(launch: Launcher, prefix: str, bufs: Mapping[str, Any], m: int, n: int, k: int,
            a_args: Callable[[int], tuple[Any, ...]], a_first: bool) -> None:
    """Launch ``<prefix>`` (M > ``SINGLE_M``) or ``<prefix>_single`` on M x N x K:
    persistent (no more clusters than run at once), the weights' and out's tensor maps
    built here. ``a_args(cn)`` gives A's arguments (for clusters of ``cn`` CTAs along N):
    before the two maps (``a_first``: a tensor map, as int_gemm's q) or after them; then
    come scale, vth, bias, out, the sizes and the walk's group, then the single kernel's
    split of K or the clustered kernel's stream-K tiles (``stream_tiles``, where the build
    allows it), and the workspace."""
    smem = int(launch.constant(f"{prefix}_smem")[0])
    cfg = launch.constant(f"{prefix}_config", 11)
    threads, cm, cn, by_sms, most, stream_k = (int(x) for x in cfg[[5, 4, 7, 8, 9, 10]])
    single = m <= SINGLE_M
    name = f"{prefix}_single" if single else prefix
    cm = 1 if single else cm  # the single kernel has no cluster along M
    if single and most > SPLITS_MAX:
        raise BadInput(f"{name} built to split K {most} ways: the workspace holds "
                       f"{SPLITS_MAX}")
    if n % (TILE * cn):  # a -D IG_CLUSTER_N=2 build at an N the path rule let through
        raise BadInput(f"{name} built with clusters of {cn} along N needs N a multiple of "
                       f"{TILE * cn}, not {n}")
    a = a_args(cn)
    # A CTA loads its part of the B tile its cluster column shares (multicast to each).
    tw = launch.tensor_map(bufs["w_q"], np.int8, n, k, TILE // cm, TILE)
    # out as the TMA stores it (IG_TMA_STORE): fp32 boxes of the module's shape (64 rows x
    # 32 columns), swizzled as the kernel lays them out in shared memory; a build without it
    # ignores the map.
    box_rows, box_cols = (int(x) for x in launch.constant(f"{prefix}_out_box", 2))
    to = launch.tensor_map(bufs["out"], np.float32, m, n, box_rows, box_cols,
                           swizzle=OUT_SWIZZLE)
    # Persistent: no more clusters than run at once (a later one would run alone): the
    # driver's occupancy query, or (IG_GRID=1) the SMs over the cluster size.
    runs = (launch.sm_count // (cm * cn) if by_sms == 1 else
            launch.max_active_clusters(name, cm * cn, threads, smem))
    # K split so that each unit has a cluster of its own among those that run at once.
    n_splits = splits(m, n, k, cn, max(1, runs) * cn, most) if single else 1
    units = cluster_tiles(m, n, cm, cn) * n_splits
    grid = (min(units, max(1, runs)) * cm * cn, 1, 1)
    # The clustered kernel's last waves stream-K: the workspace holds MOST_SMS CTAs' cuts.
    sk = (stream_tiles(units, grid[0] // (cm * cn), k // TILE, (m + n) * k)
          if stream_k and not single and grid[0] <= MOST_SMS else 0)
    head = (*a, tw, to) if a_first else (tw, to, *a)
    args = (*head, bufs["scale"], bufs["vth"], bufs["bias"], bufs["out"], np.int32(m),
            np.int32(n), np.int32(k), np.int32(GROUP_M),
            np.int32(n_splits if single else sk), bufs["ws"], bufs["counters"])
    # Both kernels wait (griddepcontrol.wait) before they read A, vth or anything else the
    # activation stage writes: a pipeline may launch them under its tail.
    launch(name, grid, (threads, 1, 1), *args, shared=smem, waits=True)
