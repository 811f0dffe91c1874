"""Device buffers and the poison rule, on the fake driver: what the device is given is what
the host-side spelling says, guard bands are poisoned and checked, nothing leaks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.backends.pycuda import buffers
from harness.backends.pycuda.buffers import GUARD, POISON8, POISON32, Buffers
from tests.backends.pycuda.fakes import FakeDriver, double_stage


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.float32, np.int8, np.uint8,
                                   np.float64, np.int64, np.float16])
@pytest.mark.parametrize("stream", [False, True])
def test_device_poison_is_the_host_spelling(drv: FakeDriver, dtype, stream: bool) -> None:  # type: ignore[no-untyped-def]
    shape = (3, 5)
    nbytes = 15 * np.dtype(dtype).itemsize
    buf = buffers.alloc(drv, nbytes)
    buffers.poison(drv, buf, dtype, nbytes, drv.Stream() if stream else None)
    dev = drv.bytes_at(buf, nbytes)
    assert dev.tobytes() == buffers.poisoned(shape, dtype).tobytes()
    assert dev.tobytes() == buffers.poisoned_bytes(dtype, nbytes).tobytes()
    op = drv.log[-1][0]
    assert op.endswith("_async") == stream
    assert op.startswith("memset_d32" if np.dtype(dtype).itemsize == 4 else "memset_d8")


def test_the_poison_is_a_nan_an_absurd_int32_and_minus_91() -> None:
    assert np.isnan(buffers.poisoned((2,), np.float32)).all()
    assert buffers.poisoned((2,), np.int32).tolist() == [POISON32, POISON32]
    assert buffers.poisoned((1, 2), np.int8).tolist() == [[-91, -91]]
    g32 = buffers.guard_pattern(np.dtype(np.int32))
    assert g32.size == GUARD and g32[:4].tolist() == [0xA5, 0xA5, 0xA5, 0x7F]
    assert set(buffers.guard_pattern(np.dtype(np.int8)).tolist()) == {POISON8}


def test_alloc_never_asks_for_zero_bytes(drv: FakeDriver) -> None:
    assert buffers.alloc(drv, 0).nbytes == 1
    assert buffers.alloc(drv, 10).nbytes == 10


def test_a_run_uploads_poisons_and_reads_back_with_guard_damage(drv: FakeDriver,
                                                                tmp_path: Path) -> None:
    st = double_stage(tmp_path)
    p = st.point(n=6)
    x = np.arange(6, dtype=np.float32)
    bufs = Buffers.allocate(drv, st, {"x": x}, p)
    assert drv.array_at(bufs.inputs["x"], 6, np.float32).tolist() == x.tolist()
    assert bufs.outputs["y"].nbytes == 24 + GUARD
    bufs.poison(drv.Stream())
    assert drv.bytes_at(bufs.outputs["y"], 24 + GUARD).tobytes() == \
        buffers.poisoned_bytes(np.float32, 24 + GUARD).tobytes()
    y = drv.array_at(bufs.outputs["y"], 7, np.float32)
    y[:5] = 1.0
    y[6] = 2.0  # one element past the end: four guard bytes
    res = bufs.download({"x": x})
    assert res.outputs["y"][:5].tolist() == [1.0] * 5 and np.isnan(res.outputs["y"][5])
    assert res.guard_damage == {"y": 4}
    assert res.inputs_after["x"].tolist() == x.tolist()
    assert set(bufs.all()) == {"x", "y"}
    bufs.free()
    assert drv.live() == []


def test_an_in_place_output_is_its_input_and_is_neither_poisoned_nor_freed_twice(
        drv: FakeDriver, tmp_path: Path) -> None:
    st = double_stage(tmp_path, inplace={"y": "x"})
    x = np.ones(4, dtype=np.float32)
    bufs = Buffers.allocate(drv, st, {"x": x}, st.point(n=4))
    assert bufs.outputs["y"] is bufs.inputs["x"] and bufs.aliased == {"y"}
    bufs.poison(drv.Stream())
    assert drv.ops("memset_d32_async", "memset_d8_async") == []
    assert bufs.download({"x": x}).guard_damage == {}
    bufs.free()  # the fake raises on a second free of one allocation
    assert drv.live() == []


def test_the_workspace_is_allocated_without_a_guard(drv: FakeDriver, tmp_path: Path) -> None:
    st = double_stage(tmp_path,
                      workspace=lambda p: {"tmp": ((p["n"], 2), np.dtype(np.int32))})
    bufs = Buffers.allocate(drv, st, {"x": np.ones(3, np.float32)}, st.point(n=3))
    assert bufs.work["tmp"].nbytes == 24 and set(bufs.all()) == {"x", "y", "tmp"}
    bufs.free()
    assert drv.live() == []


def test_a_failed_allocation_frees_what_was_allocated(tmp_path: Path) -> None:
    drv = FakeDriver(size=256 + 4096)  # room for the input, not for the output's guard
    st = double_stage(tmp_path)
    with pytest.raises(FakeDriver.MemoryError):
        Buffers.allocate(drv, st, {"x": np.ones(8, np.float32)}, st.point(n=8))
    assert len(drv.allocs) == 1 and drv.live() == []

