"""`harness best`: the fastest build of each point one command measured, set against the
others by compare's rule, with the first-measured build named where order could matter."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.errors import HarnessError
from harness.front.cli import app
from harness.results import best
from tests.results import stage_csv

H200 = Path(__file__).parents[2] / "statistics" / "h200"


def _row(variant: str, median: float, noise: float = 0.1, sha: str = "aaa",
         cmd: str = "harness bench s --define X=1,2", **kw: str) -> dict[str, str]:
    return stage_csv.stage_row(variant, median, sha, cmd, noise_pct=repr(noise), **kw)


_write = stage_csv.write


def test_the_fastest_build_and_which_others_are_clearly_slower(tmp_path: Path) -> None:
    f = _write(tmp_path / "s.csv", [
        _row("d[X=1]", 130.0), _row("d[X=2]", 100.0), _row("d[X=3]", 100.4),
        _row("torch_row", 50.0, backend="torch"),  # a peer is not a build
        _row("d[X=4]", 90.0, status="failed"),  # nor is a failed row
    ])
    (p,) = best.run(f)
    assert [b.variant for b in p.builds] == ["d[X=2]", "d[X=3]", "d[X=1]"]
    assert [b.verdict for b in p.builds] == ["best", "same", "slower"]
    assert p.builds[2].change_pct == pytest.approx(30.0)
    assert not p.clear and p.first == "d[X=1]" and p.repeats == 1
    assert p.summary() == ("d[X=2] is the fastest, but not clearly ahead of d[X=3] (measured "
                           "once, d[X=1] first: an order effect is not ruled out)")


def test_runs_and_commands_are_never_set_against_each_other(tmp_path: Path) -> None:
    f = _write(tmp_path / "s.csv", [
        _row("d[X=1]", 100.0), _row("d[X=2]", 130.0),  # X=1 first and fastest: no caveat
        _row("d[X=1]", 500.0, sha="bbb"), _row("d[X=2]", 400.0, sha="bbb",
                                              reason="median of 3 repeats (...)"),
        _row("d[X=2]", 1.0, cmd="harness bench s --define X=2"),  # one build: no point
    ])
    got = best.run(f)
    assert [(p.git_sha, p.builds[0].variant, p.clear) for p in got] == [
        ("aaa", "d[X=1]", True), ("bbb", "d[X=2]", True)]
    assert got[0].summary() == "d[X=1] is the fastest, clearly"
    assert got[1].repeats == 1  # the least of its builds' repeats
    assert "order effect" in got[1].summary()


def test_one_command_run_twice_or_on_two_workers_is_two_runs(tmp_path: Path) -> None:
    """Appended twice at one commit, a build is never ranked against its own twin; on a
    cluster, builds measured by different workers (processes) are not ranked at all."""
    import csv

    f = _write(tmp_path / "s.csv", [_row("d[X=1]", 100.0), _row("d[X=2]", 130.0),
                                    _row("d[X=1]", 120.0), _row("d[X=2]", 90.0)])
    got = best.run(f)
    assert [[b.variant for b in p.builds] for p in got] == [["d[X=1]", "d[X=2]"],
                                                           ["d[X=2]", "d[X=1]"]]
    wide = tmp_path / "cluster.csv"
    with wide.open("w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=[*stage_csv.COLUMNS, "host", "gpu_uuid", "worker"])
        w.writeheader()
        w.writerows([{**_row("d[X=1]", 100.0), "host": "a", "gpu_uuid": "u0", "worker": "0"},
                     {**_row("d[X=2]", 130.0), "host": "a", "gpu_uuid": "u1", "worker": "1"}])
    with pytest.raises(HarnessError, match=r"no point of .* has two builds"):
        best.run(wide)


def test_a_failed_row_still_counts_its_run(tmp_path: Path) -> None:
    """The first run's X=2 failed; the command ran again and was appended: the second run's
    X=2 is ranked beside the second run's X=1, not the first run's."""
    f = _write(tmp_path / "s.csv", [
        _row("d[X=1]", 100.0), _row("d[X=2]", 1.0, status="failed", reason="out: wrong"),
        _row("d[X=1]", 120.0), _row("d[X=2]", 90.0)])
    (p,) = best.run(f)
    assert [(b.variant, b.median_us) for b in p.builds] == [("d[X=2]", 90.0),
                                                          ("d[X=1]", 120.0)]


def test_a_run_cut_mid_point_is_not_ranked_with_the_next(tmp_path: Path) -> None:
    """A resumed run died after X=1; the next one (the same command) measured X=1 and X=2:
    X=2 is ranked beside the second X=1, not the first."""
    cmd = "harness bench s --define X=1,2 --resume"
    f = _write(tmp_path / "s.csv", [_row("d[X=1]", 200.0, cmd=cmd),
                                    _row("d[X=1]", 120.0, cmd=cmd),
                                    _row("d[X=2]", 100.0, cmd=cmd)])
    (p,) = best.run(f)
    assert [(b.variant, b.median_us) for b in p.builds] == [("d[X=2]", 100.0),
                                                          ("d[X=1]", 120.0)]


def test_enough_repeats_drop_the_order_caveat(tmp_path: Path) -> None:
    rep = "median of 3 repeats (1, 2, 3 µs; spread 4 %)"
    f = _write(tmp_path / "s.csv", [_row("d[X=1]", 130.0, reason=rep),
                                    _row("d[X=2]", 100.0, reason=rep)])
    (p,) = best.run(f)
    assert p.repeats == 3 and p.summary() == "d[X=2] is the fastest, clearly"


def test_peer_rows_count_among_the_timings_repeats_must_cover(tmp_path: Path) -> None:
    """Two builds and two peers rotate as four timings: three repeats leave a build never
    first, so the caveat stays; four drop it. Another run's peers are not counted."""
    def rows(n: int) -> list[dict[str, str]]:
        rep = f"median of {n} repeats (1, 2, 3 µs; spread 4 %)"
        return [_row("d", 50.0, backend="torch", reason=rep),
                _row("d", 60.0, backend="torch_compile", reason=rep),
                _row("d[X=1]", 130.0, reason=rep), _row("d[X=2]", 100.0, reason=rep)]

    (p,) = best.run(_write(tmp_path / "three.csv", rows(3)))
    assert p.peers == 2 and "order effect is not ruled out" in p.summary()
    (p,) = best.run(_write(tmp_path / "four.csv", rows(4)))
    assert p.summary() == "d[X=2] is the fastest, clearly"
    other = [_row("d", 50.0, backend="torch", sha="bbb"), *rows(3)[2:]]
    (p,) = best.run(_write(tmp_path / "other.csv", other))
    assert p.peers == 0 and p.summary() == "d[X=2] is the fastest, clearly"
    twice = rows(3) + rows(3)  # one command appended again: two peers a group, not four
    assert [q.peers for q in best.run(_write(tmp_path / "twice.csv", twice))] == [2, 2]


