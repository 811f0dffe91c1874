"""Replaying a results folder: each pycuda row's own bench command, into another folder,
without the peers; the committed H200 rows can all be replayed."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import paths
from harness.errors import HarnessError
from harness.results.rows import read_rows
from harness.tools import replay

#: The stage names the replay tells apart in a command (the fixture's stand-ins).
NAMES = {"s", "t", "u"}
STAGE_HEADER = ["stage", "backend", "variant", "batch", "status", "median_us", "command"]


def _csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _children(monkeypatch, status: Callable[[list[str]], int],  # type: ignore[no-untyped-def]
              writes: bool = True) -> list[list[str]]:
    """The commands replay runs, recorded instead of run; each exits with ``status(cmd)``
    and, with ``writes``, adds a row to ``--out``'s CSV of each stage it names, as a bench
    does."""
    ran: list[list[str]] = []

    def fake_run(cmd, check):  # type: ignore[no-untyped-def]
        ran.append(cmd)
        out = Path(cmd[cmd.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        named = replay.stages_named(cmd[3:], replay.discover().stages)  # after "-m harness"
        for name in named if writes else ():
            path = out / f"{name}.csv"
            new = not path.exists()
            with path.open("a", newline="") as f:
                w = csv.writer(f)
                if new:
                    w.writerow(STAGE_HEADER)
                w.writerow([name, "pycuda", "v", "1", "ok", "1.0", "harness bench"])
        return subprocess.CompletedProcess(cmd, status(cmd))

    monkeypatch.setattr(replay.subprocess, "run", fake_run)
    return ran


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "gpu"
    d.mkdir()
    peers = "harness bench s --peers all --k 4 --out statistics/h200 --sweep batch=1,8"
    graph = "harness bench s --graph --peers=torch --sweep 'batch=1..4' --append --out=x"
    _csv(d / "s.csv", STAGE_HEADER, [
        ["s", "torch", "v", "1", "ok", "2.0", peers],
        ["s", "pycuda", "v", "1", "ok", "1.0", peers],
        ["s", "pycuda", "v", "8", "ok", "1.0", peers],
        ["s", "pycuda", "v", "1", "ok", "1.0", graph],
        ["s", "torch", "v", "1", "ok", "1.0", "harness bench s --only-a-peer"],
    ])
    _csv(d / "t.csv", STAGE_HEADER, [["t", "pycuda", "v", "1", "ok", "1.0",
                                      "harness bench t --no-append --budget 0.5"]])
    # Not stage rows: a pipeline's (total_us) and a sanitizer summary (no median).
    _csv(d / "p.csv", [*STAGE_HEADER, "total_us"],
         [["p", "pycuda", "v", "1", "ok", "1.0", "harness bench p", "3.0"]])
    _csv(d / "sanitizer.csv", ["stage", "variant", "tool", "command"],
         [["s", "v", "memcheck", "harness sanitize"]])
    return d


def test_each_pycuda_command_once_with_its_options_into_the_new_folder(folder: Path) -> None:
    out = folder / "fresh"
    assert replay.commands(folder, out, names=NAMES) == [
        ["bench", "s", "--k", "4", "--sweep", "batch=1,8",
         "--peers", "none", "--out", str(out), "--append"],
        ["bench", "s", "--graph", "--sweep", "batch=1..4",
         "--peers", "none", "--out", str(out), "--append"],
        ["bench", "t", "--budget", "0.5", "--peers", "none", "--out", str(out), "--append"],
    ]
    assert replay.commands(folder, out, peers="all", names=NAMES)[0][-5:-3] == ["--peers", "all"]


def test_repeats_replace_a_command_s_own_only_when_asked(tmp_path: Path) -> None:
    d = tmp_path / "tuning"
    d.mkdir()
    _csv(d / "s.csv", STAGE_HEADER, [["s", "pycuda", "v", "1", "ok", "1.0",
                                      "harness bench s --define U=1,2 --repeats 5"]])
    out = tmp_path / "again"
    assert replay.commands(d, out, names=NAMES) == [
        ["bench", "s", "--define", "U=1,2", "--repeats", "5", "--peers", "none", "--out",
         str(out), "--append"]]
    assert replay.commands(d, out, names=NAMES, repeats=3) == [
        ["bench", "s", "--define", "U=1,2", "--repeats", "3", "--peers", "none", "--out",
         str(out), "--append"]]
    # Two commands that differ only in what a replay replaces are one replay, not two
    # appending the same rows twice.
    _csv(d / "s.csv", STAGE_HEADER, [
        ["s", "pycuda", "v", "1", "ok", "1.0", "harness bench s --repeats 5 --out a"],
        ["s", "pycuda", "v", "1", "ok", "1.0", "harness bench s --out b"]])
    assert len(replay.commands(d, out, names=NAMES, repeats=3)) == 1
    assert len(replay.commands(d, out, names=NAMES)) == 2


def test_an_option_value_that_is_a_stage_name_stays() -> None:
    """``--out u`` names a folder: it is neither dropped as a stage left out nor counted
    as a named stage (the command names none, so it measures the folder's)."""
    assert replay._only(["--graph", "u", "s", "--out", "u", "--budget=1", "t"], {"s"},
                        NAMES) == ["--graph", "s", "--out", "u", "--budget=1"]
    assert replay._only(["--out", "u", "--sweep", "batch=1"], {"s"}, NAMES) == [
        "--out", "u", "--sweep", "batch=1", "s"]


def test_the_flags_are_the_cli_s() -> None:
    import typer.main

    from harness.front.cli import app

    bench = typer.main.get_command(app).commands["bench"]  # type: ignore[attr-defined]
    flags = {o for p in bench.params if getattr(p, "is_flag", False)
             for o in (*p.opts, *p.secondary_opts)}
    assert flags == replay.FLAGS


def test_a_shared_command_measures_only_the_folder_stages(folder: Path) -> None:
    """One command measured s, t and u; u's CSV is not in the folder (left out of a
    regress): its replay measures s and t. A command naming no stage (every stage) names
    the folder's."""
    both = "harness bench --budget 0.5 s t u --sweep batch=16"
    _csv(folder / "s.csv", STAGE_HEADER, [["s", "pycuda", "v", "16", "ok", "1.0", both]])
    _csv(folder / "t.csv", STAGE_HEADER, [["t", "pycuda", "v", "16", "ok", "1.0", both],
                                          ["t", "pycuda", "v", "1", "ok", "1.0",
                                           "harness bench --sweep batch=1"]])
    out = folder / "fresh"
    assert replay.commands(folder, out, names=NAMES) == [
        ["bench", "--budget", "0.5", "s", "t", "--sweep", "batch=16",
         "--peers", "none", "--out", str(out), "--append"],
        ["bench", "--sweep", "batch=1", "t", "--peers", "none", "--out", str(out), "--append"],
    ]


def test_what_cannot_be_replayed_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="nothing to replay in"):
        replay.commands(tmp_path, tmp_path / "out")
    _csv(tmp_path / "s.csv", STAGE_HEADER, [["s", "pycuda", "v", "1", "ok", "1.0",
                                             "harness report statistics/h200"]])
    with pytest.raises(HarnessError, match=r"s\.csv: a pycuda row's command is not a harness "
                                           "bench"):
        replay.commands(tmp_path, tmp_path / "out")


