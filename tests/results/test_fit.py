"""`harness fit`: a build's time along one axis as a fixed part plus a part in proportion,
fitted to the rows one command measured."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.errors import BadInput
from harness.front.cli import app
from harness.results import fit
from harness.results.rows import COLUMNS


def _row(in_f: int, median: float, variant: str = "d", sha: str = "aaa",
         cmd: str = "harness bench s --sweep in_f=1,2,3", **kw: str) -> dict[str, str]:
    r = {c: "" for c in COLUMNS}
    r.update(stage="s", backend="pycuda", variant=variant, batch="8", in_f=str(in_f),
             family="normal", params="{}", status="ok", l2="cold", launch="stream",
             median_us=repr(median), p10_us=repr(median * 0.99), p90_us=repr(median * 1.01),
             noise_pct="0.1", git_sha=sha, command=cmd)
    r.update(kw)
    return r


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(COLUMNS))
        w.writeheader()
        w.writerows(rows)
    return path


def test_a_line_per_build_its_fixed_part_and_residuals(tmp_path: Path) -> None:
    # d: 100 µs fixed + 0.5 µs a unit, exactly; e: the same line with one point 10 % high.
    f = _write(tmp_path / "s.csv", [
        *(_row(x, 100 + 0.5 * x) for x in (1000, 2000, 4000)),
        *(_row(x, (100 + 0.5 * x) * (1.1 if x == 2000 else 1.0), variant="e")
          for x in (1000, 2000, 4000)),
        _row(8000, 1.0, status="failed"),  # a failed row is not fitted
        _row(8000, 9.0, variant="f"), _row(9000, 9.5, variant="f"),  # two values: no line
    ])
    d, e = fit.run(f, "in_f")
    assert d.build == "pycuda d" and d.git_sha == "aaa"
    assert d.fixed_us == pytest.approx(100.0) and d.per_unit_us == pytest.approx(0.5)
    assert [s.x for s in d.samples] == [1000.0, 2000.0, 4000.0]
    assert d.fixed_share_pct(1000) == pytest.approx(100 * 100 / 600)
    assert d.worst_residual_pct() == pytest.approx(0.0, abs=1e-9)
    assert e.worst_residual_pct() > 5.0
    assert d.where() == "s batch=8"
    (line,) = fit.summary([d], "in_f")
    assert line.startswith("pycuda d at s batch=8 (aaa): t = 100 µs + 0.5 µs x in_f")
    assert "1000: 16.7 %" in line


def test_rows_of_different_runs_are_not_fitted_together(tmp_path: Path) -> None:
    f = _write(tmp_path / "s.csv", [
        _row(1000, 600.0), _row(2000, 1100.0), _row(4000, 2100.0, sha="bbb")])
    with pytest.raises(BadInput, match="3 or more values of in_f"):
        fit.run(f, "in_f")


def test_bad_axis_and_one_line_errors(tmp_path: Path) -> None:
    f = _write(tmp_path / "s.csv", [_row(x, 1.0 + x) for x in (1, 2, 3)])
    with pytest.raises(BadInput, match="--axis median_us: not a key column"):
        fit.run(f, "median_us")
    res = CliRunner().invoke(app, ["fit", str(f), "--axis", "nope"])
    assert res.exit_code == 2 and "not a key column" in res.stderr
    assert "Traceback" not in res.output
    res = CliRunner().invoke(app, ["fit", str(f), "--axis", "in_f"])
    assert res.exit_code == 0 and "t = 1 µs + 1 µs x in_f" in res.stdout
