"""CSV schema and incremental writing."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import rows as results

REQUIRED = (
    "stage", "backend", "variant", "batch", "in_f", "out_f", "family", "status", "reason",
    "median_us", "p10_us", "p90_us", "noise_pct", "samples", "gbps", "pct_peak", "kernel_hash",
    "gpu", "driver", "cuda", "git_sha", "timestamp", "command",
)


def test_schema_has_the_required_columns() -> None:
    assert set(REQUIRED) <= set(results.COLUMNS)
    assert len(set(results.COLUMNS)) == len(results.COLUMNS)


def test_each_row_is_on_disk_before_the_next(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    w = results.CsvWriter(p)
    w.write({"stage": "a", "status": "ok", "median_us": 1.5})
    # Read while the writer is still open: the row must already be there.
    rows = results.read_rows(p)
    assert rows == [{**dict.fromkeys(results.COLUMNS, ""), "stage": "a", "status": "ok",
                     "median_us": "1.5"}]
    w.write({"stage": "b", "status": "oom", "reason": "out of memory"})
    assert [r["stage"] for r in results.read_rows(p)] == ["a", "b"]
    w.close()


def test_append_keeps_rows_and_checks_header(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    with results.CsvWriter(p) as w:
        w.write({"stage": "a", "status": "ok"})
    with results.CsvWriter(p, append=True) as w:
        w.write({"stage": "b", "status": "ok"})
    assert [r["stage"] for r in results.read_rows(p)] == ["a", "b"]
    with results.CsvWriter(p) as w:  # not appending: a fresh file
        w.write({"stage": "c", "status": "ok"})
    assert [r["stage"] for r in results.read_rows(p)] == ["c"]
    other = tmp_path / "o.csv"
    other.write_text("x,y\n1,2\n")
    with pytest.raises(HarnessError, match="other columns"):
        results.CsvWriter(other, append=True)


def test_bad_status_and_unknown_columns_are_refused(tmp_path: Path) -> None:
    with results.CsvWriter(tmp_path / "s.csv") as w:
        with pytest.raises(ValueError):
            w.write({"stage": "a", "status": "great"})
        with pytest.raises(ValueError):
            w.write({"stage": "a", "status": "ok", "colour": "red"})


def test_committed_h200_csv_has_the_schema() -> None:
    p = Path(__file__).parents[2] / "statistics" / "h200" / "dynamic_spikes.csv"
    with p.open(newline="") as f:
        header = next(csv.reader(f))
    assert tuple(header) == results.COLUMNS
    rows = results.read_rows(p)
    assert {r["backend"] for r in rows} == {"pycuda", "torch", "torch_compile"}
    ours = [r for r in rows if r["backend"] == "pycuda"]
    assert ours and all(r["status"] == "ok" and r["verified"] == "yes" for r in ours)
    assert all(r["reason"] for r in rows if r["status"] != "ok")  # a failure says why