def test_main_runs_each_command_and_returns_the_worst_status(folder, monkeypatch,
                                                             capsys) -> None:  # type: ignore[no-untyped-def]
    ran = _children(monkeypatch, lambda cmd: 1 if "--graph" in cmd else 0)
    assert replay.main([str(folder), str(folder / "fresh")]) == 1
    assert [c[:4] for c in ran] == [[sys.executable, "-m", "harness", "bench"]] * 3
    assert capsys.readouterr().out.count("=== harness bench ") == 3


def test_main_refuses_a_folder_with_csvs_and_bad_arguments(folder, capsys) -> None:  # type: ignore[no-untyped-def]
    assert replay.main([str(folder), str(folder)]) == 2
    assert capsys.readouterr().err == f"error: {folder} already holds CSVs: replay into an " \
                                      "empty folder, or add the rows to them with --append\n"
    assert replay.main([str(folder)]) == 2
    assert capsys.readouterr().err.startswith("error: replay: the following arguments are "
                                              "required: out")
    assert replay.main([str(folder), str(folder / "fresh"), "--repeats", "0"]) == 2
    assert capsys.readouterr().err == "error: replay: --repeats must be at least 1, not 0\n"


def test_append_measures_a_folder_again_in_place(folder, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The tuning folder measured again into itself: each child appends to the CSVs there,
    so their earlier rows (a sweep that can no longer be built among them) stay."""
    before = {p.name: p.read_text() for p in folder.glob("*.csv")}
    ran = _children(monkeypatch, lambda cmd: 0)
    assert replay.main([str(folder), str(folder), "--append"]) == 0
    assert len(ran) == 3 and all(c[-3:] == ["--out", str(folder), "--append"] for c in ran)
    assert {p.name: p.read_text() for p in folder.glob("*.csv")} == before  # nothing cut


def _gpu_folders() -> list[Path]:
    """The folders of statistics/ holding GPU rows (not a local CPU run's)."""
    return [d for d in paths.statistics_dir().iterdir() if d.is_dir() and any(
        r["backend"] == "pycuda" for p in replay.stage_csvs(d) for r in read_rows(p))]


def test_the_committed_gpu_rows_can_be_replayed() -> None:
    """What the GPU script's regress phase compares against must be replayable: every GPU
    folder's stage CSVs name their bench commands."""
    folders = _gpu_folders()
    assert folders
    for d in folders:
        cmds = replay.commands(d, Path("fresh"))
        stages = {p.stem for p in replay.stage_csvs(d)}
        named = {a for c in cmds for a in c if a in stages}
        everything = any(not set(c[1:]) & stages for c in cmds)  # no stage named: all
        assert everything or named == stages, d


def test_a_sweep_over_a_knob_the_kernel_no_longer_reads_is_left_out(tmp_path: Path,
                                                                    monkeypatch,
                                                                    capsys) -> None:  # type: ignore[no-untyped-def]
    """A tuning sweep over a --define taken out of the kernel cannot be built again: the
    replay says so and leaves it out (its child would refuse the define); the others run."""
    d = tmp_path / "tuning"
    d.mkdir()
    gone = "harness bench int_gemm --define IG_GONE=0,1 --sweep batch=8 --out x"
    kept = "harness bench int_gemm --define IG_PINGPONG=0,1 --sweep batch=8 --out x"
    _csv(d / "int_gemm.csv", STAGE_HEADER, [
        ["int_gemm", "pycuda", "int8[IG_GONE=0]", "8", "ok", "1.0", gone],
        ["int_gemm", "pycuda", "int8[IG_PINGPONG=0]", "8", "ok", "1.0", kept]])
    ran = _children(monkeypatch, lambda cmd: 0)
    assert replay.main([str(d), str(tmp_path / "fresh")]) == 0
    assert len(ran) == 1 and "IG_PINGPONG=0,1" in ran[0]
    out = capsys.readouterr().out
    assert "=== left out: harness bench int_gemm --define IG_GONE=0,1" in out
    assert "--define IG_GONE: stage int_gemm's kernel never reads it" in out
    # A child that exits 0 having written nothing for its stage fails the replay: the
    # regress gate would compare nothing for it and pass.
    _children(monkeypatch, lambda cmd: 0, writes=False)
    assert replay.main([str(d), str(tmp_path / "idle")]) == 1
    assert "exited 0 but wrote no rows for int_gemm" in capsys.readouterr().err
    _children(monkeypatch, lambda cmd: 3, writes=False)  # its own failure stands as it is
    assert replay.main([str(d), str(tmp_path / "failing")]) == 3
    assert "wrote no rows" not in capsys.readouterr().err
    gone_only = tmp_path / "gone"
    gone_only.mkdir()
    _csv(gone_only / "int_gemm.csv", STAGE_HEADER,
         [["int_gemm", "pycuda", "int8[IG_GONE=0]", "8", "ok", "1.0", gone]])
    assert replay.main([str(gone_only), str(tmp_path / "fresh2")]) == 2
    assert "nothing to replay" in capsys.readouterr().err


def test_the_stages_a_command_names_are_its_positional_words() -> None:
    """Only the stages a bench command names count, not an option's value that is a stage's
    name too (a replay into a folder called gemm)."""
    args = ["bench", "int_gemm", "--sweep", "batch=1", "--out", "gemm", "--append"]
    assert replay.stages_named(args, {"gemm", "int_gemm"}) == ["int_gemm"]
    assert replay.stages_named(["bench", "--out=gemm", "gemm"], {"gemm"}) == ["gemm"]


def test_a_torn_csv_where_the_rows_go_stops_no_command(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch, capsys) -> None:
    """OUT's CSV ends inside an open quote (a write cut short): replay only counts its rows,
    leniently, and each command goes on (its own --append repairs the file, or refuses it
    in one line). The folder whose commands are read is read strictly: a torn one there is
    one line and exit 2, nothing run."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    cmd = "harness bench dynamic_spikes --sweep batch=1"
    _csv(src / "dynamic_spikes.csv", STAGE_HEADER,
         [["dynamic_spikes", "pycuda", "default", "1", "ok", "1.0", cmd]])
    (out / "dynamic_spikes.csv").write_bytes(b'stage,backend\ndynamic_spikes,"pyc')
    ran = _children(monkeypatch, lambda cmd: 0, writes=False)
    assert replay.main([str(src), str(out), "--append"]) == 1  # counted, then judged
    assert len(ran) == 1 and "exited 0 but wrote no rows" in capsys.readouterr().err
    (src / "dynamic_spikes.csv").write_bytes((src / "dynamic_spikes.csv").read_bytes()
                                             + b'dynamic_spikes,"pyc')
    ran.clear()
    assert replay.main([str(src), str(tmp_path / "new")]) == 2 and ran == []
    assert "dynamic_spikes.csv: not a readable CSV (unexpected end of data)" in \
        capsys.readouterr().err
