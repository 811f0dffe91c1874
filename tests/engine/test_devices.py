"""Choosing the backend of a run: the NumPy references without a GPU, the peers."""

from __future__ import annotations

import pytest

from harness.backends.pycuda.context import gpu_available
from harness.engine import devices
from harness.errors import BadInput, GpuUnavailable


def test_numpy_backend_asked_for() -> None:
    c = devices.choose("numpy", 0)
    assert not c.on_gpu and c.slug == "cpu" and c.runner.backend == "numpy"
    assert c.meta.gpu == "cpu" and c.meta.git_sha and c.note == "backend numpy asked for"
    with pytest.raises(BadInput, match=r"unknown backend 'opencl' \(known: auto, pycuda, "
                                       r"numpy\)"):
        devices.choose("opencl", 0)


@pytest.mark.skipif(gpu_available()[0], reason="the fallback, on a machine without a GPU")
def test_without_a_gpu_auto_falls_back_and_pycuda_refuses() -> None:
    c = devices.choose("auto", 0)
    assert not c.on_gpu and c.note.startswith("no GPU (")
    with pytest.raises(GpuUnavailable):
        devices.choose("pycuda", 0)


def test_peers_need_the_gpu() -> None:
    pytest.importorskip("torch", reason="the peers need PyTorch")
    c = devices.choose("numpy", 0)
    assert devices.peers(c, "none") == []
    with pytest.raises(GpuUnavailable, match="timed on the GPU"):
        devices.peers(c, "all")
    with pytest.raises(BadInput, match="unknown peer 'jax'"):
        devices.peers(c, "torch,jax")
