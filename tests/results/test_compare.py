"""harness compare: verdicts that account for both runs' noise, and the CI exit code."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from harness.front.cli import app
from harness.results import compare
from harness.results import rows as results


def row(batch: int, median: float, noise: float, status: str = "ok") -> dict[str, str]:
    return {"stage": "s", "backend": "pycuda", "variant": "default", "batch": str(batch),
            "in_f": "8", "out_f": "", "family": "normal", "params": "{}", "l2": "cold",
            "status": status, "median_us": str(median), "noise_pct": str(noise)}


def test_verdicts() -> None:
    old = [row(1, 100, 0.5), row(2, 100, 0.5), row(3, 100, 0.5), row(4, 100, 5.0),
           row(5, 100, 0.5), row(6, 100, 0.5, "oom")]
    new = [row(1, 90, 0.5), row(2, 110, 0.5), row(3, 101, 0.5), row(4, 110, 5.0),
           row(5, 100.5, 0.01), row(6, 100, 0.5), row(7, 5, 0.1)]
    got = {v.key[3]: v.verdict for v in compare.compare(old, new)}
    assert got == {"1": "faster", "2": "slower", "3": "same", "4": "ambiguous", "5": "same",
                   "6": "ambiguous", "7": "ambiguous"}
    v = compare.compare([row(1, 100, 1.0)], [row(1, 90, 1.0)])[0]
    assert abs(v.change_pct + 10) < 1e-9 and abs(v.sigma_pct - (1 + 0.81) ** 0.5) < 1e-9


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    with results.CsvWriter(path) as w:
        for r in rows:
            w.write(r)
    return path


def test_cli_exit_code_gates_on_slower(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", [row(1, 100, 0.5)])
    b = write(tmp_path / "b.csv", [row(1, 120, 0.5)])
    res = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert res.exit_code == 1 and "slower" in res.stdout and "1 slower" in res.stdout
    res = CliRunner().invoke(app, ["compare", str(b), str(a)])
    assert res.exit_code == 0 and "1 faster" in res.stdout
    res = CliRunner().invoke(app, ["compare", str(a), str(tmp_path / "none.csv")])
    assert res.exit_code == 2 and "no such results file" in res.stderr


def test_graph_and_stream_rows_are_compared_apart() -> None:
    """A --graph row and a stream row of the same point are two rows; a row written before
    the launch column counts as a stream launch."""
    old = [row(1, 10.0, 0.5)]  # no launch column: an older CSV
    new = [{**row(1, 9.0, 0.5), "launch": "stream"}, {**row(1, 6.0, 0.5), "launch": "graph"}]
    got = {v.key[-1]: v.verdict for v in compare.compare(old, new)}
    assert got == {"stream": "faster", "graph": "ambiguous"}  # graph: nothing to compare to
