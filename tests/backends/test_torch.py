"""The PyTorch peers on the CPU: every stage's torch_impl against the same references."""

from __future__ import annotations

import pytest

from harness.engine import bench, session, validate

torch = pytest.importorskip("torch", reason="the peers need PyTorch (CI installs the CPU build)")


def test_every_torch_peer_matches_the_reference(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.backends.torch import TorchRunner

    runner = TorchRunner("torch")
    for st in reg.stages.values():
        assert st.torch_impl is not None, st.name
        for v in st.variants:
            bad = [c for c in validate.validate(st, v, runner, seeds=1) if not c.ok]
            assert not bad, bad[0].describe()


def test_peers_need_the_gpu_to_be_timed(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.backends.torch import TorchRunner
    from harness.errors import GpuUnavailable, HarnessError

    s = session.open_bench("numpy", 0)
    with pytest.raises(GpuUnavailable, match="timed on the GPU"):
        session.open_peers(s, "all")
    assert session.open_peers(s, "none") == []
    with pytest.raises(HarnessError, match="unknown peer"):
        TorchRunner("jax")
    job = bench.plan([reg.get("dynamic_spikes")], ["batch=1"])[0]
    row = bench.measure(job, TorchRunner("torch"), bench.BenchConfig(), bench.RunMeta())
    assert row["status"] == "failed" and "needs the GPU" in row["reason"]


def test_speedup_is_best_peer_over_ours() -> None:
    ours = {"status": "ok", "median_us": 10.0}
    peers = [{"status": "ok", "median_us": 40.0}, {"status": "ok", "median_us": 25.0},
             {"status": "failed"}]
    assert bench.speedup(ours, peers) == 2.5
    assert bench.speedup(ours, [{"status": "failed"}]) == ""
