"""A results CSV read whole and its rows checked: what every reader of a row's numbers
(compare, fit, best, merge, the report) takes, and what it refuses in one line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import resultcsv

H200 = Path(__file__).parents[2] / "statistics" / "h200"


def _load(name: str) -> list[dict[str, str]]:
    with (H200 / name).open(newline="") as f:
        return list(csv.DictReader(f))


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def test_an_interval_of_zero_or_left_empty_is_taken(tmp_path: Path) -> None:
    """An interval of 0 µs is a time, an empty one was not measured; neither is refused."""
    rows = _load("spike_linear.csv")
    rows[1].update(gemm_us="0", gemm_noise_pct="", intervals='{"activation": '
                   '{"median_us": 0}}')
    assert resultcsv.read(_write(tmp_path / "s.csv", rows)).rows[1]["gemm_us"] == "0"


def test_a_time_at_its_own_p10_or_p90_is_a_row() -> None:
    """p10 <= median <= p90: all samples alike make the three equal."""
    from tests.results import stage_csv

    r = stage_csv.stage_row("d", 100.0, p10_us="100.0", p90_us="100.0")
    resultcsv.check_row(r, resultcsv.STAGE, "here")


def test_a_file_cut_inside_its_last_quoted_cell_is_refused(tmp_path: Path) -> None:
    """A write cut short inside the last row's quoted command: every field is there, the
    last one running to the end of the file: read leniently, it would pass as whole."""
    from tests.results import stage_csv

    whole = stage_csv.write(tmp_path / "a.csv", [stage_csv.stage_row(
        "d", 100.0, command="harness bench d --sweep batch=1,2")])
    cut = tmp_path / "cut.csv"
    cut.write_bytes(whole.read_bytes().rstrip(b"\r\n")[:-5])
    with pytest.raises(HarnessError, match=r"cut.csv is not a results CSV: unexpected end of "
                                           r"data"):
        resultcsv.read(cut)
    assert resultcsv.read(whole).rows[0]["command"] == "harness bench d --sweep batch=1,2"


@pytest.mark.parametrize(("col", "text"), [("batch", "nan"), ("batch", "-1"), ("batch", "1.5"),
                                           ("in_f", "3584x"), ("out_f", "0"),
                                           ("batch", "1e3")])
def test_a_size_that_is_no_positive_whole_number_is_refused(tmp_path: Path, col: str,
                                                            text: str) -> None:
    """A point's size is a key every reader pairs or groups rows by: a mangled one would
    re-pair compare's rows or drop best's and fit's without a word."""
    rows = _load("activation_fused.csv")[:3]
    rows[1][col] = text
    with pytest.raises(HarnessError, match=f"line 3: {col} is {text!r}, not a positive "
                                           "whole number"):
        resultcsv.read(_write(tmp_path / "a.csv", rows))


@pytest.mark.parametrize("col", ["gbps", "pct_peak", "speedup_vs_best_peer"])
def test_a_negative_rate_is_refused(tmp_path: Path, col: str) -> None:
    rows = _load("activation_fused.csv")[:3]
    rows[2][col] = "-3"
    with pytest.raises(HarnessError, match=f"line 4: {col} is -3; it must be a finite "
                                           "number >= 0"):
        resultcsv.read(_write(tmp_path / "a.csv", rows))
