"""The launcher plugins call, on a fake module: signatures from the argument types, one
prepare per signature, buffers passed as addresses, a missing function named."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from harness.backends.pycuda.launcher import ModuleLauncher
from harness.errors import HarnessError
from tests.backends.pycuda.fakes import FakeDriver, FakeModule, double_stage


def test_arguments_fix_the_signature_and_each_is_prepared_once(drv: FakeDriver,
                                                               tmp_path: Path) -> None:
    seen: list[tuple] = []
    mod = FakeModule(drv, {"k": lambda drv, grid, block, *args: seen.append(args)})
    stream = drv.Stream()
    launch = ModuleLauncher(double_stage(tmp_path), mod, stream, 128, 132)
    assert launch.block == 128
    buf = drv.mem_alloc(16)
    launch("k", (2, 1, 1), (32, 1, 1), buf, np.int32(3), np.float32(0.5), np.uint64(7))
    launch("k", [4, 1, 1], [32, 1, 1], buf, np.int32(4), np.float32(1.5), np.uint64(8))
    launch("k", (1, 1, 1), (1, 1, 1), buf, np.int64(1))
    fn = mod.functions["k"]
    assert fn.prepared == ["PifQ", "Pq"]
    assert seen[0] == (int(buf), np.int32(3), np.float32(0.5), np.uint64(7))
    assert type(seen[0][0]) is int
    grid, block, handle = drv.ops("launch")[1][2:5]
    assert grid == (4, 1, 1) and block == (32, 1, 1) and handle == stream.handle


def test_a_missing_function_names_the_stage_and_the_function(drv: FakeDriver,
                                                              tmp_path: Path) -> None:
    launch = ModuleLauncher(double_stage(tmp_path), FakeModule(drv, {}), drv.Stream(), 256, 132)
    with pytest.raises(HarnessError, match="double: kernel has no extern \"C\" function 'nope'"):
        launch("nope", (1, 1, 1), (1, 1, 1))


def test_a_struct_by_value_is_laid_out_as_the_driver_says(
        drv: FakeDriver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CUtensorMap (a 128-byte np.void) puts every parameter where ptxas put it: the whole
    block is built from the driver's layout (read once, from the cubin) and passed as one
    ``<size>s`` argument."""
    from harness.backends.pycuda import cudriver

    asked: list[tuple[bytes, str, int]] = []
    monkeypatch.setattr(cudriver, "param_layout",
                        lambda cubin, name, count: asked.append((cubin, name, count)) or
                        [(0x70, 128), (0xF0, 8), (0xF8, 4)])
    seen: list[tuple] = []
    mod = FakeModule(drv, {"k": lambda drv, grid, block, *args: seen.append(args)})
    launch = ModuleLauncher(double_stage(tmp_path), mod, drv.Stream(), 128, 132,
                            cubin=lambda: b"CUBIN")
    assert launch.sm_count == 132
    raw = bytes(range(128))
    tmap = np.frombuffer(raw, dtype=np.dtype((np.void, 128)))[0]
    buf = drv.mem_alloc(16)
    launch("k", (1, 1, 1), (1, 1, 1), tmap, buf, np.int32(5))
    launch("k", (1, 1, 1), (1, 1, 1), tmap, buf, np.int32(6))
    assert asked == [(b"CUBIN", "k", 3)]  # the layout is read once, for the 3 arguments
    assert mod.functions["k"].prepared == ["252s"]
    block = seen[0][0]
    assert len(block) == 0xFC and block[:0x70] == bytes(0x70)
    assert block[0x70:0xF0] == raw
    assert int.from_bytes(block[0xF0:0xF8], "little") == int(buf)
    assert int.from_bytes(block[0xF8:0xFC], "little") == 5


def test_a_struct_without_a_cubin_is_one_clear_error(drv: FakeDriver, tmp_path: Path) -> None:
    mod = FakeModule(drv, {"k": lambda drv, grid, block, *args: None})
    launch = ModuleLauncher(double_stage(tmp_path), mod, drv.Stream(), 128, 132)
    tmap = np.zeros((), dtype=np.dtype((np.void, 128)))[()]
    with pytest.raises(HarnessError, match="struct by value"):
        launch("k", (1, 1, 1), (1, 1, 1), tmap)


