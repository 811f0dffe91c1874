"""Grid sizes the plugins share: how many blocks a kernel launch takes, and which of the weight
kernels' group paths a shape takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.api import BadInput, Launcher, Variant

#: Enough blocks to fill any current GPU many times over; grid-stride loops do the rest.
MAX_BLOCKS = 8192
#: Reductions whose blocks meet at the end (a slot and a ticket a block) use fewer blocks:
#: about 8 resident per SM on a 132-SM H200, so the last block has few slots to read (each
#: block's loop has several loads in flight instead).
REDUCE_BLOCKS = 1024
#: Loads a thread of those reductions has in flight in a pass (their kernels' -DUNITS;
#: ``bench --define UNITS=...`` tunes it): the grid is one pass where that fits in
#: REDUCE_BLOCKS blocks (a row of 3584 is one block, which writes the result itself), else
#: REDUCE_BLOCKS blocks looping.
REDUCE_UNITS = 4


def cdiv(a: int, b: int) -> int:
    """``a / b`` rounded up: how many pieces of ``b`` cover ``a``."""
    return -(-a // b)


def grid_stride(n: int, block: int, max_blocks: int = MAX_BLOCKS, units: int = 1
                ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Grid and block of a grid-stride kernel over ``n`` elements with ``block`` threads a
    block, items of 4 elements where ``n % 4 == 0`` (the kernels' 16-byte path), of 1
    otherwise, and ``units`` items a thread in a pass (loaded together): enough blocks for
    one pass, at most ``max_blocks``."""
    items = n // 4 if n % 4 == 0 else n
    blocks = max(1, min(max_blocks, -(-items // (block * units))))
    return (blocks, 1, 1), (block, 1, 1)


def reduce_grid(n: int, block: int, defines: Sequence[tuple[str, str]]
                ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The grid of a reduction whose blocks meet at the end over ``n`` elements: one pass of
    the build's UNITS (``defines``, else REDUCE_UNITS) loads a thread, at most REDUCE_BLOCKS
    blocks (the kernels' slots)."""
    units = int(dict(defines).get("UNITS", REDUCE_UNITS))
    return grid_stride(n, block, REDUCE_BLOCKS, units)


def _stepped(steps: int, sm_count: int, blocks_per_sm: int, warp_steps: int
             ) -> tuple[int, int, int]:
    """The grid of a warp-strided loop whose blocks have ``steps`` steps of a warp each to
    take: ``warp_steps`` > 0, enough blocks that no warp takes more than that many; else one
    wave at most (``blocks_per_sm`` blocks an SM), the warps looping over the rest."""
    if warp_steps > 0:
        return (-(-steps // warp_steps), 1, 1)
    return (min(steps, sm_count * blocks_per_sm), 1, 1)


def chunk_grid(n: int, block: int, sm_count: int, units: int, blocks_per_sm: int,
               warp_steps: int = 0) -> tuple[int, int, int]:
    """The grid of a streaming kernel over ``n`` values (common/units.cuh's): warps take
    chunks of 32 ``units`` units of 4 values (one value a thread where ``n % 4 != 0``).
    ``warp_steps`` > 0 (the stages' default): enough blocks that no warp takes more than
    that many chunks (several waves, blocks retiring and refilling); 0: at most
    ``blocks_per_sm`` blocks an SM, one wave at most, looping over the rest."""
    per_block = block * units * 4 if n % 4 == 0 else block
    return _stepped(-(-n // per_block), sm_count, blocks_per_sm, warp_steps)


@dataclass(frozen=True)
class GeneralTile:
    """The integer GEMMs' general path as a build compiles it (common/igemm_small.cuh's
    IGG_BM x IGG_BN block tile on IGG_WM x IGG_WN warps, IGG_STAGES stages of 64-k tiles in
    rows of GEMM_ROW_PITCH bytes), read from the build's defines (``of_defines``), so a
    ``--define`` build is launched as it was compiled. The defaults are the kernel's."""

    bm: int = 64
    bn: int = 64
    wm: int = 2
    wn: int = 2
    stages: int = 3

    @classmethod
    def of_defines(cls, defines: Mapping[str, str]) -> GeneralTile:
        """The tile a build with these ``-D`` values compiles (a variant's defines, a
        ``--define`` sweep's among them; the kernel's defaults where they are not set)."""
        base = cls()
        sizes = []
        for name, field in (("IGG_BM", "bm"), ("IGG_BN", "bn"), ("IGG_WM", "wm"),
                            ("IGG_WN", "wn"), ("IGG_STAGES", "stages")):
            text = str(defines.get(name, getattr(base, field)))
            if not text.isdecimal():  # what C would read otherwise is not what int() reads
                raise BadInput(f"{name}={text}: the general path's tile takes a positive "
                               "decimal integer")
            sizes.append(int(text))
        return cls(*sizes)

    @classmethod
    def launchable(cls, defines: Mapping[str, str], stage: str) -> GeneralTile:
        """The build's tile (``of_defines``), or BadInput naming ``stage`` where the
        workspace cannot hold it (``unfit``): such a build is never launched."""
        tile = cls.of_defines(defines)
        if why := tile.unfit():
            raise BadInput(f"{stage}: {why}")
        return tile

    @property
    def threads(self) -> int:
        """Threads a block: a warp per warp tile."""
        return 32 * self.wm * self.wn

    def smem(self, qp: int) -> int:
        """Dynamic shared memory bytes with q in ``qp`` byte planes (general_smem_bytes)."""
        return self.stages * (qp * self.bm + self.bn) * GEMM_ROW_PITCH

    def unfit(self) -> str | None:
        """Why the harness cannot launch this tile (its workspace is sized for tiles of
        GEMM_TILE_SIDES), or None."""
        lo, hi = GEMM_TILE_SIDES
        if lo <= self.bm <= hi and lo <= self.bn <= hi:
            return None
        return (f"the general path built with a {self.bm} x {self.bn} tile: its workspace is "
                f"sized for tiles of {lo} to {hi} rows and columns")


#: The general path's tile at the kernel's defaults (a build without IGG_* defines).
GENERAL_TILE = GeneralTile()
#: Bytes of a shared-memory row of the general path's 64-k tiles (GEN_BKP: 64 + 16, so
#: ldmatrix meets no bank conflict).
GEMM_ROW_PITCH = 64 + 16
#: The general path's smallest and largest tile sides a launch may have: the workspace is
#: sized before a module is built, for the most tiles (the smallest) and the most splits
#: (the largest), so a ``--define`` build of any tile between runs on it.
GEMM_TILE_SIDES = (32, 128)
#: Most splits of K a GEMM path uses (whole groups each).
GEMM_MAX_SPLITS = 16
#: Tiles a general launch should have in flight before it splits K (the tuning runs').
GEMM_GENERAL_TILES = 2 * 132 * 4


def general_gemm_plan(m: int, n: int, k: int, g: int, qp: int,
                      tile: GeneralTile = GENERAL_TILE) -> dict[str, Any]:
    """The general path's launch at ``M x N x K``, groups of ``g``, q in ``qp`` byte planes,
    on ``tile`` (the build's): its grid (column tiles, row tiles, splits of K: doubled while
    the grid has too few tiles), its block, its dynamic shared memory, and its workspace
    (``ws`` floats: one M x N slice a split, none unsplit; ``counters``: a ticket a tile)."""
    ng = -(-k // g)
    tx, ty = -(-n // tile.bn), -(-m // tile.bm)
    splits = 1
    while splits < min(ng, GEMM_MAX_SPLITS) and tx * ty * splits < GEMM_GENERAL_TILES:
        splits *= 2
    # The doubling passes the cap only where it is no power of two (16 is one): capped anyway.
    splits = min(splits, ng, GEMM_MAX_SPLITS)
    return {"kind": "general", "grid": (tx, ty, splits), "splits": splits,
            "counters": tx * ty, "ws": splits * m * n if splits > 1 else 1,
            "threads": tile.threads, "smem": tile.smem(qp)}


def general_gemm_workspace(m: int, n: int, k: int, g: int, qp: int) -> tuple[int, int]:
    """The ``ws`` floats and ``counters`` words any general tile of GEMM_TILE_SIDES needs at
    this shape: the most splits come with the largest tile, the most tiles with the
    smallest."""
    plans = [general_gemm_plan(m, n, k, g, qp, GeneralTile(side, side))
             for side in GEMM_TILE_SIDES]
    return max(p["ws"] for p in plans), max(p["counters"] for p in plans)


def group_path(f: int, g: int) -> str:
    """The weight kernels' path for rows of ``f`` values in groups of ``g``
    (common/wgroups.cuh): ``vec1`` (a team of lanes a group, G <= 128) and ``vec4`` (a warp
    a group, G <= 512) where rows and groups are 16-byte aligned, else ``any`` (scalar)."""
    if f % 4 == 0 and g % 4 == 0:
        if g <= 128:
            return "vec1"
        if g <= 512:
            return "vec4"
    return "any"


def group_step_grid(groups: int, path: str, block: int, sm_count: int, lanes: int,
                    blocks_per_sm: int, warp_steps: int = 0) -> tuple[int, int, int]:
    """The grid of a vector path over the list of ``groups``: warps take steps of 32 /
    ``lanes`` groups on ``vec1``, one on ``vec4``. ``warp_steps`` > 0 (the stages' default):
    enough blocks that no warp takes more than that many steps (several waves, blocks
    retiring and refilling); 0: at most ``blocks_per_sm`` blocks an SM, one wave at most,
    looping over the rest."""
    per_warp = 32 // lanes if path == "vec1" else 1
    return _stepped(-(-groups // (block // 32 * per_warp)), sm_count, blocks_per_sm,
                    warp_steps)


def group_grid(launch: Launcher, groups: int, path: str, v: Variant) -> tuple[int, int, int]:
    """The grid of a weight stage's kernel on ``path`` over the list of ``groups``, by the
    variant's LANES, WARP_STEPS and the path's blocks an SM (``group_step_grid``) on the
    launcher's block and SMs: VEC4_BPS on ``vec4``, BPS on the others (the kernels'
    ``__launch_bounds__``)."""
    d = dict(v.defines)
    bps = d["VEC4_BPS"] if path == "vec4" else d["BPS"]
    return group_step_grid(groups, path, launch.block, launch.sm_count, int(d["LANES"]),
                           int(bps), int(d["WARP_STEPS"]))
