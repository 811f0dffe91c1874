"""The fused activation kernels' launch geometry (``kernels/activation_fused.cu``): the
defaults of their tuning defines, each the kernel's own ``-D`` default, and which kernel
takes a batch of rows and on what grid, read from a variant's defines so that a ``-D`` build
is launched as it was compiled. The plugin ``activation_fused`` declares the stage and
launches it by these rules."""

from __future__ import annotations

from collections.abc import Mapping

#: The kernel's LAYOUT define a layout is built with: ``operand`` launches only pass 1,
#: which is the same code in either build, so it takes the int8 one.
BUILD_LAYOUT = {"int8": 0, "packed": 1, "operand": 0}
#: Pass 1's most blocks (its rows grid-strided over them): few enough that their three
#: atomics each stay cheap, many enough to fill the GPU (8 rows a block at batch 65536). A
#: -D define of the variant that the kernel does not read: the plugin's ``enqueue`` reads
#: it back, so ``bench --define`` can tune it (``stats_blocks``).
STATS_BLOCKS = 8192
#: Pass 1's blocks where its rows come through the ring (``stats_shared``) and STATS_BLOCKS
#: would give each block one or two rows (batch below 2 x STATS_BLOCKS; one for most of
#: them below 1.5 x), so that the ring holds a block's next rows while it quantises one;
#: never more than STATS_BLOCKS. Like STATS_BLOCKS a define only the plugin's ``enqueue``
#: reads. 256 on the H100: 53.3 µs against 69.3 at one row a block at batch 8192, 27.8
#: against 37.3 at 4096, 12.7 against 14.1 at 1024 (in_f 3584, the operand layout;
#: statistics/h100-80gb-hbm3/tuning/stats-blocks-operand/), 3-7 % faster at 12288
#: (tuning/ring-blocks/); 12289-16383 rows are not measured. Rows past the ring (the
#: register prefetch) keep STATS_BLOCKS: one row a block was fastest there.
STATS_RING_BLOCKS = 256
#: 16-value units of q8 a pass-2 thread loads before it stores (kernel's -DENC_UNITS): on
#: the H200, 2 was 0.5 % faster than 4 at every STATS_BLOCKS (statistics/h200/tuning/).
ENC_UNITS = 2
#: Pass 1's resident blocks an SM (``__launch_bounds__``'s minimum): 4 caps its registers
#: at 64, where the fast quantisation's exact fallback took it to 80 (3 blocks an SM).
STATS_MINB = 4
#: Pass 1's rows in shared memory a block (the kernel's -DSTATS_STAGES): where that many
#: aligned rows fit STATS_RING_BYTES (``stats_shared``), rows come in by cp.async.bulk,
#: STATS_STAGES - 1 of them in flight while the block quantises one; 0 keeps the register
#: prefetch (one row in flight).
STATS_STAGES = 3
#: The ring's most bytes (the kernel's -DSTATS_RING_BYTES): sm_90's 227 KB a block less 4 KB
#: for act_stats' static arrays, so rows up to 19028 values at three stages.
STATS_RING_BYTES = 228352
#: Pass 2 has at least this many blocks (or one a row): the per-row fallback fills the GPU.
ENC_MIN_BLOCKS = 264
#: Batches up to this run both passes in one block and one launch, act_small (kernel's
#: -DSMALL_B, read back by the plugin's ``enqueue``: the kernel's shared arrays hold that
#: many rows): 1,
#: since the two passes ran batches 2-4 in 8.3 µs against act_small's 9.9-16.4 (H200,
#: statistics/h200/tuning/act-one/small-b2/). So act_small takes batch 1 where act_one does
#: not (F % 4 != 0, or wider than act_one holds: ``one_geometry``); act_one and act_rows are
#: tried first at every batch.
SMALL_B = 1
#: float4 of a row each thread of the one-block kernels holds in registers (the kernels'
#: -DCACHE_VEC, common/threshold.cuh): in a build without act_one's cluster, rows up to
#: 4 x CACHE_VEC x BLOCK values take the one-block act_one, on CACHE_VEC x BLOCK threads
#: (at most 1024).
CACHE_VEC = 4
#: act_one's most float4 slots (CACHE_VEC x BLOCK; the kernel's -DONE_MAX_SLOTS, read back
#: from a build that sets it): its |x| sums fill shared memory past that, so a build whose
#: caches hold more has no act_one (the kernel traps there).
ONE_MAX_SLOTS = 8192
#: act_one on a thread-block cluster (the kernel's -DONE_CLUSTER): 2 (the default) gives it
#: BLOCK / 32 blocks, one SM each, of ceil(F / 4 / BLOCK) warps, one float4 a thread, where
#: the build allows (BLOCK a multiple of 32, at most 256, so at most 8 blocks, the portable
#: cluster size), so rows up to 128 x BLOCK values (32 warps a block), and B rows at once
#: where B x ceil(F / 4 / BLOCK) <= 32; the blocks share their partial sums and ranges
#: through st.async into each other's shared memory. 0: one block, batch 1, rows up to
#: 4 x CACHE_VEC x BLOCK. At batch 1 as a graph, 4.74 µs against one
#: block's 5.07 on in_f 3584, and 5.79 against act_small's 15.82 on in_f 18944 (H200,
#: statistics/h200/tuning/act-one/wide/).
ONE_CLUSTER = 2
#: The most rows act_rows (the cluster act_one on several rows) takes (the kernel's
#: -DONE_ROWS: its shared array of the rows' sums holds that many), within its 32 warps a
#: block: 32, so every batch whose warps fit. 1 sends batches past 1 to the other paths (an
#: A/B of act_rows against them).
ONE_ROWS = 32
#: act_grid, the two passes in one launch (pass 1's q kept in registers, the q range met at a
#: grid-wide barrier), takes at most this many rows a block (the kernel's -DGRID_ROWS: its
#: register array of kept q words); 0 keeps those batches on the two passes (an A/B).
GRID_ROWS = 4
#: act_grid's blocks an SM (the kernel's -DGRID_MINB, its ``__launch_bounds__`` minimum, so
#: that many are resident by construction): its grid is at most this many an SM, every block
#: resident at once, which the barrier needs.
GRID_MINB = 4
#: Threads an SM runs at once on sm_80 and sm_90 (the kernel's cluster build needs sm_90).
SM_THREADS = 2048


