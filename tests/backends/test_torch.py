"""The PyTorch peers on the CPU: every stage's torch_impl against the same references, the
Backend protocol, and the one-line errors for what only the GPU can do."""

from __future__ import annotations

import numpy as np
import pytest

from harness.engine import devices, measure, validate
from harness.errors import GpuUnavailable, HarnessError
from tests.backends.conformance import assert_is_backend

torch = pytest.importorskip("torch", reason="the peers need PyTorch (CI installs the CPU build)")


def test_both_peers_are_backends() -> None:
    from harness.backends.torch import BACKENDS, TorchRunner

    assert BACKENDS == ("torch", "torch_compile")  # the names their CSV rows carry
    for name in BACKENDS:
        assert_is_backend(TorchRunner(name), name)


def test_every_torch_peer_matches_the_reference(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.backends.torch import TorchRunner

    runner = TorchRunner("torch")
    for st in reg.stages.values():
        assert st.torch_impl is not None, st.name
        for v in st.variants:
            bad = [c for c in validate.validate(st, v, runner, seeds=1) if not c.ok]
            assert not bad, bad[0].describe()


def test_what_the_cpu_cannot_do_is_one_clear_error(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.backends.torch import TorchRunner

    with pytest.raises(HarnessError, match="unknown peer 'jax'"):
        TorchRunner("jax")
    runner = TorchRunner("torch")
    st = reg.get("dynamic_spikes")
    p = st.point(batch=1)
    x = st.make_inputs(np.random.default_rng(0), "normal", p)
    with pytest.raises(HarnessError, match="timing the torch peers needs the GPU"):
        runner.time(st, st.variants[0], x, p, measure.BenchConfig().timing)
    pipe = reg.pipelines["spike_quant_gemm"]
    with pytest.raises(HarnessError, match=r"only the pycuda backend runs it, not torch$"):
        runner.pipeline(pipe, reg.stages, {}, {}, repeats=1, cold=True)


def test_peers_need_the_gpu_to_be_timed() -> None:
    chosen = devices.choose("numpy", 0)
    with pytest.raises(GpuUnavailable, match="timed on the GPU"):
        devices.peers(chosen, "all")
    assert devices.peers(chosen, "none") == []


def test_speedup_is_best_peer_over_ours() -> None:
    ours = {"status": "ok", "median_us": 10.0}
    peers = [{"status": "ok", "median_us": 40.0}, {"status": "ok", "median_us": 25.0},
             {"status": "failed"}]
    assert measure.speedup(ours, peers) == 2.5
    assert measure.speedup(ours, [{"status": "failed"}]) == ""
