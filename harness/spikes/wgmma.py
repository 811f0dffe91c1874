"""The launch of the Hopper integer GEMM (``kernels/common/igemm_wgmma.cuh``), shared by the
stages built on it: ``int_gemm`` (A by TMA from q as int8) and ``int_gemm_packed`` (A decoded
from the spikes' bit-packed planes by the kernel's producer). Its shape rule, its persistent
grid of CTA clusters, the split of K where its tiles are few, that split's workspace, and the
tensor maps of the weights and of out.

A module built on the body names its two entry points ``<prefix>`` (clusters along M) and
``<prefix>_single`` (none along M, K split), and its constants ``<prefix>_smem``,
``<prefix>_config`` and ``<prefix>_out_box``, laid out as ``int_gemm.cu``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from harness.api import BadInput, Launcher
from harness.spikes import geometry

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



def fits(n: int, k: int, g: int) -> bool:
    """Whether the path takes the shape: N and K multiples of the tile (N of the tile times
    ``CLUSTER_N``), one group a K tile."""
    return n % (TILE * CLUSTER_N) == 0 and k % TILE == 0 and g == TILE


def cluster_tiles(m: int, n: int, cm: int = 1, cn: int = 1) -> int:
    """The tiles of clusters of ``cm`` x ``cn`` CTAs (N a multiple of ``TILE * cn``): the
    units of the persistent walk before any split of K."""
    return geometry.cdiv(geometry.cdiv(m, TILE), cm) * (n // (TILE * cn))


def splits(m: int, n: int, k: int, cn: int, sm_count: int, most: int = SPLITS_MAX) -> int:
    """Ways the single kernel splits K: as many as leave each unit a cluster of its own (of
    the ``sm_count`` CTAs that run at once, in clusters of ``cn`` along N), at most
    ``most``, each split at least ``SPLIT_MIN_K_TILES`` K tiles; 1 where the tiles fill
    more than half of them."""
    clusters = min(sm_count, MOST_SMS) // cn
    return max(1, min(most, clusters // max(1, cluster_tiles(m, n, cn=cn)),
                      (k // TILE) // SPLIT_MIN_K_TILES))


def split_ws(n_splits: int, m: int, n: int) -> int:
    """Floats of a split-K launch's partial sums: one M x N slice a split (none unsplit)."""
    return n_splits * m * n if n_splits > 1 else 1


def plan(m: int, n: int, k: int) -> dict[str, Any]:
    """The path's workspace for M x N x K: the single kernel's (M <= ``SINGLE_M``) for the
    most splits any device would take (``MOST_SMS``; the launch chooses its own for the
    device's SMs), or none."""
    if m <= SINGLE_M:
        most = max(splits(m, n, k, cn, MOST_SMS) for cn in (1, 2))
        return {"kind": "wgmma", "splits": most, "ws": split_ws(most, m, n),
                "counters": cluster_tiles(m, n) * CONSUMER_WARPS}
    return {"kind": "wgmma", "splits": 1, "counters": 1, "ws": 1}


def enqueue(launch: Launcher, prefix: str, bufs: Mapping[str, Any], m: int, n: int, k: int,
            a_args: Callable[[int], tuple[Any, ...]], a_first: bool) -> None:
    """Launch ``<prefix>`` (M > ``SINGLE_M``) or ``<prefix>_single`` on M x N x K:
    persistent (no more clusters than run at once), the weights' and out's tensor maps
    built here. ``a_args(cn)`` gives A's arguments (for clusters of ``cn`` CTAs along N):
    before the two maps (``a_first``: a tensor map, as int_gemm's q) or after them; then
    come scale, vth, bias, out, the sizes and the walk's group (and the single kernel's
    split and workspace)."""
    smem = int(launch.constant(f"{prefix}_smem")[0])
    cfg = launch.constant(f"{prefix}_config", 10)
    threads, cm, cn, by_sms, most = (int(x) for x in cfg[[5, 4, 7, 8, 9]])
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
    head = (*a, tw, to) if a_first else (tw, to, *a)
    args = (*head, bufs["scale"], bufs["vth"], bufs["bias"], bufs["out"], np.int32(m),
            np.int32(n), np.int32(k), np.int32(GROUP_M))
    if single:  # the split of K and its workspace
        args += (np.int32(n_splits), bufs["ws"], bufs["counters"])
    # Both kernels wait (griddepcontrol.wait) before they read A, vth or anything else the
    # activation stage writes: a pipeline may launch them under its tail.
    launch(name, grid, (threads, 1, 1), *args, shared=smem, waits=True)
