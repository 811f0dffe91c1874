"""The plots' lines and panels, from the committed H200 CSVs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import plots
from harness.results.readback import read_checked, x_axis
from tests.results import stage_csv

H200 = Path(__file__).parents[2] / "statistics" / "h200"


def test_a_gemm_plots_tops_a_line_per_shape() -> None:
    """int_gemm's rows hold three (N, K) pairs, two of them at in_f 3584: each is a line
    of its own (one line through both would zigzag between shapes), in TOPS against the
    datasheet peak."""
    rows = [r for r in read_checked(H200 / "int_gemm.csv") if r["status"] == "ok"]
    rate, peak, label = plots._rate(rows)
    assert rate == "tops" and peak == 1979.0 and label == "datasheet peak 1979 TOPS"
    lines = plots.series(rows, x_axis(rows), rate)
    shapes = {(r["in_f"], r["out_f"]) for r in rows if r["backend"] == "pycuda"}
    ours = {k for k in lines if k.startswith("pycuda int8 ")}
    assert len(shapes) == 3 and ours == {f"pycuda int8 in_f={i} out_f={o}" for i, o in shapes}
    for key, pts in lines.items():
        assert [p[0] for p in pts] == sorted({p[0] for p in pts}), key  # one point an x
        match = [r for r in rows if f"{r['backend']} {r['variant']} in_f={r['in_f']} "
                 f"out_f={r['out_f']}" == key]
        assert {p[2] for p in pts} <= {float(r["tops"]) for r in match}


def test_no_two_lines_look_alike() -> None:
    rows = [r for r in read_checked(H200 / "int_gemm.csv") if r["status"] == "ok"]
    lines = plots.series(rows, x_axis(rows), "tops")
    looks = [tuple(sorted(plots._style(k, lines).items())) for k in lines]
    assert len(lines) > 10 and len(set(looks)) == len(looks)
    many = {f"pycuda v in_f={i}": None for i in range(16)}  # 16 shapes of one colour
    assert len({tuple(sorted(plots._style(k, many).items())) for k in many}) == 16
    pycuda = {plots._style(k, lines)["color"] for k in lines if k.startswith("pycuda ")}
    assert len(pycuda) == 1  # one colour a backend and variant, the shapes dashed apart


def test_a_bandwidth_stage_keeps_its_lines_and_roofline() -> None:
    """weight_quantize counts flops, so its rows carry TOPS; bytes bound it, so its plot
    stays in GB/s against the copy peak (no datasheet rate is declared for it)."""
    rows = [r for r in read_checked(H200 / "weight_quantize.csv") if r["status"] == "ok"]
    assert any(r.get("tops") for r in rows) and not any(r.get("datasheet_tops") for r in rows)
    rate, peak, label = plots._rate(rows)
    assert rate == "gbps" and peak and label.startswith("copy peak ")
    lines = plots.series(rows, x_axis(rows), rate)
    assert lines and all("out_f" not in k for k in lines)  # x is out_f: not in the key
    assert all(p[2] is not None for pts in lines.values() for p in pts)


def test_the_peak_is_the_largest_any_row_names() -> None:
    rows = [{"datasheet_tops": "1979"}, {"datasheet_tops": ""}]  # a peer's row last
    assert plots._rate(rows)[:2] == ("tops", 1979.0)
    assert plots._rate([{"peak_gbps": ""}, {"peak_gbps": "4260"}])[:2] == ("gbps", 4260.0)


def test_a_row_without_a_rate_keeps_its_time() -> None:
    rows = [{"backend": "torch", "variant": "v", "in_f": "8", "out_f": "", "batch": "1",
             "median_us": "5.0", "gbps": ""}]
    assert plots.series(rows, "batch") == {"torch v in_f=8": [(1.0, 5.0, None)]}


def test_a_pipeline_gets_a_panel_per_shape() -> None:
    rows = [r for r in read_checked(H200 / "spike_linear.csv") if r["status"] == "ok"]
    assert plots.pipeline_shapes(rows) == [("3584", "3584"), ("3584", "18944"),
                                           ("18944", "3584")]


def test_a_pipeline_s_peer_is_a_line_of_its_own() -> None:
    """A peer's rows share the pipeline's variant: drawn as their own line (one line
    through both would zigzag between them), their total only."""
    def row(backend: str, batch: int, total: float) -> dict[str, str]:
        return {"backend": backend, "variant": "default", "batch": str(batch),
                "in_f": "64", "out_f": "32", "total_us": str(total), "gemm_us": ""}

    rows = [row("linear_bf16", 1, 30.0), row("pycuda", 1, 15.0),
            row("linear_bf16", 2, 31.0), row("pycuda", 2, 16.0)]
    lines = plots.pipeline_series(rows, "32", "64")
    assert {k: [p[1] for p in v] for k, v in lines.items()} == {
        "default: End to end (both streams joined)": [15.0, 16.0],
        "linear_bf16 (default): End to end (both streams joined)": [30.0, 31.0]}
    committed = [r for r in read_checked(H200 / "spike_linear.csv") if r["status"] == "ok"]
    assert {k.split(":")[0] for k in plots.pipeline_series(committed, "18944", "3584")} == {
        "default", "any", "packed"}


def test_plots_are_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
    for name in ("int_gemm.csv", "spike_linear.csv", "dynamic_spikes.csv"):
        shutil.copy(H200 / name, tmp_path)
    written = plots.plots(tmp_path)
    assert sorted(p.name for p in written) == ["dynamic_spikes.png", "int_gemm.png",
                                               "spike_linear.png"]
    assert all(p.stat().st_size > 10_000 for p in written)


def test_a_bad_cell_in_any_csv_draws_no_plot(tmp_path: Path) -> None:
    """Every CSV is checked before the first plot is drawn: a batch that is no number in
    the last CSV is one line, and no PNG (nor the --out folder) is left behind."""
    pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
    shutil.copy(H200 / "dynamic_spikes.csv", tmp_path)
    stage_csv.write(tmp_path / "z.csv", [stage_csv.stage_row("d", 5.0, batch="abc")])
    with pytest.raises(HarnessError, match=r"z.csv, line 2: batch is 'abc', not a positive"):
        plots.plots(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "plots").exists()
