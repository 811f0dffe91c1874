"""The L2 flush and the stream hold on the fake driver: the flush reads a zeroed buffer of
4x the L2 with 4 blocks per SM, allocated once; both kernels are compiled once."""

from __future__ import annotations

import numpy as np

from harness.backends.pycuda.l2 import FlushAndHold
from tests.backends.pycuda.fakes import FakeDriver


def test_flush_reads_four_times_the_l2_from_one_zeroed_buffer(drv: FakeDriver,
                                                              fake_compilers: None) -> None:
    stream = drv.Stream()
    fh = FlushAndHold(drv, stream, "sm_90", l2_bytes=4096, sm_count=3)
    assert drv.log == []  # nothing compiled or allocated before it is used
    fh.flush()
    fh.flush()
    buf, sink = drv.allocs
    assert buf.nbytes == 4 * 4096 and sink.nbytes == 4
    assert drv.ops("memset_d8") == [("memset_d8", int(buf), 0, 4 * 4096)]
    launches = drv.ops("launch")
    assert len(launches) == 2
    name, grid, block, handle, args = launches[0][1:]
    assert (name, grid, block, handle) == ("harness_flush", (12, 1, 1), (512, 1, 1),
                                           stream.handle)
    assert args == (int(buf), np.int64(4 * 4096 // 16), int(sink))
    assert type(args[1]) is np.int64
    assert drv.ops("compile") == [("compile", "timing", "sm_90")]


def test_hold_delays_the_stream_by_the_given_nanoseconds(drv: FakeDriver,
                                                         fake_compilers: None) -> None:
    stream = drv.Stream()
    fh = FlushAndHold(drv, stream, "sm_80", l2_bytes=1024, sm_count=1)
    fh.hold(20_000)
    fh.flush()
    (launch,) = drv.ops("launch")[:1]
    assert launch[1:5] == ("harness_delay", (1, 1, 1), (1, 1, 1), stream.handle)
    assert launch[5] == (np.uint64(20_000),) and type(launch[5][0]) is np.uint64
    assert drv.ops("compile") == [("compile", "timing", "sm_80")]