def test_what_cannot_be_ranked_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"no point of .* has two builds"):
        best.run(_write(tmp_path / "one.csv", [_row("d", 1.0)]))
    with pytest.raises(HarnessError, match="holds pipeline rows"):
        best.run(H200 / "activation_path.csv")
    with pytest.raises(HarnessError, match="unknown preset 'loose'"):
        best.run(H200 / "tuning" / "int_gemm.csv", preset="loose")


def test_the_committed_tuning_rows_rank_and_the_cli_prints_them() -> None:
    points = best.run(H200 / "tuning" / "int_gemm.csv")
    assert len(points) >= 10 and all(len(p.builds) >= 2 for p in points)
    res = CliRunner().invoke(app, ["best", str(H200 / "tuning" / "int_gemm.csv")])
    assert res.exit_code == 0, res.output
    assert "is the fastest" in res.stdout and "IG_I2F=1" in res.stdout
    res = CliRunner().invoke(app, ["best", str(H200 / "nothing.csv")])
    assert res.exit_code == 2 and "no such results file" in res.output


def test_each_build_keeps_its_row_s_noise_and_the_point_its_params(tmp_path: Path) -> None:
    """A build's noise is its row's (%), the best's change 0; the label names the point's
    sizes and, where it has any, its params."""
    f = _write(tmp_path / "s.csv", [_row("d[X=1]", 130.0, noise=0.4, params="{'k': 2.0}"),
                                    _row("d[X=2]", 100.0, noise=0.25, params="{'k': 2.0}")])
    (p,) = best.run(f)
    assert [(b.variant, b.noise_pct, b.change_pct) for b in p.builds] == [
        ("d[X=2]", pytest.approx(0.25), 0.0), ("d[X=1]", pytest.approx(0.4),
                                               pytest.approx(30.0))]
    assert p.label() == "s batch=8 in_f=64 {'k': 2.0}"
    for empty in ("", "{}"):
        bare = best.PointBest({"stage": "s", "batch": "8", "in_f": "", "params": empty}, "a",
                              "c", p.builds, "d[X=1]", 1)
        assert bare.label() == "s batch=8"


def test_the_default_threshold_is_two_per_cent(tmp_path: Path) -> None:
    """As ``harness best``'s --threshold: 1.5 % apart with little noise is the same, 2.5 %
    is slower."""
    f = _write(tmp_path / "s.csv", [_row("d[X=1]", 100.0, noise=0.01),
                                    _row("d[X=2]", 101.5, noise=0.01),
                                    _row("d[X=3]", 102.5, noise=0.01)])
    (p,) = best.run(f)
    assert [b.verdict for b in p.builds] == ["best", "same", "slower"]
    (p,) = best.run(f, threshold_pct=1.0)
    assert [b.verdict for b in p.builds] == ["best", "slower", "slower"]


def test_a_command_appended_three_times_is_three_runs_sharing_its_peers(
        tmp_path: Path) -> None:
    """Each run's group is its own; the command's peer rows at the point are shared out over
    its runs, a whole number each (rounded up: a run cut short had fewer)."""
    def one_run(peers: int) -> list[dict[str, str]]:
        return [*(_row("d", 50.0, backend="torch") for _ in range(peers)),
                _row("d[X=1]", 130.0), _row("d[X=2]", 100.0)]

    got = best.run(_write(tmp_path / "s.csv", one_run(1) + one_run(1) + one_run(1)))
    assert [([b.variant for b in p.builds], p.peers) for p in got] == [
        (["d[X=2]", "d[X=1]"], 1)] * 3
    got = best.run(_write(tmp_path / "t.csv", one_run(1) + one_run(2)))
    assert [p.peers for p in got] == [2, 2] and all(isinstance(p.peers, int) for p in got)
