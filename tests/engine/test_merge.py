"""`harness merge`: one bench command's rows from several processes, combined per point."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.engine import merge
from harness.errors import BadInput
from harness.front.cli import app
from harness.results import resultcsv
from tests.results import stage_csv


def _procs(tmp_path: Path, times: list[list[float]], **kw: str) -> list[Path]:
    """One CSV a process, each with a row of variant ``a`` then one of ``b`` per list."""
    out = []
    for i, (a, b) in enumerate(times):
        out.append(stage_csv.write(tmp_path / f"p{i}.csv", [
            stage_csv.stage_row("a", a, cmd=f"harness bench s --out p{i}", **kw),
            stage_csv.stage_row("b", b, cmd=f"harness bench s --out p{i}", **kw)]))
    return out


def test_each_point_is_its_median_process_with_the_spread_as_noise(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0], [26.0, 52.0], [12.0, 51.0]])
    m = merge.run(paths, tmp_path / "merged.csv")
    assert (m.points, m.processes) == (2, (3, 3))
    rows = resultcsv.read(tmp_path / "merged.csv").rows
    a, b = rows
    assert (a["variant"], float(a["median_us"]), a["command"]) == ("a", 12.0,
                                                                   "harness bench s --out p2")
    assert float(b["median_us"]) == 51.0
    # the standard error of the median across the processes, over the median: far above
    # each process's own 0.1 %
    assert float(a["noise_pct"]) == pytest.approx(
        1.2533 * statistics.stdev([10, 26, 12]) / 3**0.5 / 12 * 100,
        rel=1e-4)
    assert float(b["noise_pct"]) < float(a["noise_pct"])
    assert a["reason"].startswith("median of 3 processes (10, 26, 12 µs; spread 133 %)")


def test_a_failed_process_makes_the_point_failed(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0], [11.0, 52.0]])
    stage_csv.write(paths[1], [
        stage_csv.stage_row("a", 11.0, status="failed", reason="out: 3 mismatches"),
        stage_csv.stage_row("b", 52.0)])
    merge.run(paths, tmp_path / "m.csv")
    a = resultcsv.read(tmp_path / "m.csv").rows[0]
    assert a["status"] == "failed" and a["reason"] == "process 2 of 2: out: 3 mismatches"


def test_files_that_are_not_one_commands_processes_are_bad_input(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0], [11.0, 52.0]])
    with pytest.raises(BadInput, match="at least two processes"):
        merge.run(paths[:1], tmp_path / "m.csv")
    other = stage_csv.write(tmp_path / "x.csv", [stage_csv.stage_row("a", 9.0, sha="bbb")])
    with pytest.raises(BadInput, match="measured at 2 sources"):
        merge.run([paths[0], other], tmp_path / "m.csv")
    twice = stage_csv.write(tmp_path / "t.csv", [stage_csv.stage_row("a", 9.0),
                                                stage_csv.stage_row("a", 9.5)])
    with pytest.raises(BadInput, match="two rows of one point"):
        merge.run([paths[0], twice], tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()


def test_the_command_is_one_line_and_never_overwrites_unasked(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0], [11.0, 52.0], [12.0, 53.0]])
    out = tmp_path / "m.csv"
    args = ["merge", *map(str, paths), "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "merged 2 point(s) from 3 CSVs" in res.output and "3-3 processes a point" in res.output
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "exists" in res.output
    assert CliRunner().invoke(app, [*args, "--overwrite"]).exit_code == 0
    res = CliRunner().invoke(app, ["merge", str(paths[0]), "--out", str(out)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1


def test_a_file_twice_or_sharing_no_point_is_not_one_commands_processes(
        tmp_path: Path) -> None:
    """The same file given twice would count one process as two; a file with none of the
    others' points is another command's (its rows would be mixed into one CSV)."""
    paths = _procs(tmp_path, [[10.0, 50.0], [12.0, 51.0]])
    with pytest.raises(BadInput, match="given twice"):
        merge.combine_runs([paths[0], paths[1], tmp_path / "." / paths[0].name])
    other = stage_csv.write(tmp_path / "other.csv", [
        stage_csv.stage_row("c", 5.0, cmd="harness bench t --out q")])
    with pytest.raises(BadInput, match=r"other\.csv shares no point with the files before it"):
        merge.combine_runs([paths[0], other])


def test_files_with_more_columns_merge_under_every_column(tmp_path: Path) -> None:
    """A cluster CSV has worker columns a plain one lacks: the merged file has the union, so
    no row is refused half-way (an --overwrite would have cut the old file first)."""
    import csv

    paths = _procs(tmp_path, [[10.0, 50.0], [12.0, 51.0]])
    wide = tmp_path / "w.csv"
    with wide.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*stage_csv.COLUMNS, "host", "worker"])
        w.writeheader()
        w.writerows([{**stage_csv.stage_row("a", 11.0), "host": "h1", "worker": "0"},
                     {**stage_csv.stage_row("b", 52.0), "host": "h1", "worker": "0"}])
    old = stage_csv.write(tmp_path / "m.csv", [stage_csv.stage_row("z", 1.0)])
    merged = merge.run([*paths, wide], old, overwrite=True)
    rows = resultcsv.read(old).rows
    assert merged.points == 2 and [r["variant"] for r in rows] == ["a", "b"]
    assert list(rows[0])[-2:] == ["host", "worker"]
    assert rows[0]["median_us"] == "11.0" and rows[0]["host"] == "h1"  # the median process's


def test_one_point_on_two_gpu_models_is_not_one_commands_processes(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0], [12.0, 51.0]], gpu="NVIDIA H200")
    other = stage_csv.write(tmp_path / "h100.csv", [
        stage_csv.stage_row("a", 11.0, gpu="NVIDIA H100 80GB HBM3"),
        stage_csv.stage_row("b", 52.0, gpu="NVIDIA H100 80GB HBM3")])
    with pytest.raises(BadInput, match="measured on 'NVIDIA H100 80GB HBM3' and 'NVIDIA H200'"):
        merge.combine_runs([*paths, other])


def test_the_merge_is_never_written_over_one_of_its_inputs(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0], [12.0, 51.0]])
    before = paths[0].read_text()
    with pytest.raises(BadInput, match=r"--out .*p0\.csv is one of the CSVs merged"):
        merge.run(paths, tmp_path / "." / "p0.csv", overwrite=True)
    assert paths[0].read_text() == before


def test_one_point_of_two_commands_is_not_one_commands_processes(tmp_path: Path) -> None:
    """Two commands that differ in more than their --out (a budget, a flag) measured the
    point differently: not merged."""
    paths = _procs(tmp_path, [[10.0, 50.0], [12.0, 51.0]])
    other = stage_csv.write(tmp_path / "b.csv", [
        stage_csv.stage_row("a", 11.0, cmd="harness bench s --budget 9 --out=p9"),
        stage_csv.stage_row("b", 52.0, cmd="harness bench s --budget 9 --out=p9")])
    with pytest.raises(BadInput, match=r"measured by 2 commands \('harness bench s', "
                                       r"'harness bench s --budget 9'\)"):
        merge.combine_runs([*paths, other])


def test_an_existing_out_is_refused_unless_overwrite_is_asked(tmp_path: Path) -> None:
    from harness.errors import HarnessError

    paths = _procs(tmp_path, [[10.0, 50.0], [12.0, 51.0]])
    old = stage_csv.write(tmp_path / "m.csv", [stage_csv.stage_row("z", 1.0)])
    before = old.read_text()
    # merge has no --append: the line offers what it has
    with pytest.raises(HarnessError, match=r"m\.csv exists: --overwrite replaces it, or --out "
                                           r"names another file$"):
        merge.run(paths, old)
    assert old.read_text() == before


def test_processes_of_one_row_each_merge(tmp_path: Path) -> None:
    """A command of one point: each file holds a single row."""
    paths = [stage_csv.write(tmp_path / f"p{i}.csv", [
        stage_csv.stage_row("a", t, cmd=f"harness bench s --out p{i}")])
        for i, t in enumerate((10.0, 12.0, 11.0))]
    rows, columns, counts = merge.combine_runs(paths)
    assert counts == (3,) and float(rows[0]["median_us"]) == 11.0
    assert columns == tuple(stage_csv.COLUMNS)


def test_stage_and_pipeline_csvs_are_not_merged(tmp_path: Path) -> None:
    paths = _procs(tmp_path, [[10.0, 50.0]])
    pipeline = Path(__file__).parents[2] / "statistics" / "h200" / "activation_path.csv"
    with pytest.raises(BadInput, match="the CSVs mix stage and pipeline rows"):
        merge.combine_runs([paths[0], pipeline])


def test_a_refusal_names_the_point_by_its_key_columns(tmp_path: Path) -> None:
    """The point is named by its key columns that have a value, in the key's order."""
    paths = _procs(tmp_path, [[10.0, 50.0]])
    twice = stage_csv.write(tmp_path / "t.csv", [stage_csv.stage_row("a", 9.0, out_f=""),
                                                stage_csv.stage_row("a", 9.5, out_f="")])
    with pytest.raises(BadInput, match=r"two rows of one point \(stage=s backend=pycuda "
                                       r"variant=a batch=8 in_f=64 family=normal params=\{\} "
                                       r"l2=cold launch=stream\)"):
        merge.combine_runs([paths[0], twice])


