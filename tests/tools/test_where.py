"""``harness where``: the GPU's results folder, named from the device as bench names it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from harness import paths
from harness.backends.pycuda import context
from harness.errors import GpuUnavailable
from harness.front.cli import app
from harness.tools import where


class FakeDevice:
    """A GPU that names itself; records its index and whether it was closed."""

    opened: ClassVar[list[int]] = []
    closed: ClassVar[int] = 0

    def __init__(self, index: int = 0) -> None:
        FakeDevice.opened.append(index)
        self.info = SimpleNamespace(slug=context.gpu_slug("NVIDIA H200 NVL"))

    def close(self) -> None:
        FakeDevice.closed += 1


@pytest.fixture
def fake_gpu(monkeypatch):  # type: ignore[no-untyped-def]
    FakeDevice.opened, FakeDevice.closed = [], 0
    monkeypatch.setattr(context, "Device", FakeDevice)
    return FakeDevice


def test_gpu_dir_is_the_statistics_folder_of_the_device(fake_gpu) -> None:  # type: ignore[no-untyped-def]
    assert where.gpu_dir(1) == paths.statistics_dir() / "h200-nvl"
    assert fake_gpu.opened == [1] and fake_gpu.closed == 1


def test_where_prints_it(fake_gpu) -> None:  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(app, ["where", "--device", "2"])
    assert res.exit_code == 0, res.output
    assert res.stdout == f"{paths.statistics_dir() / 'h200-nvl'}\n"
    assert fake_gpu.opened == [2]


def test_no_gpu_is_one_line_and_exit_2(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def none(index: int = 0) -> None:
        raise GpuUnavailable("no CUDA device is visible")

    monkeypatch.setattr(context, "Device", none)
    res = CliRunner().invoke(app, ["where"])
    assert res.exit_code == 2
    assert res.stderr == "error: no CUDA device is visible\n"
