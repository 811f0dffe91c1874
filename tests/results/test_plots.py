"""The plots' lines and panels, from the committed H200 CSVs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import pipeline_rows, plots
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


def test_the_peak_is_the_largest_of_several() -> None:
    assert plots._rate([{"peak_gbps": "4000"}, {"peak_gbps": "4260"}, {"peak_gbps": ""}]) == (
        "gbps", 4260.0, "copy peak 4260 GB/s")
    assert plots._rate([{"peak_gbps": ""}]) == ("gbps", None, "")


def test_a_pipeline_s_lines_run_by_batch_as_a_number() -> None:
    """Batches sorted as numbers (2 before 16); one variant's lines are named by their
    interval alone (cut to 40 characters), several variants' by variant and interval."""
    def row(variant: str, batch: int, total: float) -> dict[str, str]:
        return {"variant": variant, "batch": str(batch), "in_f": "64", "out_f": "",
                "total_us": str(total), "encoding_total_us": str(total / 2)}

    lines = plots.pipeline_series([row("d", 16, 20.0), row("d", 2, 10.0)], "", "64")
    enc = "Spike Bitwise Encoding - Total (host-side decision included)"[:40]
    assert lines == {"End to end (both streams joined)": [(2, 10.0), (16, 20.0)],
                     enc: [(2, 5.0), (16, 10.0)]}
    assert all(isinstance(x, int) for pts in lines.values() for x, _ in pts)
    two = plots.pipeline_series([row("d", 2, 10.0), row("e", 2, 12.0)], "", "64")
    assert sorted(two) == sorted(["d: End to end (both streams joined)", f"d: {enc}",
                                  "e: End to end (both streams joined)", f"e: {enc}"])


def test_the_colour_cycle_repeats_past_ten_backend_variants() -> None:
    lines = {f"b{i:02d} v in_f=8": None for i in range(12)}
    assert [plots._style(k, lines)["color"] for k in lines] == [
        *(f"C{i}" for i in range(10)), "C0", "C1"]


