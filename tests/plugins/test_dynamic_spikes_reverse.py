"""dynamic_spikes_reverse's launch on the CPU: a block per chunk of a row, the chunks as the
kernel counts them (16-byte units where the row is a multiple of 4, single values else)."""

from __future__ import annotations

import collections

import pytest

from harness.contract.launcher import RecordingLauncher
from plugins import dynamic_spikes_reverse as dsr


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
    st = reg.get("dynamic_spikes_reverse")
    v = st.variant("default")
    launch = RecordingLauncher(256)
    st.enqueue(launch, collections.defaultdict(int), st.point(v, batch=5, in_f=4100), v)
    (kernel, grid, threads, args, _), = launch.calls
    assert kernel == "dynamic_spikes_reverse" and threads == (256, 1, 1)
    assert grid == (5 * 2, 1, 1) and [int(a) for a in args[2:5]] == [5, 4100, 2]
