"""The launcher plugins call, on a fake module: signatures from the argument types, one
prepare per signature, buffers passed as addresses, a missing function named."""

from __future__ import annotations

from pathlib import Path

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
    launch = ModuleLauncher(double_stage(tmp_path), mod, stream, 128)
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
    launch = ModuleLauncher(double_stage(tmp_path), FakeModule(drv, {}), drv.Stream(), 256)
    with pytest.raises(HarnessError, match="double: kernel has no extern \"C\" function 'nope'"):
        launch("nope", (1, 1, 1), (1, 1, 1))


def test_a_struct_by_value_is_packed_as_its_bytes(drv: FakeDriver, tmp_path: Path) -> None:
    """A CUtensorMap travels as a 128-byte np.void: format ``128s``, its bytes as the value."""
    seen: list[tuple] = []
    mod = FakeModule(drv, {"k": lambda drv, grid, block, *args: seen.append(args)})
    launch = ModuleLauncher(double_stage(tmp_path), mod, drv.Stream(), 128)
    raw = bytes(range(128))
    tmap = np.frombuffer(raw, dtype=np.dtype((np.void, 128)))[0]
    launch("k", (1, 1, 1), (1, 1, 1), tmap, drv.mem_alloc(16), np.int32(5))
    assert mod.functions["k"].prepared == ["128sPi"]
    assert seen[0][0] == raw and seen[0][2] == np.int32(5)
