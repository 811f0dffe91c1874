"""Several GPU models side by side: every folder named must exist, and every row it shows
is checked as the report checks it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import models
from tests.results import stage_csv


def _folder(path: Path, gpu: str, **kw: str) -> Path:
    path.mkdir()
    stage_csv.write(path / "s.csv", [stage_csv.stage_row("d", 5.0, gpu=gpu, **kw)])
    return path


def test_a_missing_folder_is_refused_as_with_one_folder(tmp_path: Path) -> None:
    """``harness report A /none`` says so, as ``harness report /none`` does, rather than
    showing a column of ``-`` for the folder that is not there."""
    a = _folder(tmp_path / "a", "H200")
    with pytest.raises(HarnessError, match=re.escape(f"no such folder: {tmp_path / 'none'}")):
        models.side_by_side([a, tmp_path / "none"], [8])


def test_a_batch_that_is_no_number_is_one_line(tmp_path: Path) -> None:
    a, b = _folder(tmp_path / "a", "H200"), _folder(tmp_path / "b", "H100", batch="abc")
    with pytest.raises(HarnessError, match=re.escape(
            f"{b / 's.csv'}, line 2: batch is 'abc', not a positive whole number")):
        models.side_by_side([a, b], [8])
    assert "| s | pycuda | d | batch=8 in_f=64 | 5.00 | - |" in models.side_by_side(
        [a, _folder(tmp_path / "c", "H100", batch="16")], [8])


def test_each_folder_is_a_column_named_after_its_gpu_model(tmp_path: Path) -> None:
    """The column is the rows' one ``gpu`` model, else (none, or several) the folder's name;
    a point one model lacks shows ``-``; the activation side's rows are kept at the batches
    asked, the weight side's (no batch) all."""
    a = _folder(tmp_path / "a", "NVIDIA H200")
    stage_csv.write(a / "w.csv", [stage_csv.stage_row("w", 7.0, gpu="NVIDIA H200", batch="")])
    stage_csv.write(a / "x.csv", [stage_csv.stage_row("d", 9.0, gpu="NVIDIA H200",
                                                      batch="16")])
    b = tmp_path / "h100"
    b.mkdir()
    stage_csv.write(b / "s.csv", [stage_csv.stage_row("d", 6.0, gpu=""),
                                  stage_csv.stage_row("e", 4.0, gpu="")])
    c = tmp_path / "mixed"
    c.mkdir()
    stage_csv.write(c / "s.csv", [stage_csv.stage_row("d", 3.0, gpu="X"),
                                  stage_csv.stage_row("e", 2.0, gpu="Y")])
    lines = models.side_by_side([a, b, c], [8]).splitlines()
    assert lines[:2] == ["| stage | backend | variant | point | NVIDIA H200 µs | h100 µs | "
                         "mixed µs |", "|---|---|---|---|---|---|---|"]
    assert sorted(lines[2:]) == sorted([
        "| s | pycuda | d | batch=8 in_f=64 | 5.00 | 6.00 | 3.00 |",
        "| s | pycuda | w | in_f=64 | 7.00 | - | - |",
        "| s | pycuda | e | batch=8 in_f=64 | - | 4.00 | 2.00 |"])


def test_one_folder_or_one_model_twice_is_refused(tmp_path: Path) -> None:
    a, b = _folder(tmp_path / "a", "H200"), _folder(tmp_path / "b", "H200")
    with pytest.raises(HarnessError, match="side by side needs two results folders or more"):
        models.side_by_side([a], [8])
    with pytest.raises(HarnessError, match="H200 is already a column"):
        models.side_by_side([a, b], [8])


def test_a_median_that_can_hold_host_time_says_so(tmp_path: Path) -> None:
    """A peer that synchronises inside its call can be timed without the gate on one model
    and with it on another: the two medians are not one kind of time, and the cell says
    which can hold host time."""
    gate = ("20 of 20 samples timed without the gate (the work synchronises inside its "
            "launch): host time can be inside")
    a = _folder(tmp_path / "a", "H200", backend="torch", reason=gate)
    b = _folder(tmp_path / "b", "H100", backend="torch")
    (line,) = models.side_by_side([a, b], [8]).splitlines()[2:]
    assert line == "| s | torch | d | batch=8 in_f=64 | 5.00 (host time can be inside) | 5.00 |"
