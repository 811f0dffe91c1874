"""Result CSVs read back for display: which files count, and the checks on their cells."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import readback

H200 = Path(__file__).parents[2] / "statistics" / "h200"


def test_number_and_axis() -> None:
    assert readback.number("1.5") == 1.5 and readback.number("") is None
    assert readback.number("-") is None
    assert readback.x_axis([{"batch": "", "out_f": "3584"}]) == "out_f"
    assert readback.x_axis([{"batch": "16", "out_f": "3584"}]) == "batch"


def test_stage_and_pipeline_files(tmp_path: Path) -> None:
    for name in ("dynamic_spikes.csv", "spike_linear.csv", "calibration.json"):
        shutil.copy(H200 / name, tmp_path)
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    assert [p.name for p in readback.stage_files(tmp_path)] == ["dynamic_spikes.csv"]
    assert [p.name for p in readback.pipeline_files(tmp_path)] == ["spike_linear.csv"]
    rows = readback.read_stage_rows(tmp_path)
    assert rows and {r["stage"] for r in rows} == {"dynamic_spikes"}
    assert "total" in readback.intervals(readback.read_checked(tmp_path / "spike_linear.csv"))


def test_a_bad_time_is_named_by_file_and_line(tmp_path: Path) -> None:
    with (H200 / "dynamic_spikes.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    bad = tmp_path / "dynamic_spikes.csv"
    with bad.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows([rows[0], {**rows[1], "median_us": "nan"}])
    with pytest.raises(HarnessError, match=r"dynamic_spikes.csv, line 3: median_us is 'nan'"):
        readback.read_checked(bad)
