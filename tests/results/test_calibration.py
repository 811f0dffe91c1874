"""The stored copy bandwidth: where it lives, writing it and reading it back."""

from __future__ import annotations

from pathlib import Path

from harness.results import calibration


def test_save_and_load(tmp_path: Path) -> None:
    assert calibration.load("h200", tmp_path) is None
    p = calibration.save({"gbps": 4260.0}, "h200", tmp_path)
    assert p == tmp_path / "h200" / "calibration.json"
    assert calibration.load("h200", tmp_path) == {"gbps": 4260.0}
    calibration.save({"gbps": 4300.0}, "h200", tmp_path)  # replaced whole
    assert calibration.load("h200", tmp_path) == {"gbps": 4300.0}


def test_a_record_beside_the_peak_leaves_the_peak(tmp_path: Path) -> None:
    calibration.save({"gbps": 4260.0}, "h200", tmp_path)
    name = calibration.beside("write", 1 << 30)
    assert name == "calibration-write-1073741824.json"
    p = calibration.save({"gbps": 3900.0}, "h200", tmp_path, name=name)
    assert p == tmp_path / "h200" / name
    assert calibration.load("h200", tmp_path) == {"gbps": 4260.0}
