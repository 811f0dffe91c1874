"""`harness fit`: a build's time along one axis as a fixed part plus a part in proportion,
fitted to the rows one command measured."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.errors import BadInput
from harness.front.cli import app
from harness.results import fit
from tests.results import stage_csv


def _row(in_f: int, median: float, variant: str = "d", sha: str = "aaa",
         cmd: str = "harness bench s --sweep in_f=1,2,3", **kw: str) -> dict[str, str]:
    return stage_csv.stage_row(variant, median, sha, cmd, in_f=str(in_f), **kw)


_write = stage_csv.write


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


def test_the_bandwidth_past_the_fixed_part(tmp_path: Path) -> None:
    """Rows that carry their bytes: the bytes a unit adds over the time it adds, and that
    rate against the peak the rows name; rows without bytes say nothing of it."""
    f = _write(tmp_path / "s.csv", [
        _row(x, 7.0 + 0.0009 * x, bytes=str(3704 * x + 4096), peak_gbps="4287")
        for x in (4736, 9472, 18944, 37888)])
    (line,) = fit.run(f, "in_f")
    assert line.per_unit_bytes == pytest.approx(3704.0)
    assert line.marginal_gbps() == pytest.approx(3704 / 0.0009 / 1e3)
    (text,) = fit.summary([line], "in_f")
    assert text.endswith("past the fixed part 3704 bytes a unit of in_f at 4116 GB/s "
                         "(96.0 % of the calibrated peak)")
    g = _write(tmp_path / "g.csv", [_row(x, 1.0 + x) for x in (1, 2, 3)])
    (plain,) = fit.run(g, "in_f")
    assert plain.marginal_gbps() is None and "past the fixed part" not in fit.summary(
        [plain], "in_f")[0]


@pytest.mark.parametrize("bad", ["nan", "inf", "-4", "-1e400"])
def test_an_axis_value_that_is_no_size_is_one_line(tmp_path: Path, bad: str) -> None:
    """A NaN or an infinity leaves no line to fit; a negative size makes the fixed part's
    share meaningless (above 100 % or below 0): one line naming the file and line."""
    f = _write(tmp_path / "s.csv", [_row(64, 600.0, batch="1000"), _row(64, 1100.0, batch="2000"),
                                    _row(64, 2100.0, batch=bad), _row(64, 2100.0, batch="4000")])
    with pytest.raises(BadInput, match=f"s.csv, line 4: batch is '{bad}'; harness fit takes "
                                       "values of batch that are finite and >= 0"):
        fit.run(f, "batch")
    res = CliRunner().invoke(app, ["fit", str(f), "--axis", "batch"])
    assert res.exit_code == 2 and "finite and >= 0" in res.stderr
    assert "Traceback" not in res.output and "Warning" not in res.output


def test_a_zero_on_the_axis_is_the_fixed_part_alone(tmp_path: Path) -> None:
    """t = a + b x holds at x = 0: the point there is the fixed part, its share 100 %."""
    f = _write(tmp_path / "s.csv", [_row(x, 100 + 0.5 * x) for x in (0, 1000, 2000)])
    (line,) = fit.run(f, "in_f")
    assert line.fixed_us == pytest.approx(100.0) and line.fixed_share_pct(0) == 100.0


def test_a_rerun_row_is_no_new_point_on_the_line(tmp_path: Path) -> None:
    """Three rows but two values of the axis (the first measured again, its row appended):
    two points fix a line exactly and leave nothing to say whether it holds, so it is
    refused like any sweep of fewer than three values; a third value makes it a line."""
    rows = [_row(1000, 600.0), _row(1000, 602.0), _row(2000, 1100.0)]
    f = _write(tmp_path / "s.csv", rows)
    with pytest.raises(BadInput, match="3 or more values of in_f"):
        fit.run(f, "in_f")
    (line,) = fit.run(_write(tmp_path / "t.csv", [*rows, _row(4000, 2100.0)]), "in_f")
    assert [s.x for s in line.samples] == [1000.0, 1000.0, 2000.0, 4000.0]
