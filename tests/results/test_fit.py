"""`harness fit`: a build's time along one axis as a fixed part plus a part in proportion,
fitted to the rows one command measured."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.errors import BadInput, HarnessError
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


@pytest.mark.parametrize("bad", ["nan", "inf", "-4", "-1e400", "0", "2.5"])
def test_an_axis_value_that_is_no_size_is_one_line(tmp_path: Path, bad: str) -> None:
    """A NaN or an infinity leaves no line to fit; a negative size makes the fixed part's
    share meaningless (above 100 % or below 0), and no run measures a size of 0 or a
    fraction: every reader of the rows refuses such a size, in one line naming the file and
    line."""
    f = _write(tmp_path / "s.csv", [_row(64, 600.0, batch="1000"), _row(64, 1100.0, batch="2000"),
                                    _row(64, 2100.0, batch=bad), _row(64, 2100.0, batch="4000")])
    with pytest.raises(HarnessError, match=f"s.csv, line 4: batch is '{bad}', not a positive "
                                           "whole number"):
        fit.run(f, "batch")
    res = CliRunner().invoke(app, ["fit", str(f), "--axis", "batch"])
    assert res.exit_code == 2 and "not a positive whole number" in res.stderr
    assert "Traceback" not in res.output and "Warning" not in res.output


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


def _line(per_unit_us: float, per_unit_bytes: float | None = 3.0,
          peak_gbps: float | None = None, samples: tuple[fit.Sample, ...] = ()) -> fit.Line:
    return fit.Line("pycuda d", {"stage": "s"}, "aaa", 10.0, per_unit_us, samples,
                    per_unit_bytes, peak_gbps)


def test_a_residual_is_the_median_s_distance_from_the_line_in_per_cent() -> None:
    """(median - fitted) / fitted, in %; the worst is the largest in size, below the line
    as well as above it."""
    assert fit.Sample(1.0, 10.0, 7.0).residual_pct == pytest.approx(300 / 7)
    low, high = fit.Sample(1.0, 90.0, 100.0), fit.Sample(2.0, 102.0, 100.0)
    assert low.residual_pct == pytest.approx(-10.0)
    assert _line(1.0, samples=(low, high)).worst_residual_pct() == pytest.approx(10.0)


def test_no_bandwidth_where_the_time_does_not_grow() -> None:
    """marginal_gbps: the bytes a unit adds over the time it adds, None where the time does
    not grow (flat or falling); the summary then says nothing of it."""
    assert _line(2.0).marginal_gbps() == pytest.approx(3.0 / 2.0 / 1e3)
    for flat in (0.0, -0.5):
        ln = _line(flat, peak_gbps=4000.0, samples=(fit.Sample(1.0, 10.0, 10.0),))
        assert ln.marginal_gbps() is None
        assert "past the fixed part" not in fit.summary([ln], "in_f")[0]
    ln = _line(1e-3, per_unit_bytes=1.5, peak_gbps=4.0, samples=(fit.Sample(1.0, 10.0, 10.0),))
    assert fit.summary([ln], "in_f")[0].endswith("at 1.5 GB/s (37.5 % of the calibrated peak)")


def test_a_fraction_below_zero_on_the_axis_is_no_size(tmp_path: Path) -> None:
    f = _write(tmp_path / "s.csv", [_row(64, 600.0, batch="1000"), _row(64, 1100.0, batch="-0.5"),
                                    _row(64, 2100.0, batch="4000")])
    with pytest.raises(HarnessError, match=r"s\.csv, line 3: batch is '-0\.5', not a positive "
                                           "whole number"):
        fit.run(f, "batch")


def test_an_axis_of_words_and_a_pipeline_csv_are_one_line(tmp_path: Path) -> None:
    f = _write(tmp_path / "s.csv", [_row(64, 600.0, family=w) for w in ("normal", "ramp", "edge")])
    with pytest.raises(BadInput, match=r"--axis family: its values in .* are not numbers"):
        fit.run(f, "family")
    pipeline = Path(__file__).parents[2] / "statistics" / "h200" / "activation_path.csv"
    with pytest.raises(BadInput, match="holds pipeline rows: harness fit takes a stage's rows"):
        fit.run(pipeline, "batch")


def test_bytes_are_used_only_where_every_row_has_a_positive_count(tmp_path: Path) -> None:
    """A column's positive values, one a row (1 byte is one); a zero is no count."""
    f = _write(tmp_path / "s.csv", [_row(x, 1.0 + x, bytes=str(x)) for x in (1, 2, 3)])
    (line,) = fit.run(f, "in_f")
    assert line.per_unit_bytes == pytest.approx(1.0)
    g = _write(tmp_path / "g.csv", [_row(x, 1.0 + x, bytes=str(x if x > 1 else 0))
                                    for x in (1, 2, 3)])
    (line,) = fit.run(g, "in_f")
    assert line.per_unit_bytes is None


