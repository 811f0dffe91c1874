"""Goals judged from rows: the figure read from the newest run's row of the point (for a goal
against a peer, the newest run that timed it), a peer's from the same run, process and
point, and no verdict where the goal does not name one point."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.front.cli import app
from harness.results import goal_verdicts as gv
from harness.results import goals
from tests.results import stage_csv

ROOT = Path(__file__).parents[2]


def _row(median: float, backend: str = "pycuda", variant: str = "v", **kw: str
         ) -> dict[str, str]:
    return stage_csv.stage_row(variant, median, backend=backend, **kw)


def _goal(tmp_path: Path, bound: str, peer: str = "", file: str = '"s.csv"', extra: str = "",
          **point: object) -> goals.Goal:
    pt = ", ".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}"
                   for k, v in (point or {"batch": 8}).items()).replace("'", '"')
    peer_line = f'peer = "{peer}"\n' if peer else ""
    p = tmp_path / "goals.toml"
    p.write_text(f'[[goal]]\nname = "g"\nfile = {file}\n{peer_line}{extra}{bound}\n'
                 f"point = {{ {pt} }}\n", encoding="utf-8")
    (g,) = goals.load(p)
    return g


def test_a_bound_on_the_rows_own_columns(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, tops="900", flops="9e9", pct_peak="80",
                                              bytes="8e6", peak_gbps="1000")])
    tops = gv.judge(_goal(tmp_path, "at_least_tops = 1000"), tmp_path)
    assert (tops.verdict, tops.figure, tops.time_us) == (gv.MISSED, 900.0, 10.0)
    floor = gv.judge(_goal(tmp_path, "at_most_floor = 1.3"), tmp_path)
    assert floor.verdict == gv.MET and floor.figure == pytest.approx(1.25)
    assert gv.judge(_goal(tmp_path, "at_least_pct_peak = 80"), tmp_path).verdict == gv.MET
    assert gv.judge(_goal(tmp_path, "at_most_us = 9.5"), tmp_path).verdict == gv.MISSED


@pytest.mark.parametrize("cell", ["0", ""])
def test_a_rate_that_is_no_number_above_zero_gives_no_verdict(tmp_path: Path, cell: str
                                                              ) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, tops=cell, pct_peak=cell)])
    for bound in ("at_least_tops = 1", "at_most_floor = 2"):
        j = gv.judge(_goal(tmp_path, bound), tmp_path)
        assert j.verdict == gv.NO_ROW and "not a number above zero" in j.note


@pytest.mark.parametrize("cell", ["n/a", "-20", "inf"])
def test_a_rate_that_is_no_number_is_a_damaged_file(tmp_path: Path, cell: str) -> None:
    """Every reader of the rows refuses a rate that is not a finite number >= 0, in one
    line naming the file and line: damage, not a row without a figure."""
    from harness.errors import HarnessError

    stage_csv.write(tmp_path / "s.csv", [_row(10.0, tops=cell, pct_peak=cell)])
    with pytest.raises(HarnessError, match=r"s\.csv, line 2: (tops|pct_peak) is"):
        gv.judge(_goal(tmp_path, "at_least_tops = 1"), tmp_path)


def test_the_peer_comes_from_the_same_run_process_and_point(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [
        _row(10.0, timestamp="2026-01-02"),
        _row(12.0, "torch", timestamp="2026-01-02"),
        _row(5.0, "torch", sha="other", timestamp="2026-01-03"),  # another run
        _row(6.0, "torch", batch="16", timestamp="2026-01-02"),  # another point
    ])
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 1.1", peer="torch"), tmp_path)
    assert (j.verdict, j.peer_us) == (gv.MET, 12.0)
    assert j.figure == pytest.approx(1.2)
    stage_csv.write(tmp_path / "s.csv", [_row(10.0), _row(5.0, "torch", sha="other")])
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 1.0", peer="torch"), tmp_path)
    assert j.verdict == gv.NO_ROW and "same run" in j.note


def test_a_newer_run_without_the_peer_leaves_the_goal_to_the_newest_run_with_it(
        tmp_path: Path) -> None:
    """A newer run that timed the point beside other peers (or none) cannot judge a goal
    against this one: the newest run that timed both is read, and the note says a newer
    run was passed over; without any such run there is no verdict. A goal on the row's own
    columns still reads the newest run."""
    rows = [_row(10.0, sha="old", timestamp="2026-01-01"),
            _row(12.0, "torch", sha="old", timestamp="2026-01-01"),
            _row(8.0, sha="new", timestamp="2026-01-03"),
            _row(9.0, "cupy", sha="new", timestamp="2026-01-03")]
    stage_csv.write(tmp_path / "s.csv", rows)
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 1.1", peer="torch"), tmp_path)
    assert (j.verdict, j.time_us, j.peer_us, j.git_sha) == (gv.MET, 10.0, 12.0, "old")
    assert "a newer run timed the point without torch" in j.note
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 1.1", peer="cupy"), tmp_path)
    assert (j.time_us, j.git_sha, j.note) == (8.0, "new", "")
    assert gv.judge(_goal(tmp_path, "at_most_us = 9"), tmp_path).time_us == 8.0
    stage_csv.write(tmp_path / "s.csv", rows[2:])
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 1.0", peer="torch"), tmp_path)
    assert j.verdict == gv.NO_ROW and "no torch row timed in the same run" in j.note


def test_a_run_appended_again_is_read_at_its_last_measurement(tmp_path: Path) -> None:
    """One command appended twice at one commit: ours and the peer each from the last pass,
    never the first pass's peer beside the last pass's row (nor a median of the passes)."""
    stage_csv.write(tmp_path / "s.csv", [
        _row(1.0, sha="old", timestamp="2026-01-01"),
        _row(10.0, timestamp="2026-01-02T01"), _row(13.0, "torch", timestamp="2026-01-02T01"),
        _row(12.0, timestamp="2026-01-02T02"), _row(11.0, "torch", timestamp="2026-01-02T02"),
    ])
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 0.5", peer="torch"), tmp_path)
    assert (j.time_us, j.peer_us, j.git_sha) == (12.0, 11.0, "aaa")
    assert "the last of the 2 times" in j.note
    stage_csv.write(tmp_path / "s.csv", [_row(10.0), _row(11.0, "torch"), _row(12.0)])
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 0.5", peer="torch"), tmp_path)
    assert j.verdict == gv.NO_ROW and "not paired" in j.note


def test_workers_of_a_cluster_are_separate_runs(tmp_path: Path) -> None:
    rows = [{**_row(10.0, timestamp="2026-01-02"), "worker": "w1"},
            {**_row(20.0, "torch", timestamp="2026-01-02"), "worker": "w1"},
            {**_row(11.0, timestamp="2026-01-03"), "worker": "w2"},
            {**_row(12.0, "torch", timestamp="2026-01-03"), "worker": "w2"}]
    with (tmp_path / "s.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*stage_csv.COLUMNS, "worker"])
        w.writeheader()
        w.writerows(rows)
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 0.5", peer="torch"), tmp_path)
    assert (j.time_us, j.peer_us) == (11.0, 12.0) and not j.note


def test_rows_of_several_points_give_no_verdict(tmp_path: Path) -> None:
    rows = [_row(10.0), _row(20.0, variant="w"), _row(30.0, variant="x")]
    stage_csv.write(tmp_path / "s.csv", rows)
    p = tmp_path / "goals.toml"
    p.write_text('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 50\n'
                 "point = { batch = 8 }\n")
    (g,) = goals.load(p)  # no variant named
    j = gv.judge(g, tmp_path)
    assert j.verdict == gv.NO_ROW and "3 points, differing in variant" in j.note


def test_a_failed_last_measurement_misses_and_says_why(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(1.0),
                                         _row(1.0, status="failed", reason="off by one")])
    j = gv.judge(_goal(tmp_path, "at_most_us = 20"), tmp_path)
    assert j.verdict == gv.MISSED and "off by one" in j.note


def test_a_point_matches_columns_and_params_by_value(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, params='{"k": 4.0}')])
    assert gv.judge(_goal(tmp_path, "at_most_us = 5", batch=8, k=4), tmp_path).figure == 3.0
    for miss in ({"batch": 8, "k": 3}, {"batch": 9}):
        assert gv.judge(_goal(tmp_path, "at_most_us = 5", **miss), tmp_path).verdict \
            == gv.NO_ROW, miss
    j = gv.judge(_goal(tmp_path, "at_most_us = 5", bacth=8), tmp_path)
    assert j.verdict == gv.NO_ROW and "point key(s) bacth" in j.note


def test_the_launch_is_stream_unless_named(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, launch="graph")])
    assert gv.judge(_goal(tmp_path, "at_most_us = 5"), tmp_path).verdict == gv.NO_ROW
    g = _goal(tmp_path, "at_most_us = 5", extra='launch = "graph"\n')
    assert gv.judge(g, tmp_path).figure == 3.0


def test_the_l2_is_cold_unless_the_point_names_it(tmp_path: Path) -> None:
    """A drained (or hot) row is a point of its own: a goal reads the cold rows unless its
    point names the l2, so a drained run appended after a cold one does not replace it."""
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, git_sha="a" * 40),
                                         _row(4.0, l2="drained", git_sha="b" * 40)])
    assert gv.judge(_goal(tmp_path, "at_most_us = 5", batch=8), tmp_path).figure == 3.0
    g = _goal(tmp_path, "at_most_us = 5", batch=8, l2="drained")
    assert gv.judge(g, tmp_path).figure == 4.0
    stage_csv.write(tmp_path / "s.csv", [_row(4.0, l2="drained")])
    j = gv.judge(_goal(tmp_path, "at_most_us = 5"), tmp_path)
    assert j.verdict == gv.NO_ROW and "only drained or hot ones: name l2" in j.note


def _pipeline(path: Path, rows: list[dict[str, str]]) -> None:
    cols = ["stage", "backend", "variant", "batch", "in_f", "out_f", "family", "params", "l2",
            "mode", "status", "verified", "total_us", "total_noise_pct", "git_sha", "command",
            "timestamp"]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows({c: r.get(c, "") for c in cols} for r in rows)


def test_a_pipeline_csv_has_no_launch_but_a_mode(tmp_path: Path) -> None:
    base = {"stage": "p", "variant": "v", "batch": "8", "family": "normal", "params": "{}",
            "l2": "cold", "status": "ok", "verified": "yes", "total_noise_pct": "0.1",
            "git_sha": "a", "command": "harness bench p"}
    _pipeline(tmp_path / "s.csv", [
        {**base, "backend": "pycuda", "mode": "uni", "total_us": "10"},
        {**base, "backend": "pycuda", "mode": "bi", "total_us": "15"},
        {**base, "backend": "torch", "mode": "uni", "total_us": "30"},
        {**base, "backend": "torch", "mode": "bi", "total_us": "20"},
    ])
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 2", peer="torch", batch=8, mode="uni"),
                 tmp_path)
    assert (j.verdict, j.figure) == (gv.MET, 3.0)
    j = gv.judge(_goal(tmp_path, "at_least_speedup = 2", peer="torch"), tmp_path)
    assert j.verdict == gv.NO_ROW and "differing in mode" in j.note
    j = gv.judge(_goal(tmp_path, "at_most_us = 20", extra='launch = "graph"\n', mode="uni"),
                 tmp_path)
    assert j.verdict == gv.NO_ROW and "no launch" in j.note


def test_a_failed_peer_row_gives_no_verdict(tmp_path: Path) -> None:
    """No speedup is taken against a wrong answer: a peer row that failed leaves the goal
    without a verdict, whichever side of the bound the times fall, its figure still shown."""
    for ours, verdict in ((10.0, gv.MET), (40.0, gv.MISSED)):
        stage_csv.write(tmp_path / "s.csv", [_row(ours), _row(30.0, "torch")])
        g = _goal(tmp_path, "at_least_speedup = 1", peer="torch")
        assert gv.judge(g, tmp_path).verdict == verdict
        stage_csv.write(tmp_path / "s.csv", [
            _row(ours), _row(30.0, "torch", status="failed", verified="no",
                             reason="out: 3 of 512 elements off")])
        j = gv.judge(g, tmp_path)
        assert j.verdict == gv.NO_VERDICT and j.figure == pytest.approx(30.0 / ours)
        assert "the peer's row is failed, and no speedup is taken against a failed row" \
            in j.note
        assert "no verdict: the peer's row is failed" in gv.table([j])


@pytest.mark.parametrize("verified", ["", "no", "not judged"])
def test_our_row_with_unchecked_outputs_gives_no_verdict(tmp_path: Path, verified: str
                                                          ) -> None:
    """A time whose outputs were not checked (``--no-verify``) judges no goal; a sampled
    check does."""
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, verified=verified)])
    j = gv.judge(_goal(tmp_path, "at_most_us = 5"), tmp_path)
    assert j.verdict == gv.NO_VERDICT and "its outputs were not checked" in j.note
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, verified="sampled:64/8192")])
    assert gv.judge(_goal(tmp_path, "at_most_us = 5"), tmp_path).verdict == gv.MET


def test_a_rate_its_own_row_does_not_give_is_no_verdict(tmp_path: Path) -> None:
    """A ``tops`` or ``pct_peak`` cell is checked against the row's flops or bytes, time and
    peak: 1001 TOPS on a row whose flops over its time are 967.9 judges nothing; the cells
    as the harness writes them (6 significant digits) pass."""
    row = {"flops": "1112396529664", "bytes": "720242688", "peak_gbps": "3055.92"}
    stage_csv.write(tmp_path / "s.csv", [_row(1144.54, tops="971.912", pct_peak="20.5922",
                                              **row)])
    assert gv.judge(_goal(tmp_path, "at_least_tops = 900"), tmp_path).verdict == gv.MET
    assert gv.judge(_goal(tmp_path, "at_least_pct_peak = 20"), tmp_path).verdict == gv.MET
    stage_csv.write(tmp_path / "s.csv", [_row(1144.54, tops="1001", pct_peak="25", **row)])
    j = gv.judge(_goal(tmp_path, "at_least_tops = 1000"), tmp_path)
    assert j.verdict == gv.NO_VERDICT
    assert j.note == "its tops (1001) is not what its flops and time give (971.916)"
    j = gv.judge(_goal(tmp_path, "at_most_floor = 5"), tmp_path)
    assert j.verdict == gv.NO_VERDICT and "its pct_peak (25) is not what its bytes" in j.note
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, tops="900")])  # no flops
    j = gv.judge(_goal(tmp_path, "at_least_tops = 800"), tmp_path)
    assert (j.verdict, j.note) == (gv.NO_VERDICT, "its tops cannot be checked: no flops")


def test_the_first_file_with_rows_of_the_point_is_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    stage_csv.write(tmp_path / "a" / "s.csv", [_row(3.0, batch="16")])  # not the point
    stage_csv.write(tmp_path / "s.csv", [_row(4.0)])
    files = '["b/s.csv", "a/s.csv", "s.csv"]'
    assert gv.judge(_goal(tmp_path, "at_most_us = 5", file=files), tmp_path).time_us == 4.0
    stage_csv.write(tmp_path / "a" / "s.csv", [_row(3.0)])
    assert gv.judge(_goal(tmp_path, "at_most_us = 5", file=files), tmp_path).time_us == 3.0
    j = gv.judge(_goal(tmp_path, "at_most_us = 5", file='["b/s.csv"]'), tmp_path)
    assert j.note == f"no b/s.csv in {tmp_path}"


def test_within_the_noise_is_said(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, noise_pct="1.0", tops="995",
                                              flops="9.95e9")])
    j = gv.judge(_goal(tmp_path, "at_least_tops = 1000"), tmp_path)
    assert j.verdict == gv.MISSED and j.within_noise
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, noise_pct="0.1", tops="995",
                                              flops="9.95e9")])
    assert not gv.judge(_goal(tmp_path, "at_least_tops = 1000"), tmp_path).within_noise


def test_whether_the_row_is_of_the_current_source(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, kernel_hash="h1")])
    g = _goal(tmp_path, "at_most_us = 5")
    assert gv.judge(g, tmp_path, {("s", "v"): "h1"}).current == "yes"
    assert gv.judge(g, tmp_path, {("s", "v"): "h2"}).current == "no"
    assert gv.judge(g, tmp_path).current == ""


def test_no_file_and_no_row_are_verdicts_not_errors(tmp_path: Path) -> None:
    g = _goal(tmp_path, "at_most_us = 5")
    assert gv.judge(g, tmp_path).verdict == gv.NO_ROW  # no s.csv
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, backend="torch")])
    assert gv.judge(g, tmp_path).verdict == gv.NO_ROW  # no pycuda row


def test_the_table_names_figure_bound_and_run(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, timestamp="2026-01-02T00:00:00Z"),
                                         _row(12.0, "torch", timestamp="2026-01-02")])
    text = gv.table([gv.judge(_goal(tmp_path, "at_least_speedup = 1.1", peer="torch",
                                    extra='variant = "v"\n'), tmp_path)])
    assert "| g | v batch=8 | 1.200x the peer's speed ±0.14 % | ≥ 1.1x torch's speed | met |" \
        " 10.00 vs 12.00 | aaa 2026-01-02 | - |" in text


def test_each_committed_goal_finds_its_row_on_the_h100() -> None:
    """Every goal reads a row in the H100's folder (whether at the current source is the
    table's column, not asserted here: a kernel validated but not yet timed again is a
    state between two GPU calls), and where it gets no verdict that is for a peer's failed
    row alone; on the H200's, a goal without one lacks the rows only (never a malformed
    point)."""
    declared = goals.load(ROOT / "statistics" / "goals.toml")
    h100 = gv.judge_all(declared, ROOT / "statistics" / "h100-80gb-hbm3" / "layer-sweep")
    assert not [(j.goal.name, j.note) for j in h100 if j.verdict == gv.NO_ROW]
    assert all("the peer's row is failed" in j.note for j in h100 if j.verdict == gv.NO_VERDICT)
    h200 = gv.judge_all(declared, ROOT / "statistics" / "h200")
    assert all("no pycuda row at this point" in j.note
               for j in h200 if j.verdict == gv.NO_ROW)


def test_the_command_exits_2_on_bad_input(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["goals", str(tmp_path / "none")])
    assert r.exit_code == 2 and "no such results folder" in r.output
    (tmp_path / "f").write_text("x")
    r = CliRunner().invoke(app, ["goals", str(tmp_path / "f")])
    assert r.exit_code == 2 and "is a file, not a results folder" in r.output
    bad = tmp_path / "g.toml"
    bad.write_text("[[goal]\n")
    r = CliRunner().invoke(app, ["goals", str(tmp_path), "--goals", str(bad)])
    assert r.exit_code == 2 and "not TOML" in r.output


def test_a_goal_of_several_variants_is_judged_on_the_first_with_rows(tmp_path: Path) -> None:
    """The first variant with rows at the point is judged, whatever the others' rows; a
    later one stands in only where the first has none, and the point and the note name it;
    with none of them there is no verdict."""
    older = [_row(20.0, variant="old", timestamp="2026-01-05"),
             _row(30.0, "torch", variant="old", timestamp="2026-01-05")]
    stage_csv.write(tmp_path / "s.csv", older)
    g = _goal(tmp_path, "at_least_speedup = 1.0", peer="torch",
              extra='variant = ["new", "old"]\n')
    assert (g.variant, g.fallbacks) == ("new", ("old",))
    j = gv.judge(g, tmp_path)
    assert (j.verdict, j.figure) == (gv.MET, pytest.approx(1.5))
    assert j.goal.where().startswith("old ") and j.note == "old stands in: no new row here"
    newer = [_row(40.0, variant="new", timestamp="2026-01-01"),
             _row(30.0, "torch", variant="new", timestamp="2026-01-01")]
    stage_csv.write(tmp_path / "s.csv", older + newer)  # the first variant's rows, older
    j = gv.judge(g, tmp_path)
    assert (j.verdict, j.figure, j.note) == (gv.MISSED, pytest.approx(0.75), "")
    assert j.goal.where().startswith("new ")
    stage_csv.write(tmp_path / "s.csv", [_row(1.0, variant="other")])
    assert gv.judge(g, tmp_path).verdict == gv.NO_ROW


@pytest.mark.parametrize("value", ["[]", '["a", "a"]', '["a", 3]', '["a", " "]', "3"])
def test_a_variant_list_must_be_distinct_names(tmp_path: Path, value: str) -> None:
    with pytest.raises(goals.BadInput, match="variant must be a string, or a list"):
        _goal(tmp_path, "at_least_tops = 1", extra=f"variant = {value}\n")


def test_a_stand_in_variant_across_files_and_its_peer_s_newest_run(tmp_path: Path) -> None:
    """Variants come first, files second: the first variant is looked for in every file
    before a later one stands in. A stand-in's peer is read as the goal's own would be:
    from the newest run that timed the peer beside it, a newer run without it passed over."""
    stage_csv.write(tmp_path / "a.csv", [_row(10.0, variant="old"),
                                         _row(20.0, "torch", variant="old")])
    stage_csv.write(tmp_path / "b.csv", [_row(40.0, variant="new"),
                                         _row(20.0, "torch", variant="new")])
    g = _goal(tmp_path, "at_least_speedup = 1.0", peer="torch", file='["a.csv", "b.csv"]',
              extra='variant = ["new", "old"]\n')
    j = gv.judge(g, tmp_path)  # new's rows are in the second file: new is judged
    assert (j.goal.variant, j.figure, j.note) == ("new", pytest.approx(0.5), "")
    stage_csv.write(tmp_path / "b.csv", [_row(1.0, variant="other")])
    stage_csv.write(tmp_path / "a.csv", [
        _row(10.0, variant="old", sha="r1", timestamp="2026-01-01"),
        _row(20.0, "torch", variant="old", sha="r1", timestamp="2026-01-01"),
        _row(5.0, variant="old", sha="r2", timestamp="2026-01-02")])  # newer, no peer
    j = gv.judge(g, tmp_path)
    assert (j.goal.variant, j.figure) == ("old", pytest.approx(2.0))
    assert "old stands in" in j.note and "without torch" in j.note
