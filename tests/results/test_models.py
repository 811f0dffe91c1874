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
