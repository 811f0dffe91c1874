"""``harness calibrate``: the copy measured and its record stored."""

from __future__ import annotations

from harness.contract.timing import Timing
from harness.engine import calibrate
from harness.results import calibration


class _Info:
    name, slug = "NVIDIA H200", "h200"

    def as_dict(self) -> dict:
        return {"name": self.name}


class FakeGpu:
    device = type("D", (), {"info": _Info()})()

    def copy_bandwidth(self, nbytes, cfg):  # type: ignore[no-untyped-def]
        self.asked = (nbytes, cfg.budget_s)
        return Timing(1000.0, 990.0, 1010.0, 0.1, 200, True), 2 * nbytes / 1e-3 / 1e9


def test_calibrate_measures_and_stores_the_record(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from harness import paths
    from harness.engine import devices

    gpu = FakeGpu()
    monkeypatch.setattr(devices, "open_gpu", lambda device: gpu)
    monkeypatch.setattr(paths, "statistics_dir", lambda: tmp_path)
    c = calibrate.calibrate(0, 1 << 20)
    assert gpu.asked == (1 << 20, 3.0)
    assert c.path == tmp_path / "h200" / "calibration.json"
    assert calibration.load("h200", tmp_path) == c.record
    r = c.record
    assert r["gpu"] == "NVIDIA H200" and r["bytes_each_way"] == 1 << 20
    assert r["gbps"] == 2 * (1 << 20) / 1e-3 / 1e9 and r["samples"] == 200
    assert r["date"] and r["git_sha"] and r["method"].startswith("memcpy_dtod_async")