def test_a_constant_is_read_once_and_handed_out_as_a_copy(
        drv: FakeDriver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    copies: list[int] = []

    def memcpy_dtoh(dest: np.ndarray, src: int) -> None:
        copies.append(src)
        dest[:] = np.arange(dest.size)

    fake_pycuda = types.ModuleType("pycuda")
    fake_pycuda.driver = types.SimpleNamespace(memcpy_dtoh=memcpy_dtoh)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycuda", fake_pycuda)
    mod = types.SimpleNamespace(get_global=lambda name: (0x80, 28))
    launch = ModuleLauncher(double_stage(tmp_path), mod, drv.Stream(), 128, 132)
    first = launch.constant("cfg", 7)
    first[0] = 99  # the caller's copy: the launcher's stays as read
    assert launch.constant("cfg", 7).tolist() == list(range(7)) and copies == [0x80]
    with pytest.raises(HarnessError, match="symbol big has 28 bytes, 32 asked for"):
        launch.constant("big", 8)


def test_a_launcher_without_the_sm_count_is_refused(drv, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 0 would size a persistent grid to no blocks (an invalid launch, or a grid of one
    cluster): refused when the launcher is made."""
    with pytest.raises(ValueError, match="SM count"):
        ModuleLauncher(double_stage(tmp_path), FakeModule(drv, {}), drv.Stream(), 128, 0)


class FakeFunction:
    """``cudriver.DriverKernel`` without a driver: records what it loads and launches."""

    made: ClassVar[list[tuple[bytes, str]]] = []
    launched: ClassVar[list[tuple[str, tuple, tuple, int, int, bytes]]] = []
    closed: ClassVar[list[str]] = []

    def __init__(self, cubin: bytes, name: str) -> None:
        self.name = name
        FakeFunction.made.append((cubin, name))

    def launch_dependent(self, grid: tuple, block: tuple, shared: int, stream: int,
                         params: bytes) -> None:
        FakeFunction.launched.append((self.name, tuple(grid), tuple(block), shared, stream,
                                      params))

    def close(self) -> None:
        FakeFunction.closed.append(self.name)


def test_only_a_waiting_kernel_right_after_follow_is_launched_as_a_dependent(
        drv: FakeDriver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``follow`` lets the next launch start under the kernel before it, if that kernel
    waits on the device; any launch takes the permission back, so a step's later launches
    (and a kernel that does not wait) keep the stream's order."""
    from harness.backends.pycuda import cudriver

    FakeFunction.made, FakeFunction.launched, FakeFunction.closed = [], [], []
    monkeypatch.setattr(cudriver, "DriverKernel", FakeFunction)
    monkeypatch.setattr(cudriver, "param_layout",
                        lambda cubin, name, count: [(0, 8), (8, 4)][:count])
    plain: list[str] = []

    def kernel(name: str) -> Any:
        return lambda drv, grid, block, *args: plain.append(name)

    mod = FakeModule(drv, {n: kernel(n) for n in ("gemm", "other")})
    stream = drv.Stream()
    launch = ModuleLauncher(double_stage(tmp_path), mod, stream, 128, 132,
                            cubin=lambda: b"CUBIN")
    buf = drv.mem_alloc(16)
    launch("gemm", (2, 1, 1), (384, 1, 1), buf, np.int32(5), waits=True)  # not after follow
    launch.follow()
    launch("gemm", (66, 1, 1), (384, 1, 1), buf, np.int32(7), shared=1000, waits=True)
    launch("gemm", (66, 1, 1), (384, 1, 1), buf, np.int32(8), waits=True)  # used up
    launch.follow()
    launch("other", (1, 1, 1), (32, 1, 1), buf, np.int32(1))  # does not wait: in order
    launch("gemm", (3, 1, 1), (384, 1, 1), buf, np.int32(9), waits=True)  # used up by it
    launch.follow()
    launch.follow_none()  # taken back unused
    launch("gemm", (4, 1, 1), (384, 1, 1), buf, np.int32(10), waits=True)
    launch.follow()
    launch("gemm", (5, 1, 1), (384, 1, 1), buf, np.int32(11), waits=True)
    assert plain == ["gemm", "gemm", "other", "gemm", "gemm"]
    params = int(buf).to_bytes(8, "little") + (7).to_bytes(4, "little")
    assert FakeFunction.launched == [
        ("gemm", (66, 1, 1), (384, 1, 1), 1000, stream.handle, params),
        ("gemm", (5, 1, 1), (384, 1, 1), 0, stream.handle,
         int(buf).to_bytes(8, "little") + (11).to_bytes(4, "little"))]
    assert FakeFunction.made == [(b"CUBIN", "gemm")]  # loaded once, kept
    launch.close()
    assert FakeFunction.closed == ["gemm"]