def test_a_failed_process_keeps_the_notes_on_its_time(tmp_path: Path) -> None:
    """A failed row keeps its time and, after the failure, the notes on it (here: host time
    can be inside); merged, 'process i of n: ' goes before it and the notes stay whole."""
    from harness.engine.measure import REASON_CHARS

    gate = ("20 of 20 samples timed without the gate (the work synchronises inside its "
            "launch): host time can be inside")
    failure = "q8: FAILED (abs error 1) " + "[871, 1235] kernel=3 ref=2, " * 30
    why = failure[:REASON_CHARS - len(gate) - 5] + "...; " + gate  # a CSV's failed row
    assert len(why) == REASON_CHARS
    paths = _procs(tmp_path, [[10.0, 50.0], [11.0, 52.0]])
    stage_csv.write(paths[1], [
        stage_csv.stage_row("a", 64.0, status="failed", reason=why,
                            cmd="harness bench s --out p1"),
        stage_csv.stage_row("b", 52.0, cmd="harness bench s --out p1")])
    merge.run(paths, tmp_path / "m.csv")
    a = resultcsv.read(tmp_path / "m.csv").rows[0]
    assert a["status"] == "failed" and float(a["median_us"]) == 64.0
    assert a["reason"].startswith("process 2 of 2: q8: FAILED")
    assert a["reason"].endswith("; " + gate) and len(a["reason"]) <= REASON_CHARS


def test_a_looping_link_among_the_files_is_one_line(tmp_path: Path) -> None:
    """A CSV given as a link to itself is said in one line (it was a traceback)."""
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    other = tmp_path / "p1.csv"
    other.write_text("stage\n")
    with pytest.raises(BadInput, match=r"harness merge: cannot follow .*loop\.csv"):
        merge.run([loop, other], tmp_path / "out.csv")
    with pytest.raises(BadInput, match=r"harness merge: cannot follow .*loop\.csv"):
        merge.combine_runs([other, loop])
