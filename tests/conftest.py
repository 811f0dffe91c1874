"""Shared fixtures. GPU tests carry ``@pytest.mark.gpu`` and are skipped, with the reason,
where no GPU can be used; the CUDA context comes from ``harness.backends.pycuda.context`` only."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.pycuda.context import gpu_available
from harness.contract import registry

FIXTURES = Path(__file__).parent / "fixtures"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip GPU-marked tests when no GPU is usable, saying why."""
    if not any("gpu" in item.keywords for item in items):
        return
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def reg() -> registry.Registry:
    """The built-in stages."""
    r = registry.discover(entry_points=False)
    assert not r.problems, r.problems
    return r


@pytest.fixture(scope="session")
def gpu_runner():  # type: ignore[no-untyped-def]
    """One GpuRunner (and context) for the whole GPU test session."""
    from harness.backends.pycuda.context import Device
    from harness.backends.pycuda.runner import GpuRunner

    dev = Device(0)
    yield GpuRunner(dev)
    dev.close()
