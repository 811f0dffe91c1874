"""Fixtures for the pycuda backend's CPU tests: a fake driver, and a GpuRunner on it whose
modules come from the fakes instead of nvcc."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.pycuda import compile as compile_mod
from harness.backends.pycuda import gate, l2, sampling
from harness.backends.pycuda import runner as runner_mod
from harness.backends.pycuda.runner import GpuRunner
from harness.contract.stage import Stage
from tests.backends.pycuda.fakes import (
    FakeDriver,
    compile_double,
    double_stage,
    fake_device,
    timing_module,
)


@pytest.fixture
def drv() -> FakeDriver:
    """A fresh fake ``pycuda.driver`` with 1 MiB of device memory."""
    return FakeDriver()


@pytest.fixture
def fake_compilers(drv: FakeDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage modules and the timing kernels built by the fakes (logged as ``compile``)."""
    monkeypatch.setattr(compile_mod, "compile_module", compile_double(drv))

    def timing(arch: str):  # type: ignore[no-untyped-def]
        drv.log.append(("compile", "timing", arch))
        return timing_module(drv)

    monkeypatch.setattr(l2, "compile_timing_kernels", timing)
    monkeypatch.setattr(sampling, "compile_timing_kernels", timing)
    monkeypatch.setattr(gate, "compile_timing_kernels", timing)
    monkeypatch.setattr(runner_mod, "compile_timing_kernels", timing)


@pytest.fixture
def runner(drv: FakeDriver, fake_compilers: None) -> GpuRunner:
    """A GpuRunner on the fake driver (L2 of 4 KiB, 2 SMs)."""
    return GpuRunner(fake_device(drv))


@pytest.fixture
def double(tmp_path: Path) -> Stage:
    """The toy stage y = 2 x."""
    return double_stage(tmp_path)
