"""What the commands over result files show: the lines naming what fails compare's gate."""

from __future__ import annotations

from harness.front import render_results
from harness.results import compare


def _row(verdict: str, change: float | None, old: str = "ok", new: str = "ok",
         **point: str) -> compare.RowVerdict:
    where = {"stage": "int_gemm", "backend": "pycuda", "variant": "int8", "batch": "16",
             "in_f": "3584", "out_f": "18944", **point}
    return compare.RowVerdict(where, 1, verdict, old, new, 10.0, 11.0, change, 0.5, "why")


def test_each_regression_is_a_line_naming_its_row_and_change() -> None:
    rows = [_row("slower", 12.5), _row("gone", None, new=""),
            _row("failed", None, new="failed", batch="1")]
    text = render_results.regressions(rows)
    assert text.splitlines() == [
        "3 regression(s):",
        "  int_gemm pycuda int8 batch=16 in_f=3584 out_f=18944: slower +12.5 %",
        "  int_gemm pycuda int8 batch=16 in_f=3584 out_f=18944: gone (ok before, none now)",
        "  int_gemm pycuda int8 batch=1 in_f=3584 out_f=18944: failed (ok before, failed now)"]


def test_past_the_most_the_rest_are_counted() -> None:
    text = render_results.regressions([_row("slower", float(i)) for i in range(13)], most=10)
    assert text.splitlines()[-1] == "  ... and 3 more (--explain lists every row)"
    assert len(text.splitlines()) == 12
