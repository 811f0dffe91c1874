"""CSV schema and incremental writing: each row whole, an existing file replaced only on
request, a torn last row cut away before appending."""

from __future__ import annotations

import csv
import errno
import os
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import files
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
    with results.CsvWriter(p, files.APPEND) as w:
        w.write({"stage": "b", "status": "ok"})
    assert [r["stage"] for r in results.read_rows(p)] == ["a", "b"]
    with pytest.raises(HarnessError, match="exists: --append adds to it, --overwrite "):
        results.CsvWriter(p)  # neither: the rows are not replaced silently
    assert [r["stage"] for r in results.read_rows(p)] == ["a", "b"]
    with results.CsvWriter(p, files.OVERWRITE) as w:  # asked for: a fresh file
        w.write({"stage": "c", "status": "ok"})
    assert [r["stage"] for r in results.read_rows(p)] == ["c"]
    other = tmp_path / "o.csv"
    other.write_text("x,y\n1,2\n")
    with pytest.raises(HarnessError, match="other columns"):
        results.CsvWriter(other, files.APPEND)
    assert other.read_text() == "x,y\n1,2\n"


def test_a_file_without_rows_is_not_results(tmp_path: Path) -> None:
    """Empty, a header alone, or a header cut short: nothing to lose, so no flag needed."""
    header = ",".join(results.COLUMNS)
    for i, text in enumerate(["", header + "\r\n", header[:17]]):
        p = tmp_path / f"s{i}.csv"
        p.write_text(text)
        with results.CsvWriter(p) as w:
            w.write({"stage": "a", "status": "ok"})
        assert [r["stage"] for r in results.read_rows(p)] == ["a"], text