#: The tuning defines every variant is built with, in the order they are passed (each
#: read back by the launch from the variant, so that a ``-D`` build launches as compiled).
TUNING = (("SMALL_B", SMALL_B), ("CACHE_VEC", CACHE_VEC), ("STATS_BLOCKS", STATS_BLOCKS),
          ("STATS_RING_BLOCKS", STATS_RING_BLOCKS), ("ENC_UNITS", ENC_UNITS),
          ("STATS_MINB", STATS_MINB), ("STATS_STAGES", STATS_STAGES),
          ("STATS_RING_BYTES", STATS_RING_BYTES), ("ONE_CLUSTER", ONE_CLUSTER),
          ("ONE_ROWS", ONE_ROWS), ("GRID_ROWS", GRID_ROWS), ("GRID_MINB", GRID_MINB))


def one_geometry(defines: Mapping[str, str], block: int, f: int,
                 b: int = 1) -> tuple[int, int, int] | None:
    """act_one's (blocks, threads a row, rows) for ``b`` rows of ``f`` values in the build of
    these defines, the block being (threads a row, rows); or None where act_one does not
    take them (F % 4 != 0, or more than the build's act_one holds). A cluster of BLOCK / 32
    blocks of 32 x ceil(F / 4 / BLOCK) threads a row where ONE_CLUSTER and the build allow
    it (the kernel's ONE_CL), up to 32 warps a block and ONE_ROWS rows; else, at batch 1
    only, one block of CACHE_VEC x BLOCK threads (at most 1024) holding up to 4 x CACHE_VEC
    x BLOCK values, and none past ONE_MAX_SLOTS float4."""
    if f % 4 or b < 1:
        return None
    if int(defines["ONE_CLUSTER"]) and block % 32 == 0 and block <= 256:
        turns = -(-(f // 4) // block)
        fits = b * turns <= 32 and b <= int(defines["ONE_ROWS"])
        return (block // 32, 32 * turns, b) if fits else None
    slots = int(defines["CACHE_VEC"]) * block
    if b > 1 or f > 4 * slots or slots > int(defines.get("ONE_MAX_SLOTS", ONE_MAX_SLOTS)):
        return None
    return 1, min(slots, 1024), 1


def row_fits_caches(defines: Mapping[str, str], block: int, f: int) -> bool:
    """Whether a row of ``f`` values fits the thread caches of a block of ``block`` threads
    in this build (F % 4 == 0, F <= 4 x CACHE_VEC x BLOCK): where act_grid can keep it."""
    return f % 4 == 0 and f <= 4 * int(defines["CACHE_VEC"]) * block


def grid_geometry(defines: Mapping[str, str], block: int, sm_count: int, f: int,
                  b: int, per_sm: int | None = None) -> tuple[int, int] | None:
    """act_grid's (blocks, rows a block) for ``b`` rows of ``f`` values, or None where it
    does not take them: the int8 planes layout only (the packed build has the kernel, but
    its planes, packed across eight lanes by shuffles, made it 27-73 % slower than the two
    passes: kernels/NOTES.md), a row must fit a thread's cache (F % 4 == 0, F <= 4 x
    CACHE_VEC x BLOCK: no tail read again), and the rows GRID_ROWS a block on at most
    GRID_MINB blocks an SM, every block resident at once (the barrier waits for all of
    them): the launch bounds hold that many by their registers only where GRID_MINB x
    BLOCK fits an SM's threads, so a larger BLOCK has no act_grid. ``per_sm``: the blocks
    of act_grid an SM of the device holds, as the driver counts them for this build (None:
    as the launch bounds promise); the grid takes the lesser. The rows are spread evenly:
    ceil(b / blocks) a block."""
    most, minb = int(defines["GRID_ROWS"]), int(defines["GRID_MINB"])
    if int(defines["LAYOUT"]) != BUILD_LAYOUT["int8"]:
        return None
    if most < 1 or b < 1 or not row_fits_caches(defines, block, f):
        return None
    # Past SM_THREADS ptxas ignores the launch bounds' minimum, so the registers no longer
    # guarantee GRID_MINB blocks an SM (at BLOCK 1024: 64 registers, one block): no act_grid.
    if minb < 1 or minb * block > SM_THREADS:
        return None
    resident = min(minb, minb if per_sm is None else per_sm) * sm_count
    if resident < 1:
        return None
    rows = -(-b // resident)
    return (-(-b // rows), rows) if rows <= most else None


def stats_shared(defines: Mapping[str, str], block: int, f: int) -> int:
    """act_stats' dynamic shared memory in bytes: STATS_STAGES rows of ``f`` floats where
    they fit STATS_RING_BYTES and the rows are aligned (F % 4 == 0: the kernel's
    ``stats_ring_fits``), else none (the register prefetch, or scalar loads)."""
    stages = int(defines.get("STATS_STAGES", STATS_STAGES))
    ring = stages * 4 * f
    if stages < 1 or f % 4 or ring > int(defines.get("STATS_RING_BYTES", STATS_RING_BYTES)):
        return 0
    return ring


def stats_blocks(defines: Mapping[str, str], b: int, ring: bool,
                 resident: tuple[int, int] | None = None) -> int:
    """Pass 1's blocks for ``b`` rows: at most STATS_BLOCKS; where the rows come through the
    ring and STATS_BLOCKS would give each block at most two rows (``b`` below twice it), at
    most STATS_RING_BLOCKS as well, so that a block has rows in flight while it quantises
    one. ``resident``: (blocks an SM holds with the ring's shared memory, SMs); where that
    is fewer than STATS_MINB (rows wider than 4096 values), at most the blocks resident:
    one wave, each block streaming its rows through its ring."""
    cap = int(defines.get("STATS_BLOCKS", STATS_BLOCKS))
    if ring and b < 2 * cap:
        cap = min(cap, int(defines.get("STATS_RING_BLOCKS", STATS_RING_BLOCKS)))
    if ring and resident and resident[0] < int(defines.get("STATS_MINB", STATS_MINB)):
        cap = min(cap, max(1, resident[0]) * resident[1])
    return max(1, min(b, cap))
