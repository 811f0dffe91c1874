"""dynamic_spikes_reverse's launch on the CPU: a block per chunk of a row, the chunks as the
kernel counts them (16-byte units where the row is a multiple of 4, single values else), and
the units a block takes chosen at each launch: UNITS where the grid is one wave, fewer past
it."""

from __future__ import annotations

import collections

import pytest

from harness.contract.launcher import RecordingLauncher
from plugins import dynamic_spikes_reverse as dsr
from tests.plugins.support import kernel_define


def launch_at(st, batch: int, in_f: int, block: int = 256,  # type: ignore[no-untyped-def]
              sm_count: int = 132):
    """The one launch of the default variant at the point: (grid, args as ints)."""
    v = st.variant("default")
    launch = RecordingLauncher(block, sm_count)
    st.enqueue(launch, collections.defaultdict(int), st.point(v, batch=batch, in_f=in_f), v)
    (kernel, grid, threads, args, _), = launch.calls
    assert kernel == "dynamic_spikes_reverse" and threads == (block, 1, 1)
    return grid, [int(a) for a in args[2:6]]


@pytest.mark.parametrize("f, block, units, want", [
    (3584, 256, 4, 1),    # 896 units: one chunk of 1024
    (4100, 256, 4, 2),    # 1025 units
    (2051, 256, 4, 3),    # single values: 2051 over chunks of 1024
    (3584, 256, 2, 2),
    (1, 256, 4, 1), (5, 128, 1, 1), (4096, 256, 4, 1), (4100, 128, 8, 2),
])
def test_chunks_cover_a_row_once(f: int, block: int, units: int, want: int) -> None:
    assert dsr.chunks(f, block, units) == want
    n = f // 4 if f % 4 == 0 else f
    assert (want - 1) * block * units < n <= want * block * units


def test_the_grid_is_a_block_a_chunk_of_every_row(reg) -> None:  # type: ignore[no-untyped-def]
    grid, args = launch_at(reg.get("dynamic_spikes_reverse"), 5, 4100)
    assert grid == (5 * 2, 1, 1) and args == [5, 4100, 2, 4]


# An H200 (132 SMs) at BLOCK 256 holds 8 blocks an SM: a wave of 1056 blocks.
@pytest.mark.parametrize(("batch", "in_f", "block", "sm_count", "units", "blocks"), [
    (1, 3584, 256, 132, 4, 1),              # a row of 3584 is one chunk of 4 units
    (1024, 3584, 256, 132, 4, 1024),        # one wave: every block one round trip
    (1056, 3584, 256, 132, 4, 1056),        # the whole wave
    (1057, 3584, 256, 132, 2, 2 * 1057),    # past it: two chunks a row
    (16384, 3584, 256, 132, 2, 2 * 16384),
    (16384, 3584, 256, 2048, 4, 16384),     # a device with more SMs: one wave again
    (1056, 3584, 128, 132, 4, 2 * 1056),    # BLOCK 128: 16 blocks an SM, 2 chunks of 4 a row
    (1057, 3584, 128, 132, 2, 4 * 1057),    # 2114 blocks of 4 units: past the wave of 2112
    (600, 1030, 256, 132, 2, 3 * 600),      # single values: 2 chunks of 4 a row, 3 of 2
])
def test_units_by_the_wave(reg, batch: int, in_f: int, block: int, sm_count: int,
                           units: int, blocks: int) -> None:  # type: ignore[no-untyped-def]
    grid, args = launch_at(reg.get("dynamic_spikes_reverse"), batch, in_f, block, sm_count)
    c = dsr.chunks(in_f, block, units)
    assert grid == (blocks, 1, 1) == (batch * c, 1, 1)
    assert args == [batch, in_f, c, units]
    assert dsr.launch_units(batch, in_f, block, sm_count, dsr.UNITS) == units


def test_units_never_exceed_the_kernels_registers() -> None:
    """A ``--define UNITS=1`` build (one unit of registers) gets 1 past the wave too."""
    assert dsr.launch_units(16384, 3584, 256, 132, 1) == 1
    assert dsr.launch_units(16384, 3584, 256, 132, 2) == 2
    assert dsr.launch_units(1, 3584, 256, 132, 1) == 1


def test_the_plugins_numbers_are_the_kernels(reg) -> None:  # type: ignore[no-untyped-def]
    v = reg.get("dynamic_spikes_reverse").variant("default")
    src = "kernels/dynamic_spikes_reverse.cu"
    assert int(dict(v.defines)["UNITS"]) == kernel_define(src, "UNITS") == dsr.UNITS
    assert kernel_define(src, "SM_THREADS") == dsr.SM_THREADS
    assert dsr.PAST_WAVE_UNITS < dsr.UNITS


@pytest.mark.parametrize("sm_count", [132, 148])
def test_cases_take_both_unit_counts(reg, sm_count: int) -> None:  # type: ignore[no-untyped-def]
    """Validation reaches the one-wave launch (UNITS) and the one past it (PAST_WAVE_UNITS),
    each with rows of several chunks, on 16-byte units and on single values."""
    st = reg.get("dynamic_spikes_reverse")
    seen: set[tuple[int, bool, bool]] = set()
    for case in st.cases:
        _, (_, f, c, u) = launch_at(st, case["batch"], case["in_f"], 256, sm_count)
        seen.add((u, c > 1, f % 4 == 0))
    assert {(u, True, aligned) for u in (dsr.UNITS, dsr.PAST_WAVE_UNITS)
            for aligned in (True, False)} <= seen