def test_each_panel_draws_its_own_column(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The left panel the medians, the right the rate of the rows that have one, with the
    peak's line only where a row names a peak, both against the batch on a log2 axis, the
    figure titled by the GPU and commit of the rows; a pipeline panel each interval against
    the batch, titled by its shape (in_f too where the shapes differ in it). A CSV without
    an ok row draws nothing, and no figure is left open."""
    pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
    import matplotlib.axes
    import matplotlib.figure
    import matplotlib.pyplot as plt

    from harness.results import files

    drawn: list[tuple[str, object, object]] = []
    spied = {matplotlib.axes.Axes: ("plot", "axhline", "set_title", "set_ylabel", "set_xlabel",
                                     "set_xscale", "set_yscale", "legend"),
             matplotlib.figure.Figure: ("suptitle",)}
    for cls, names in spied.items():
        for name in names:
            real = getattr(cls, name)

            def spy(self, *a, _real=real, _name=name, **kw):  # type: ignore[no-untyped-def]
                drawn.append((_name, [list(x) if isinstance(x, list) else x for x in a],
                              kw.get("label", kw.get("base"))))
                return _real(self, *a, **kw)

            monkeypatch.setattr(cls, name, spy)

    def calls(*names: str) -> list[tuple[str, object, object]]:
        return [d for d in drawn if d[0] in names]

    plt.close("all")  # what other tests left open is not this one's

    stage_csv.write(tmp_path / "s.csv", [
        stage_csv.stage_row("d", 5.0, batch="1", gbps="100", peak_gbps="4000", gpu="G1"),
        stage_csv.stage_row("d", 6.0, batch="2", gbps="", peak_gbps="4000", gpu="G1"),
        stage_csv.stage_row("d", 9.0, batch="2", status="failed", reason="x")])
    stage_csv.write(tmp_path / "none.csv", [
        stage_csv.stage_row("d", 9.0, batch="2", status="failed", reason="x")])
    assert [p.name for p in plots.plots(tmp_path, tmp_path / "a")] == ["s.png"]
    assert plt.get_fignums() == []
    assert calls("plot", "axhline") == [
        ("plot", [[1.0, 2.0], [5.0, 6.0]], "pycuda d in_f=64"),
        ("plot", [[1.0], [100.0]], "pycuda d in_f=64"),
        ("axhline", [4000.0], "copy peak 4000 GB/s")]
    assert calls("set_ylabel") == [("set_ylabel", ["median µs (cold L2)"], None),
                                   ("set_ylabel", ["GB/s (declared bytes / median)"], None)]
    assert calls("set_xlabel") == [("set_xlabel", ["batch"], None)] * 2
    assert calls("set_xscale", "set_yscale") == [("set_xscale", ["log"], 2),
                                                 ("set_xscale", ["log"], 2),
                                                 ("set_yscale", ["log"], None)]
    assert calls("suptitle") == [("suptitle", ["s on G1 (commit aaa)"], None)]
    assert len(calls("legend")) == 1  # the rate panel names every line and the peak
    drawn.clear()
    stage_csv.write(tmp_path / "s.csv", [stage_csv.stage_row("d", 5.0, batch="1")])
    plots.plots(tmp_path, tmp_path / "b")
    assert [d[0] for d in calls("plot", "axhline")] == ["plot", "plot"]  # no peak: no line
    for name in ("s.csv", "none.csv"):
        (tmp_path / name).unlink()
    drawn.clear()
    w = pipeline_rows.PipelineCsv(tmp_path, "p", summaries=False)
    for batch, in_f, t in ((1, 64, 10.0), (4, 64, 12.0), (1, 128, 20.0)):
        w.write({"stage": "p", "batch": batch, "in_f": in_f, "out_f": 32, "status": "ok",
                 "total_us": t, "total_noise_pct": 0.1, "kernel_hashes": "h"})
    w.close()
    plots.plots(tmp_path, tmp_path / "c")
    assert plt.get_fignums() == []
    assert calls("plot", "set_title") == [
        ("plot", [[1, 4], [10.0, 12.0]], "End to end (both streams joined)"),
        ("set_title", ["p, out_f=32, in_f=64"], None),
        ("plot", [[1], [20.0]], "End to end (both streams joined)"),
        ("set_title", ["p, out_f=32, in_f=128"], None)]
    assert calls("set_ylabel", "set_xlabel") == [("set_xlabel", ["batch"], None),
                                                 ("set_ylabel", ["median µs (cold L2)"],
                                                  None)] * 2
    assert calls("set_xscale", "set_yscale") == [("set_xscale", ["log"], 2),
                                                 ("set_yscale", ["log"], None)] * 2
    assert len(calls("legend")) == 2  # a legend a panel
    drawn.clear()
    w = pipeline_rows.PipelineCsv(tmp_path, "p", files.OVERWRITE, summaries=False)
    w.write({"stage": "p", "batch": 1, "in_f": 64, "out_f": 32, "status": "ok",
             "total_us": 10.0, "total_noise_pct": 0.1, "kernel_hashes": "h"})
    w.close()
    plots.plots(tmp_path, tmp_path / "d")
    assert calls("set_title") == [("set_title", ["p, out_f=32"], None)]  # one in_f: no in_f


def test_a_graph_launch_is_a_line_of_its_own() -> None:
    def row(launch: str, t: float) -> dict[str, str]:
        return {"backend": "pycuda", "variant": "d", "in_f": "8", "out_f": "", "batch": "1",
                "median_us": str(t), "gbps": "", "launch": launch}

    assert plots.series([row("stream", 5.0), row("graph", 4.0)], "batch") == {
        "pycuda d in_f=8": [(1.0, 5.0, None)], "pycuda d in_f=8 (graph)": [(1.0, 4.0, None)]}


def test_the_folders_own_plots_folder_does_not_lead_out_of_it(tmp_path: Path) -> None:
    """``FOLDER/plots`` a symlink to elsewhere: the PNGs would be written there, outside the
    results folder. Refused, nothing written; a symlink that stays inside is followed."""
    pytest.importorskip("matplotlib", reason="harness report draws its plots with matplotlib")
    src, away = tmp_path / "src", tmp_path / "away"
    src.mkdir()
    away.mkdir()
    shutil.copy(H200 / "dynamic_spikes.csv", src)
    (src / "plots").symlink_to(away)
    with pytest.raises(HarnessError, match=r"plots is a symlink leading out of .*src.*: not "
                                           r"following it; nothing was written"):
        plots.plots(src)
    assert list(away.iterdir()) == []
    (src / "plots").unlink()
    (src / "pngs").mkdir()
    (src / "plots").symlink_to(src / "pngs")
    assert [p.name for p in plots.plots(src)] == ["dynamic_spikes.png"]
    assert (src / "pngs" / "dynamic_spikes.png").is_file()
