"""Launch-geometry helpers the plugins share."""

from __future__ import annotations

#: Threads per block of the grid-stride kernels.
BLOCK = 256
#: Enough blocks to fill any current GPU many times over; grid-stride loops do the rest.
MAX_BLOCKS = 8192
#: Reductions that end in one atomic per block use fewer blocks: about 8 resident per SM on
#: a 132-SM H200, so the atomics stay few (each block's loop is unrolled instead).
REDUCE_BLOCKS = 1024


def grid_stride(n: int, block: int = BLOCK, max_blocks: int = MAX_BLOCKS
                ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Grid and block of a grid-stride kernel over ``n`` elements, 4 per thread where
    ``n % 4 == 0`` (the kernels' 16-byte path), 1 otherwise."""
    items = n // 4 if n % 4 == 0 else n
    blocks = max(1, min(max_blocks, -(-items // block)))
    return (blocks, 1, 1), (block, 1, 1)
