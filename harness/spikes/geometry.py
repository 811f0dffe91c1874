"""Grid sizes the plugins share: how many blocks a kernel launch takes."""

from __future__ import annotations

#: Enough blocks to fill any current GPU many times over; grid-stride loops do the rest.
MAX_BLOCKS = 8192
#: Reductions that end in one atomic per block use fewer blocks: about 8 resident per SM on
#: a 132-SM H200, so the atomics stay few (each block's loop is unrolled instead).
REDUCE_BLOCKS = 1024


def grid_stride(n: int, block: int, max_blocks: int = MAX_BLOCKS
                ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Grid and block of a grid-stride kernel over ``n`` elements with ``block`` threads a
    block, 4 elements per thread where ``n % 4 == 0`` (the kernels' 16-byte path), 1
    otherwise."""
    items = n // 4 if n % 4 == 0 else n
    blocks = max(1, min(max_blocks, -(-items // block)))
    return (blocks, 1, 1), (block, 1, 1)


def one_wave(n: int, block: int, sm_count: int, units: int, blocks_per_sm: int
             ) -> tuple[int, int, int]:
    """The grid of a streaming kernel over ``n`` values (common/units.cuh's): warps take
    chunks of 32 ``units`` units of 4 values (one value a thread where ``n % 4 != 0``), at
    most ``blocks_per_sm`` blocks an SM, so one wave at most, looping over the rest."""
    per_block = block * units * 4 if n % 4 == 0 else block
    return (min(-(-n // per_block), sm_count * blocks_per_sm), 1, 1)