def test_a_torn_last_row_is_cut_before_appending(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    with results.CsvWriter(p) as w:
        w.write({"stage": "a", "status": "ok", "reason": "two\nlines"})
        w.write({"stage": "b", "status": "ok"})
    whole = p.read_bytes()
    start = whole.index(b"\nb,") + 1
    for cut in (len(whole) - start - 2, len(whole) - start - 5):  # the last row cut short
        p.write_bytes(whole[:-cut])
        with results.CsvWriter(p, files.APPEND) as w:
            assert w.repaired.startswith(f"repaired {p}: cut a torn last row (")
            w.write({"stage": "c", "status": "ok"})
        assert [r["stage"] for r in results.read_rows(p)] == ["a", "c"], cut
        assert results.read_rows(p)[0]["reason"] == "two\nlines"
    p.write_bytes(whole[:-1])  # cut between the \r and the \n: the row is whole
    with results.CsvWriter(p, files.APPEND) as w:
        assert w.repaired == f"repaired {p}: ended its last line before appending"
        w.write({"stage": "c", "status": "ok"})
    assert [r["stage"] for r in results.read_rows(p)] == ["a", "b", "c"]
    p.write_bytes(whole[:-2])  # no line end at all: kept or cut would be a guess
    with pytest.raises(HarnessError, match="every field but no line end"):
        results.CsvWriter(p, files.APPEND)
    assert p.read_bytes() == whole[:-2]
    p.write_bytes(whole)
    with results.CsvWriter(p, files.APPEND) as w:  # a whole file: nothing to repair
        assert w.repaired == ""


def test_a_file_damaged_before_its_last_row_is_refused(tmp_path: Path) -> None:
    """Rows glued together mid-file (what unlocked writers left) are not guessed at."""
    p = tmp_path / "s.csv"
    with results.CsvWriter(p) as w:
        for s in "abc":
            w.write({"stage": s, "status": "ok"})
    lines = p.read_bytes().split(b"\r\n")
    lines[1] = lines[1][:-5]  # glue a cut row onto the next one
    p.write_bytes(b"\r\n".join([*lines[:1], lines[1] + lines[2], *lines[3:]]))
    before = p.read_bytes()
    with pytest.raises(HarnessError, match=r"row 1 has \d+ fields where the header has"):
        results.CsvWriter(p, files.APPEND)
    assert p.read_bytes() == before  # untouched


def test_a_full_disk_keeps_every_whole_row(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A write that fails half way (ENOSPC after some bytes) is cut back off: the file ends
    on its last whole row, and the error says how many rows were kept."""
    p = tmp_path / "s.csv"
    w = results.CsvWriter(p)
    w.write({"stage": "a", "status": "ok"})
    w.write({"stage": "b", "status": "ok"})
    real = os.write

    def full(fd: int, data: bytes) -> int:
        real(fd, bytes(data)[:7])  # some bytes land, as on a disk filling up
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write", full)
    with pytest.raises(HarnessError, match=r"No space left on device; the 2 row\(s\) this run "
                       "wrote there are kept, the file is whole"):
        w.write({"stage": "c", "status": "ok"})
    w.close()
    assert [r["stage"] for r in results.read_rows(p)] == ["a", "b"]
    assert p.read_bytes().endswith(b"\r\n")


def test_bad_status_and_unknown_columns_are_refused(tmp_path: Path) -> None:
    with results.CsvWriter(tmp_path / "s.csv") as w:
        with pytest.raises(ValueError):
            w.write({"stage": "a", "status": "great"})
        with pytest.raises(ValueError):
            w.write({"stage": "a", "status": "ok", "colour": "red"})


def test_committed_h200_csv_has_the_schema() -> None:
    """The newest committed sweep is written in today's schema, clock columns filled; older
    committed CSVs keep the schema they were written in (report and compare read both)."""
    p = Path(__file__).parents[2] / "statistics" / "h200" / "int_gemm.csv"
    with p.open(newline="") as f:
        header = next(csv.reader(f))
    assert tuple(header) == results.COLUMNS
    rows = results.read_rows(p)
    assert {r["backend"] for r in rows} == {"pycuda", "linear_fp32", "linear_bf16", "int_mm",
                                            "torch_compile"}
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok and all(r["verified"] == "yes" or r["verified"].startswith("sampled:")
                      for r in ok if r["backend"] == "pycuda")
    assert all(r["tops"] and r["pct_datasheet_tops"] for r in ok if r["backend"] == "pycuda")
    assert all(float(r["clock_mhz_median"]) > 0 for r in ok)
    assert all(r["reason"] for r in rows if r["status"] != "ok")  # a failure says why


def test_floats_are_written_to_six_figures_and_written_counts_rows(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    with results.CsvWriter(p) as w:
        assert w.written == 0
        w.write({"stage": "a", "status": "ok", "median_us": 10.0, "noise_pct": 1 / 3,
                 "samples": 20, "reason": None})
        w.write({"stage": "b", "status": "ok", "median_us": 123456789.0})
        assert w.written == 2
    a, b = results.read_rows(p)
    assert (a["median_us"], a["noise_pct"], a["samples"], a["reason"]) == ("10", "0.333333",
                                                                           "20", "")
    assert b["median_us"] == "1.23457e+08"


def test_a_reason_cut_to_its_limit_keeps_the_notes_on_its_time() -> None:
    """What a reason ends with about its time (not converged, throttled samples, samples
    timed without the gate, a cluster's later attempt) survives a cut; the text before
    them is what is cut, marked '...'."""
    from harness.contract.timing import Clocks
    from harness.engine.measure import NOT_CONVERGED

    throttle = Clocks(1900.0, 1500.0, 1980.0, throttled=3, throttled_min_mhz=990.0).note()
    gate = ("5 of 50 samples timed without the gate (the work synchronises inside its "
            "launch): host time can be inside")
    again = "measured on attempt 2: the worker that ran it before died"
    notes = f"; {NOT_CONVERGED}; {throttle}; {gate}; {results.drained_note(70.91)}; {again}"
    got = results.fit_reason("repeat 1 of 2: q: FAILED (abs error 1; 3/9 mismatches) "
                             + "x" * 600 + notes, 500)
    assert len(got) == 500 and got.endswith("x..." + notes)
    assert got.startswith("repeat 1 of 2: q: FAILED (abs error 1; 3/9 mismatches) x")
    assert results.fit_reason("short" + notes, 500) == "short" + notes
    assert results.fit_reason("y" * 600, 500) == "y" * 500  # no notes: the head, as before


def test_reading_a_file_cut_inside_a_quoted_cell_is_refused(tmp_path: Path) -> None:
    """A write cut short inside a quoted cell leaves a quote open at the end: read leniently,
    that cell would run to the end of the file and the row would pass as whole (every
    field there, the last one cut). Read strictly, it is one line naming the file."""
    p = tmp_path / "s.csv"
    p.write_text('stage,command\nd,"harness bench d --sweep batch=1,2"\n'
                 'd,"harness bench d --sweep bat')
    with pytest.raises(HarnessError, match=r"s.csv: not a readable CSV \(unexpected end of "
                                           r"data\)"):
        results.read_rows(p)
    p.write_text('stage,command\nd,"harness bench d --sweep batch=1,2"\n')
    assert results.read_rows(p) == [{"stage": "d",
                                     "command": "harness bench d --sweep batch=1,2"}]
