"""`harness goals`: targets declared in TOML, each judged from the rows of a results folder
(the figure read from the row, a peer's from the same run), and malformed files refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.errors import BadInput
from harness.front.cli import app
from harness.results import goals
from tests.results import stage_csv

ROOT = Path(__file__).parents[2]


def _row(median: float, backend: str = "pycuda", **kw: str) -> dict[str, str]:
    return stage_csv.stage_row("v", median, backend=backend, **kw)


def _goals(tmp_path: Path, text: str) -> list[goals.Goal]:
    p = tmp_path / "goals.toml"
    p.write_text(text, encoding="utf-8")
    return goals.load(p)


def _one(tmp_path: Path, bound: str, peer: str = "", **point: int) -> goals.Goal:
    pt = ", ".join(f"{k} = {v}" for k, v in (point or {"batch": 8}).items())
    extra = f'peer = "{peer}"\n' if peer else ""
    (g,) = _goals(tmp_path, f'[[goal]]\nname = "g"\nfile = "s.csv"\nvariant = "v"\n{extra}'
                  f"{bound}\npoint = {{ {pt} }}\n")
    return g


def test_a_bound_on_the_rows_own_columns(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, tops="900", pct_peak="80")])
    tops = goals.judge(_one(tmp_path, "at_least_tops = 1000"), tmp_path)
    assert (tops.verdict, tops.figure, tops.time_us) == (goals.MISSED, 900.0, 10.0)
    floor = goals.judge(_one(tmp_path, "at_most_floor = 1.3"), tmp_path)
    assert floor.verdict == goals.MET and floor.figure == pytest.approx(1.25)
    assert goals.judge(_one(tmp_path, "at_least_pct_peak = 80"), tmp_path).verdict == goals.MET
    assert goals.judge(_one(tmp_path, "at_most_us = 9.5"), tmp_path).verdict == goals.MISSED


def test_the_peer_comes_from_the_same_run_and_point(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [
        _row(10.0, timestamp="2026-01-02"),
        _row(12.0, "torch", timestamp="2026-01-02"),
        _row(5.0, "torch", sha="other", timestamp="2026-01-03"),  # another run: never paired
        _row(30.0, "torch", batch="16", timestamp="2026-01-02"),  # another point
    ])
    j = goals.judge(_one(tmp_path, "at_least_speedup = 1.1", peer="torch"), tmp_path)
    assert (j.verdict, j.peer_us) == (goals.MET, 12.0)
    assert j.figure == pytest.approx(1.2)
    # No peer row in our row's run: no verdict, however fast another run's peer was.
    stage_csv.write(tmp_path / "s.csv", [_row(10.0), _row(5.0, "torch", sha="other")])
    j = goals.judge(_one(tmp_path, "at_least_speedup = 1.0", peer="torch"), tmp_path)
    assert j.verdict == goals.NO_ROW and "same run" in j.note


def test_the_newest_run_and_the_median_of_its_repeats(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [
        _row(1.0, sha="old", timestamp="2026-01-01"),
        _row(11.0, sha="new", timestamp="2026-01-02"),
        _row(13.0, sha="new", timestamp="2026-01-02"),
        _row(12.0, sha="new", timestamp="2026-01-03"),
    ])
    j = goals.judge(_one(tmp_path, "at_most_us = 20"), tmp_path)
    assert (j.time_us, j.git_sha) == (12.0, "new")
    assert "3 rows" in j.note


def test_a_failed_row_misses_and_says_why(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(1.0, status="failed", reason="off by one")])
    j = goals.judge(_one(tmp_path, "at_most_us = 20"), tmp_path)
    assert j.verdict == goals.MISSED and "off by one" in j.note


def test_a_point_matches_columns_and_params_by_value(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, params='{"k": 4.0}')])
    assert goals.judge(_one(tmp_path, "at_most_us = 5", batch=8, k=4), tmp_path).figure == 3.0
    for miss in ({"batch": 8, "k": 3}, {"batch": 9}, {"batch": 8, "planes": 6}):
        j = goals.judge(_one(tmp_path, "at_most_us = 5", **miss), tmp_path)
        assert j.verdict == goals.NO_ROW, miss


def test_the_launch_defaults_to_stream(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, launch="graph")])
    assert goals.judge(_one(tmp_path, "at_most_us = 5"), tmp_path).verdict == goals.NO_ROW


def test_within_the_noise_is_said(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, noise_pct="1.0", tops="995")])
    j = goals.judge(_one(tmp_path, "at_least_tops = 1000"), tmp_path)
    assert j.verdict == goals.MISSED and j.within_noise
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, noise_pct="0.1", tops="995")])
    assert not goals.judge(_one(tmp_path, "at_least_tops = 1000"), tmp_path).within_noise


def test_whether_the_row_is_of_the_current_source(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, kernel_hash="h1")])
    g = _one(tmp_path, "at_most_us = 5")
    assert goals.judge(g, tmp_path, {("s", "v"): "h1"}).current == "yes"
    assert goals.judge(g, tmp_path, {("s", "v"): "h2"}).current == "no"
    assert goals.judge(g, tmp_path).current == ""


@pytest.mark.parametrize(("text", "said"), [
    ('[[goal]]\nname = "g"\nfile = "s.csv"\n', "exactly one bound"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\nat_least_tops = 2\n',
     "exactly one bound"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_least_speedup = 1\n', "peer"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\npeer = "torch"\n', "peer"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 0\n', "positive"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = true\n', "positive"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\nbogus = 1\n', "unknown key"),
    ('[[goal]]\nname = "g"\nfile = "../s.csv"\nat_most_us = 1\n', "inside the results"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\npoint = 3\n', "point"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\n' * 2, "two goals named"),
    ('[[goal]]\nfile = "s.csv"\nat_most_us = 1\n', "name"),
    ('[[goal]]\nname = "g"\nfile = []\nat_most_us = 1\n', "file must be"),
    ('[[goal]]\nname = "g"\nfile = ["s.csv", 3]\nat_most_us = 1\n', "file must be"),
    ("[other]\n", "only [[goal]]"),
    ("", "no [[goal]]"),
    ("[[goal]\n", "not TOML"),
])
def test_a_malformed_goals_file_is_refused(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(BadInput, match=re.escape(said)):
        _goals(tmp_path, text)


def test_no_file_and_no_row_are_verdicts_not_errors(tmp_path: Path) -> None:
    g = _one(tmp_path, "at_most_us = 5")
    assert goals.judge(g, tmp_path).verdict == goals.NO_ROW  # no s.csv
    stage_csv.write(tmp_path / "s.csv", [_row(3.0, backend="torch")])
    assert goals.judge(g, tmp_path).verdict == goals.NO_ROW  # no pycuda row


def test_the_table_names_figure_bound_and_run(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [_row(10.0, timestamp="2026-01-02T00:00:00Z"),
                                         _row(12.0, "torch", timestamp="2026-01-02")])
    text = goals.table([goals.judge(_one(tmp_path, "at_least_speedup = 1.1", peer="torch"),
                                    tmp_path)])
    assert "| g | v batch=8 | 1.200x the peer's speed ±0.14 % | ≥ 1.1x torch's speed | met |" \
        " 10.00 vs 12.00 | aaa 2026-01-02 | - |" in text


def test_the_first_file_with_rows_of_the_point_is_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    stage_csv.write(tmp_path / "a" / "s.csv", [_row(3.0, batch="16")])  # not the point
    stage_csv.write(tmp_path / "s.csv", [_row(4.0)])
    (g,) = _goals(tmp_path, '[[goal]]\nname = "g"\nfile = ["b/s.csv", "a/s.csv", "s.csv"]\n'
                  'at_most_us = 5\npoint = { batch = 8 }\n')
    assert goals.judge(g, tmp_path).time_us == 4.0
    stage_csv.write(tmp_path / "a" / "s.csv", [_row(3.0)])
    assert goals.judge(g, tmp_path).time_us == 3.0
    (g,) = _goals(tmp_path, '[[goal]]\nname = "g"\nfile = ["b/s.csv"]\nat_most_us = 5\n')
    assert goals.judge(g, tmp_path).note == f"no b/s.csv in {tmp_path}"


def test_the_project_goals_file_loads() -> None:
    """The committed goals are well formed, and each names a file of statistics/h200."""
    declared = goals.load(ROOT / "statistics" / "goals.toml")
    assert declared
    h200 = ROOT / "statistics" / "h200"
    missing = [g.name for g in declared if not any((h200 / f).is_file() for f in g.files)]
    assert not missing, missing


def test_the_command_exits_2_on_bad_input(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["goals", str(tmp_path / "none")])
    assert r.exit_code == 2 and "no such results folder" in r.output
    bad = tmp_path / "g.toml"
    bad.write_text("[[goal]\n")
    r = CliRunner().invoke(app, ["goals", str(tmp_path), "--goals", str(bad)])
    assert r.exit_code == 2 and "not TOML" in r.output
