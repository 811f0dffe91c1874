"""Result CSVs read back for display: which files count, and the checks on their cells."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import readback
from tests.results import stage_csv

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


@pytest.mark.parametrize(("name", "drop"), [("dynamic_spikes.csv", "cuda"),
                                            ("dynamic_spikes.csv", "status"),
                                            ("spike_linear.csv", "kernel_hashes")])
def test_a_results_csv_lacking_a_column_is_said_not_passed_over(tmp_path: Path, name: str,
                                                                 drop: str) -> None:
    """A file with the rows' marks (stage, backend and the time) but a needed column gone is
    a damaged results file: named in one line, never left out of the report, the ledger's
    row check or the plots as if it were some other CSV; an empty CSV is named too."""
    with (H200 / name).open(newline="") as f:
        rows = list(csv.DictReader(f))
    keep = [c for c in rows[0] if c != drop]
    with (tmp_path / name).open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keep, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(HarnessError, match=re.escape(f"lacks {drop}: damaged, or not written "
                                                     "by the harness")):
        readback.stage_files(tmp_path) + readback.pipeline_files(tmp_path)
    (tmp_path / name).write_text("")
    with pytest.raises(HarnessError, match="is empty: no header, no rows"):
        readback.stage_files(tmp_path)


def _committed_with_second_row(tmp_path: Path, name: str, **cells: str) -> Path:
    """A copy of the committed ``statistics/h200/<name>`` with its first two rows, the
    second changed by ``cells``."""
    with (H200 / name).open(newline="") as f:
        rows = list(csv.DictReader(f))
    bad = tmp_path / name
    with bad.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows([rows[0], {**rows[1], **cells}])
    return bad


def test_a_bad_time_is_named_by_file_and_line(tmp_path: Path) -> None:
    bad = _committed_with_second_row(tmp_path, "dynamic_spikes.csv", median_us="nan")
    with pytest.raises(HarnessError, match=r"dynamic_spikes.csv, line 3: median_us is 'nan'"):
        readback.read_checked(bad)


@pytest.mark.parametrize(("column", "value", "text"), [
    ("batch", "abc", "batch is 'abc', not a positive whole number"),
    ("batch", "0", "batch is '0', not a positive whole number"),
    ("in_f", "1.5", "in_f is '1.5', not a positive whole number"),
    ("out_f", "-1", "out_f is '-1', not a positive whole number"),
    ("noise_pct", "abc", "noise_pct is 'abc', not a number"),
    ("noise_pct", "-1", "noise_pct is -1; it must be a non-negative number"),  # as compare
    ("gbps", "fast", "gbps is 'fast', not a finite number"),
])
def test_a_bad_size_or_number_is_named_by_file_line_and_column(
        tmp_path: Path, column: str, value: str, text: str) -> None:
    """The cells a plot's axis, a table's point or its noise and rates come from."""
    bad = stage_csv.write(tmp_path / "s.csv", [stage_csv.stage_row("d", 5.0),
                                               stage_csv.stage_row("d", 6.0, **{column: value})])
    with pytest.raises(HarnessError, match=re.escape(f"{bad}, line 3: {text}")):
        readback.read_checked(bad)


def test_a_pipeline_row_is_checked_as_compare_checks_it(tmp_path: Path) -> None:
    bad = _committed_with_second_row(tmp_path, "spike_linear.csv", total_noise_pct="-2")
    with pytest.raises(HarnessError, match="line 3: total_noise_pct is -2; it must be a "
                                           "non-negative number"):
        readback.read_checked(bad)


def test_a_pipeline_row_whose_intervals_are_no_json_object_is_one_line(tmp_path: Path) -> None:
    """A pipeline table lists each row's intervals from that JSON cell (report crashed on
    one that was not JSON)."""
    for cell in ("{not json", "[1, 2]"):
        bad = _committed_with_second_row(tmp_path, "spike_linear.csv", intervals=cell)
        with pytest.raises(HarnessError, match="line 3: intervals is not a JSON object"):
            readback.read_checked(bad)


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    assert readback.results_folder(tmp_path) == tmp_path
    with pytest.raises(HarnessError, match="no such folder"):
        readback.results_folder(tmp_path / "none")


def test_only_an_ok_row_s_time_must_be_positive(tmp_path: Path) -> None:
    """An ok row's time is a positive number (a sub-microsecond one too); its rates need
    only be finite (a zero rate is drawn as one)."""
    bad = stage_csv.write(tmp_path / "s.csv", [stage_csv.stage_row("d", 5.0),
                                               stage_csv.stage_row("d", 0.0)])
    with pytest.raises(HarnessError, match=re.escape(
            f"{bad}, line 3: median_us is '0.0', not a positive number")):
        readback.read_checked(bad)
    good = stage_csv.write(tmp_path / "g.csv", [stage_csv.stage_row("d", 0.5, gbps="0",
                                                                    speedup_vs_best_peer="0")])
    assert readback.read_checked(good)[0]["median_us"] == "0.5"


def test_an_older_stage_csv_and_the_stages_asked_for(tmp_path: Path) -> None:
    """A stage CSV written before the later columns (its header exactly the others) is a
    stage CSV; ``stages`` keeps those files' rows only."""
    from harness.results import rows as results

    old_columns = [c for c in results.COLUMNS if c not in readback.LATER_COLUMNS]
    with (tmp_path / "old.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=old_columns, extrasaction="ignore")
        w.writeheader()
        w.writerow(stage_csv.stage_row("d", 5.0, stage="old"))
    stage_csv.write(tmp_path / "new.csv", [stage_csv.stage_row("e", 6.0, stage="new")])
    assert [p.name for p in readback.stage_files(tmp_path)] == ["new.csv", "old.csv"]
    assert [r["stage"] for r in readback.read_stage_rows(tmp_path, ["old"])] == ["old"]
    assert [r["stage"] for r in readback.read_stage_rows(tmp_path)] == ["new", "old"]


def test_the_intervals_total_first() -> None:
    rows = [{"total_us": "9", "gemm_us": "4", "dynamic_spikes_us": ""},
            {"dynamic_spikes_us": "2"}]
    assert readback.intervals(rows) == ["total", "dynamic_spikes", "gemm"]


def test_a_row_s_own_intervals_by_name() -> None:
    """``name median`` by name, from the intervals JSON object; nothing where the column is
    empty, no JSON or no object, and an entry without a numeric median is left out."""
    row = {"intervals": '{"gemm": {"median_us": 2}, "activation": {"median_us": 1.5},'
                        ' "odd": 3, "text": {"median_us": "x"}}'}
    assert readback.own_intervals(row) == ["activation 1.5", "gemm 2.0"]
    for cell in ("", "{bad", "[1, 2]", "7"):
        assert readback.own_intervals({"intervals": cell}) == []
    assert readback.own_intervals({}) == []


def test_a_row_of_another_field_count_is_refused_not_skipped(tmp_path: Path) -> None:
    """csv's reader keeps a row with more fields than the header (its quote closed late)
    or fewer: such a row is damage, said with its line, as compare says it; a table or plot
    that left it out would show a folder with a point missing and say nothing."""
    lines = (H200 / "dynamic_spikes.csv").read_text().splitlines()
    longer, shorter = tmp_path / "a" / "dynamic_spikes.csv", tmp_path / "b" / "dynamic_spikes.csv"
    for p in (longer, shorter):
        p.parent.mkdir()
    longer.write_text("\n".join([lines[0], lines[1] + ",x,y", *lines[2:4]]) + "\n")
    cells = next(csv.reader([lines[2]]))[:-2]
    with shorter.open("w", newline="") as f:
        f.write(lines[0] + "\n" + lines[1] + "\n")
        csv.writer(f, lineterminator="\n").writerow(cells)
    n = len(next(csv.reader([lines[0]])))
    with pytest.raises(HarnessError, match=rf"line 2: {n + 2} fields where the header has {n}"):
        readback.read_checked(longer)
    with pytest.raises(HarnessError, match=rf"line 3: {n - 2} fields where the header has {n}"):
        readback.read_stage_rows(shorter.parent)


def test_a_folder_that_cannot_be_listed_is_said_not_read_as_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unreadable folder (no read permission) has no CSV a glob can see: read as empty,
    ``ledger --check --rows`` would find no older rows and pass."""
    shutil.copy(H200 / "dynamic_spikes.csv", tmp_path)
    assert readback.stage_files(tmp_path)

    def denied(path: object) -> list[str]:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(readback.os, "listdir", denied)
    for files in (readback.stage_files, readback.pipeline_files):
        with pytest.raises(HarnessError, match=r"cannot read the folder .*: Permission denied"):
            files(tmp_path)


def test_a_size_empty_in_one_row_where_the_others_have_it_is_refused(tmp_path: Path) -> None:
    """A plot's x axis is the batch where rows have one: a row without it would be a
    float('') deep in the plotting, or a point silently dropped."""
    p = _committed_with_second_row(tmp_path, "dynamic_spikes.csv", batch="")
    with pytest.raises(HarnessError, match=r"line 3: batch is empty where other rows have one"):
        readback.read_checked(p)


@pytest.mark.parametrize("kind", ["pipe", "folder"])
def test_a_csv_that_is_no_regular_file_is_one_line_not_a_hang(tmp_path: Path, kind: str
                                                               ) -> None:
    """A pipe named ``x.csv`` in a results folder would block its reader forever; it and a
    folder of that name are said in one line."""
    import os

    shutil.copy(H200 / "dynamic_spikes.csv", tmp_path)
    odd = tmp_path / "x.csv"
    os.mkfifo(odd) if kind == "pipe" else odd.mkdir()
    with pytest.raises(HarnessError, match=re.escape(f"{odd}: not a regular file")):
        readback.stage_files(tmp_path)


def test_a_negative_rate_is_refused_by_the_report(tmp_path: Path) -> None:
    bad = _committed_with_second_row(tmp_path, "dynamic_spikes.csv", gbps="-3")
    with pytest.raises(HarnessError, match="line 3: gbps is -3; it must be a finite number >= 0"):
        readback.read_checked(bad)