def test_a_line_that_falls_to_zero_has_defined_residuals_and_shares(tmp_path: Path) -> None:
    """Medians 23, 11, 1 µs at 1, 2, 4 fit t = 28 - 7 x, which is 0 at x = 4: the residual
    there is an infinity of the miss's sign (the line does not hold), the fixed share none
    (NaN, shown as '-'), and the command prints them rather than dividing by zero."""
    f = _write(tmp_path / "s.csv", [_row(x, m) for x, m in ((1, 23.0), (2, 11.0), (4, 1.0))])
    (line,) = fit.run(f, "in_f")
    assert line.fixed_us == pytest.approx(28.0) and line.per_unit_us == pytest.approx(-7.0)
    at_4 = line.samples[-1]
    assert at_4.fitted_us == pytest.approx(0.0, abs=1e-9) and at_4.residual_pct == math.inf
    assert fit.Sample(4.0, 0.0, 0.0).residual_pct == 0.0
    assert fit.Sample(4.0, -1.0, 0.0).residual_pct == -math.inf
    assert math.isnan(line.fixed_share_pct(4)) and line.worst_residual_pct() == math.inf
    (text,) = fit.summary([line], "in_f")
    assert "4: -; worst residual inf %" in text
    res = CliRunner().invoke(app, ["fit", str(f), "--axis", "in_f"])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert "+inf%" in res.stdout


def test_a_line_that_falls_below_zero_has_no_share_and_does_not_hold(tmp_path: Path) -> None:
    """Medians 30, 11, 1 µs at 1, 2, 4 fit a line below 0 at x = 4: no share there (one of
    -3500 % meant nothing), and the residual against a negative time is an infinity."""
    f = _write(tmp_path / "s.csv", [_row(x, m) for x, m in ((1, 30.0), (2, 11.0), (4, 1.0))])
    (line,) = fit.run(f, "in_f")
    at_4 = line.samples[-1]
    assert at_4.fitted_us < 0 and at_4.residual_pct == math.inf
    assert math.isnan(line.fixed_share_pct(4)) and line.worst_residual_pct() == math.inf
    assert fit.Sample(1.0, 5.0, -1.0).residual_pct == math.inf
    assert fit.Sample(1.0, -2.0, -1.0).residual_pct == -math.inf


@pytest.mark.parametrize(("column", "bad"), [
    ("bytes", "inf"), ("bytes", "nan"), ("bytes", "-4096"), ("bytes", "1e308"),
    ("bytes", "2.5"), ("bytes", "lots"), ("peak_gbps", "inf"), ("peak_gbps", "nan"),
    ("peak_gbps", "-4000"), ("peak_gbps", "0"), ("peak_gbps", "fast")])
def test_a_bytes_or_peak_cell_that_is_no_count_or_rate_is_one_line(tmp_path: Path,
                                                                   column: str,
                                                                   bad: str) -> None:
    """A written bytes or peak_gbps cell that is not a count of bytes (a whole number below
    2^63) or a rate (finite, above 0) names its file and line: read as numbers, an
    infinite count would print "nan bytes a unit", 1e308 a negative rate, an infinite peak
    "0.0 % of the peak"."""
    rows = [_row(x, 7.0 + 0.0009 * x, bytes=str(3704 * x), peak_gbps="4287")
            for x in (4736, 9472, 18944)]
    rows[1][column] = bad
    f = _write(tmp_path / "s.csv", rows)
    if column == "peak_gbps" and bad != "0":
        # a rate every reader of the rows refuses (a finite number >= 0), before fit's own
        with pytest.raises(HarnessError, match=r"s\.csv, line 3: peak_gbps is '?" + bad):
            fit.run(f, "in_f")
        return
    with pytest.raises(BadInput, match=rf"s\.csv, line 3: {column} is '{bad}'; harness fit "
                                       "takes a"):
        fit.run(f, "in_f")


def test_an_empty_peak_or_a_count_of_zero_bytes_is_none(tmp_path: Path) -> None:
    """The columns are optional: an empty peak (a GPU never calibrated) or empty bytes, and
    0 bytes (a stage that counts none), leave the rate out of the line."""
    f = _write(tmp_path / "s.csv", [_row(x, 7.0 + 0.0009 * x, bytes=b, peak_gbps=p)
                                    for x, b, p in ((4736, "0", ""), (9472, "", "4287"),
                                                    (18944, "70000000", "4287"))])
    (line,) = fit.run(f, "in_f")
    assert line.per_unit_bytes is None and line.peak_gbps is None


def test_no_bandwidth_where_the_bytes_do_not_grow() -> None:
    """Bytes that fall along the axis are no rate past the fixed part (a negative one)."""
    for falling in (0.0, -3.0):
        ln = _line(1.0, per_unit_bytes=falling, peak_gbps=4000.0,
                   samples=(fit.Sample(1.0, 10.0, 10.0),))
        assert ln.marginal_gbps() is None
        assert "past the fixed part" not in fit.summary([ln], "in_f")[0]
