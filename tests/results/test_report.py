"""Plots and the results table from the committed H200 CSVs."""

from __future__ import annotations

import csv
import importlib
import re
import shutil
from pathlib import Path

import pytest

from harness.errors import BadInput, HarnessError
from harness.results import report
from harness.results.rows import ungated_note
from tests.results import stage_csv


#: The tests that draw: skipped, with the reason, where matplotlib is not installed (the
#: tables, the README block and the peer ratios are tested without it).
def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


draws = pytest.mark.skipif(not _importable("matplotlib"),
                           reason="harness report draws its plots with matplotlib")
H200 = Path(__file__).parents[2] / "statistics" / "h200"


@draws
def test_plots_and_table(tmp_path: Path) -> None:
    for p in H200.glob("*.csv"):
        shutil.copy(p, tmp_path)
    written = report.plots(tmp_path)
    names = {p.name for p in written}
    assert {"dynamic_spikes.png", "spike_quant_gemm.png", "activation_path.png"} <= names
    assert all(p.stat().st_size > 10_000 for p in written)
    table = report.table(tmp_path)
    assert table.startswith("| stage | backend |")
    assert "| dynamic_spikes | pycuda | default | batch=16384 in_f=3584 | stream |" in table
    fused = report.table(tmp_path, [1, 65536], None, ["activation_fused", "weight_quant_fused"])
    lines = fused.splitlines()[2:]
    assert lines and all(ln.startswith(("| activation_fused", "| weight_quant_fused"))
                         for ln in lines)
    assert any("| graph |" in ln for ln in lines)  # --graph rows say so
    # a peer that ran but got the answer wrong keeps its time, marked failed
    assert any(ln.endswith("| failed |") and "torch_compile" in ln for ln in lines)


def test_pipeline_table(tmp_path: Path) -> None:
    for p in H200.glob("*.csv"):
        shutil.copy(p, tmp_path)
    text = report.tables(tmp_path, [65536], None, ["activation_path"])
    head, *rows = text.splitlines()[2:] and text.splitlines()
    assert head.startswith("| pipeline | backend | variant |") and "| stage |" not in text
    body = rows[1:]
    assert {ln.split(" | ")[2] for ln in body} == {"staged", "fused"}
    assert {ln.split(" | ")[1] for ln in body} == {"pycuda"}
    staged = next(ln for ln in body if " staged " in ln)
    assert "dynamic_spikes " in staged and "encoding_kernels " in staged  # its intervals
    both = report.tables(tmp_path, [65536], None, ["activation_fused", "activation_path"])
    assert "| stage |" in both and "| pipeline |" in both


def test_readme_block_is_replaced(tmp_path: Path) -> None:
    r = tmp_path / "README.md"
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    r.write_text(f"head\n{begin}\nold\n{end}\n<!-- b:begin -->\nx\n<!-- b:end -->\n")
    report.update_readme(r, "new")
    report.update_readme(r, "y", "b")
    assert r.read_text() == f"head\n{begin}\nnew\n{end}\n<!-- b:begin -->\ny\n<!-- b:end -->\n"
    r.write_text("no markers")
    with pytest.raises(HarnessError, match="no <!-- results:begin -->"):
        report.update_readme(r, "x")


def test_readme_block_keeps_crlf_line_endings(tmp_path: Path) -> None:
    """A README written with CRLF endings keeps them, the new block's lines too."""
    r = tmp_path / "README.md"
    r.write_bytes(b"head\r\n<!-- results:begin -->\r\nold\r\n<!-- results:end -->\r\ntail\r\n")
    report.update_readme(r, "| a |\n| - |")
    assert r.read_bytes() == (b"head\r\n<!-- results:begin -->\r\n| a |\r\n| - |\r\n"
                              b"<!-- results:end -->\r\ntail\r\n")


def test_readme_markers_out_of_order_are_one_line(tmp_path: Path) -> None:
    """An end marker before the begin marker: said before any plot is drawn."""
    r = tmp_path / "README.md"
    r.write_text("a\n<!-- results:end -->\nb\n<!-- results:begin -->\n")
    with pytest.raises(HarnessError, match="markers are out of order"):
        report.update_readme(r, "x")
    src = _two_stages(tmp_path / "src")
    with pytest.raises(HarnessError, match=r"<!-- results:end --> comes before <!-- "):
        report.build(src, readme=r, out=tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (src / "plots").exists()


@draws
def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="no such folder"):
        report.plots(tmp_path / "none")


@draws
def test_build_draws_tables_and_fills_the_readme(tmp_path: Path) -> None:
    for p in H200.glob("*.csv"):
        shutil.copy(p, tmp_path)
    r = tmp_path / "README.md"
    r.write_text("a\n<!-- results:begin -->\n<!-- results:end -->\n")
    rep = report.build(tmp_path, readme=r)
    assert rep.plots and rep.readme == r and rep.text == report.table(tmp_path)
    assert rep.text in r.read_text()
    every = report.build(tmp_path, [16384], 0, ["weight_quantize"])
    assert {ln.split(" | ")[3] for ln in every.text.splitlines()[2:]} > {
        "out_f=18944 in_f=3584"}  # out_f 0: every weight row, not only 18944


def _two_stages(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    for name in ("dynamic_spikes.csv", "weight_quantize.csv"):
        shutil.copy(H200 / name, folder)
    return folder


@draws
def test_out_takes_the_plots_and_the_table(tmp_path: Path) -> None:
    src, dest = _two_stages(tmp_path / "src"), tmp_path / "out" / "new"
    rep = report.build(src, out=dest)
    assert sorted(p.name for p in rep.plots) == ["dynamic_spikes.png", "weight_quantize.png"]
    assert all(p.parent == dest for p in rep.plots) and not (src / "plots").exists()
    assert rep.table_path == dest / report.TABLE_FILE
    assert (dest / "results.md").read_text() == rep.text + "\n"
    assert "| dynamic_spikes | pycuda | default | batch=16384 in_f=3584 |" in rep.text
    assert rep.empty is None
    plain = report.build(src)  # no --out: plots under <folder>/plots/, no table file
    assert plain.table_path is None and all(p.parent == src / "plots" for p in plain.plots)
    (tmp_path / "file").write_text("x")
    with pytest.raises(HarnessError, match=r"--out .*file is a file: it takes a folder"):
        report.build(src, out=tmp_path / "file")


@draws
def test_the_calibration_records_go_with_the_table_not_into_the_readme(tmp_path: Path) -> None:
    """A folder's calibration records: printed and written to results.md after the table,
    never into a README's block (whose rows they are not)."""
    src = _two_stages(tmp_path / "src")
    shutil.copy(H200 / "calibration.json", src)
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- results:begin -->\n<!-- results:end -->\n")
    rep = report.build(src, readme=readme, out=tmp_path / "out")
    assert rep.ceilings.splitlines()[2].startswith("| calibration.json | copy of 2147.5 MB |")
    assert (tmp_path / "out" / "results.md").read_text() == f"{rep.text}\n\n{rep.ceilings}\n"
    assert "calibration.json" not in readme.read_text()
    assert report.build(_two_stages(tmp_path / "bare")).ceilings == ""


@draws
def test_an_empty_table_says_which_points_the_folder_has(tmp_path: Path) -> None:
    src = _two_stages(tmp_path / "src")
    rep = report.build(src, [3], 5)
    assert len(rep.text.splitlines()) == 2  # the header alone
    assert rep.empty is not None
    assert rep.empty.startswith("the table is empty: no row at batch 3 (weight stages: "
                                "out_f 5)")
    assert "dynamic_spikes: batch 1, 1024, 16384, 65536 at in_f 3584" in rep.empty
    assert "weight_quantize: out_f 3584, 18944 at in_f 3584" in rep.empty
    none = report.build(src, stages=["nope"])
    assert none.empty == f"the table is empty: {src} has no stage or pipeline CSV of nope"
    bare = tmp_path / "bare"
    bare.mkdir()
    assert report.build(bare).empty == f"the table is empty: {bare} has no stage or " \
                                       "pipeline CSV"


@draws
def test_an_empty_table_leaves_the_readme_as_it_was(tmp_path: Path) -> None:
    """--readme with a table of no row is one line and the block keeps its rows; a README
    with the block's markers twice is refused (which one is meant cannot be told)."""
    src = _two_stages(tmp_path / "src")
    r = tmp_path / "README.md"
    r.write_text("head\n<!-- results:begin -->\n| old rows |\n<!-- results:end -->\n")
    before = r.read_text()
    with pytest.raises(HarnessError, match=r"the table is empty: no row at batch 3 .*"
                                           r"README\.md's results block is left as it was"):
        report.build(src, [3], 5, readme=r)
    assert r.read_text() == before
    r.write_text(before + before)
    with pytest.raises(HarnessError, match="has the results block's markers more than once"):
        report.build(src, readme=r)


@draws
@pytest.mark.parametrize(("noise", "text"), [
    ("abc", "noise_pct is 'abc', not a number"),
    ("-1", "noise_pct is -1; it must be a non-negative number"),  # as compare and best say
])
def test_a_bad_noise_writes_nothing(tmp_path: Path, noise: str, text: str) -> None:
    """The table reads each row's noise: a cell that is no number, or below 0, is one line
    naming file, line and column, before a plot or the table is written."""
    src, dest = _two_stages(tmp_path / "src"), tmp_path / "out"
    with (src / "weight_quantize.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows[-1]["noise_pct"] = noise
    stage_csv.write(src / "weight_quantize.csv", rows)
    with pytest.raises(HarnessError,
                       match=re.escape(f"weight_quantize.csv, line {len(rows) + 1}: {text}")):
        report.build(src, out=dest)
    assert not dest.exists() and not (src / "plots").exists()


def test_an_unknown_stage_is_bad_input_a_known_one_without_a_csv_is_not(
        tmp_path: Path) -> None:
    src = _two_stages(tmp_path / "src")
    with pytest.raises(BadInput, match="unknown stage 'bogus': no stage or pipeline of the "
                                       "harness, and no CSV in"):
        report.check_stages([src], ["dynamic_spikes", "bogus"], {"dynamic_spikes"})
    report.check_stages([src], ["weight_quantize"], set())  # a CSV of it: its rows show
    report.check_stages([src], ["spike_encode"], {"spike_encode"})  # known: the table says
    with pytest.raises(HarnessError, match="no such folder"):
        report.check_stages([src, tmp_path / "none"], ["dynamic_spikes"], set())


def test_points_of_a_pipeline_and_long_lists(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(H200 / "activation_path.csv", src)
    assert report.points(src) == []  # pipelines count only when named
    (line,) = report.points(src, ["activation_path"])
    assert line == "activation_path: batch 1, 8, 64, 1024, 16384, 65536 at in_f 3584"
    assert report._values({str(2**i) for i in range(10)}) == "1, 2, 4, ..., 512 (10 values)"


def test_gemm_rows_show_their_tops_and_older_csvs_still_count(tmp_path: Path) -> None:
    """A CSV written before the compute columns is still a stage CSV (its rows show '-');
    the table gains a TOPS column only where a row shown has TOPS."""
    import csv

    before = Path(__file__).parents[1] / "fixtures" / "results" / "int_gemm_before_tops.csv"
    shutil.copy(H200 / "dynamic_spikes.csv", tmp_path)
    with before.open(newline="") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0])
    assert "tops" not in header
    shutil.copy(before, tmp_path / "int_gemm.csv")
    old = report.table(tmp_path, [8192, 16384], 0)
    assert "| int_gemm | pycuda |" in old and "TOPS" not in old  # no row has TOPS yet
    for r in rows:
        r.update(tops="812.4", pct_datasheet_tops="41.05", datasheet_tops="1979") \
            if r["backend"] == "pycuda" else r.update(tops="100.2")
    with (tmp_path / "int_gemm.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*header, "tops", "pct_datasheet_tops",
                                          "datasheet_tops"], restval="")
        w.writeheader()
        w.writerows(rows)
    text = report.table(tmp_path, [8192, 16384], 0)
    head, _, *body = text.splitlines()
    assert "| % of peak | TOPS (% of datasheet) | vs best peer |" in head
    assert all(ln.count("|") == head.count("|") for ln in body)
    ours = [ln for ln in body if ln.startswith("| int_gemm | pycuda |")]
    assert ours and all("| 812 (41.0 %) |" in ln for ln in ours)
    assert any(ln.startswith("| int_gemm | torch |") and "| 100 |" in ln for ln in body)
    col = head.split(" | ").index("TOPS (% of datasheet)")
    spikes = [ln for ln in body if ln.startswith("| dynamic_spikes |")]
    assert spikes and all(ln.split(" | ")[col] == "-" for ln in spikes)


def test_several_folders_put_the_gpu_models_side_by_side(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``harness report A B``: one median column a model, named by the rows' ``gpu``; a
    point one model lacks is ``-``; one folder per model."""
    import csv

    from typer.testing import CliRunner

    from harness.front.cli import app

    src = Path(__file__).parents[2] / "statistics" / "h200" / "dynamic_spikes.csv"
    rows = list(csv.DictReader(src.open(newline="")))
    for name, gpu, factor, keep in (("h200", "NVIDIA H200", 1.0, rows),
                                    ("h100", "NVIDIA H100 80GB HBM3", 1.5, rows[1:])):
        (tmp_path / name).mkdir()
        with (tmp_path / name / "dynamic_spikes.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            for r in keep:
                w.writerow({**r, "gpu": gpu, **{c: repr(float(r[c]) * factor) if r[c] else ""
                                                 for c in ("median_us", "p10_us", "p90_us")}})
    res = CliRunner().invoke(app, ["report", str(tmp_path / "h200"), str(tmp_path / "h100"),
                                   "--batch", "1", "--batch", "16384"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == ("| stage | backend | variant | point | NVIDIA H200 µs | "
                        "NVIDIA H100 80GB HBM3 µs |")
    body = [ln for ln in lines[2:] if ln.startswith("| dynamic_spikes")]
    ok = [r for r in rows if r["status"] == "ok" and r["batch"] in ("1", "16384")]
    assert len(body) == len(ok)
    first = ok[0]
    want_b = "-" if first is rows[0] else f"{float(first['median_us']) * 1.5:.2f}"
    assert body[0].endswith(f"| {float(first['median_us']):.2f} | {want_b} |")
    same = CliRunner().invoke(app, ["report", str(tmp_path / "h200"), str(tmp_path / "h200")])
    assert same.exit_code == 2 and "already a column" in same.output


def _run_row(backend: str, total: float, batch: int = 16, command: str = "bench a",
             status: str = "ok") -> dict[str, str]:
    return {"stage": "spike_linear", "backend": backend, "variant": "default",
            "batch": str(batch), "in_f": "64", "out_f": "32", "mode": "unidirectional",
            "params": "{}", "family": "normal", "l2": "cold", "git_sha": "abc",
            "command": command, "status": status, "total_us": str(total),
            "total_noise_pct": "0.5", "samples": "20"}


def test_peer_ratios_pair_each_row_with_the_peers_written_just_before_it() -> None:
    rows = [_run_row("linear_bf16", 30.0), _run_row("linear_fp32", 90.0),
            _run_row("pycuda", 15.0),                                   # 2: both peers
            _run_row("pycuda", 10.0),                                   # 3: peers used up
            _run_row("linear_bf16", 40.0, batch=32), _run_row("pycuda", 20.0, batch=32),
            _run_row("linear_bf16", 8.0, command="bench b"),            # another command
            _run_row("pycuda", 16.0),                                   # 7: not its peer
            _run_row("linear_bf16", 5.0, status="failed"), _run_row("pycuda", 4.0)]
    got = report.peer_ratios(rows)
    assert got == {2: {"linear_bf16": (2.0, ""), "linear_fp32": (6.0, "")},
                   5: {"linear_bf16": (2.0, "")}}
    # A failed row of ours takes its peers with it: the next run's row is not set against
    # them.
    stale = [_run_row("linear_bf16", 30.0), _run_row("pycuda", 15.0, status="failed"),
             _run_row("pycuda", 10.0)]
    assert report.peer_ratios(stale) == {}
    # A peer's failed row in the later run: the earlier run's peer total is not used.
    failed_peer = [_run_row("linear_bf16", 30.0), _run_row("linear_bf16", 1.0, status="failed"),
                   _run_row("pycuda", 10.0)]
    assert report.peer_ratios(failed_peer) == {}


def test_pipeline_table_shows_the_peers_beside_our_row(tmp_path: Path) -> None:
    rows = [_run_row("linear_bf16", 30.0), _run_row("pycuda", 15.0)]
    _pipeline_csv(tmp_path, rows)
    body = report.pipeline_table(tmp_path, ["spike_linear"], [16]).splitlines()[2:]
    assert body[0].startswith("| spike_linear | linear_bf16 | default |")
    assert body[0].endswith("| 30.0 | 0.50 % | - | - | ok |")
    assert body[1].startswith("| spike_linear | pycuda | default |")
    assert body[1].endswith("| linear_bf16 2.00x | ok |")


def test_a_ratio_over_a_peer_whose_time_can_hold_host_time_says_so(tmp_path: Path) -> None:
    """The activation path's peers read T back to the host inside their call: their rows
    say so, and a ratio over such a time is marked where it is shown, not only on the peer's
    own row."""
    peer = {**_run_row("torch", 300.0), "reason": ungated_note(40, 40)}
    rows = [peer, _run_row("torch_compile", 60.0), _run_row("pycuda", 15.0)]
    assert report.peer_ratios(rows) == {
        2: {"torch": (20.0, "40 of 40 samples timed without the gate"),
            "torch_compile": (4.0, "")}}
    _pipeline_csv(tmp_path, rows)
    body = report.pipeline_table(tmp_path, ["spike_linear"], [16]).splitlines()[2:]
    assert body[0].endswith("| ok (host time can be inside) |")
    assert body[2].endswith("| torch 20.00x (its time can hold host time), "
                            "torch_compile 4.00x | ok |")


def test_a_csv_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """A spreadsheet's UTF-8 BOM before the header: the file is a results CSV still (as
    compare reads it), not left out of the table in silence."""
    src = _two_stages(tmp_path / "src")
    p = src / "dynamic_spikes.csv"
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    assert "| dynamic_spikes | pycuda | default | batch=16384" in report.table(src)


def test_a_readme_needs_both_markers_once(tmp_path: Path) -> None:
    r = tmp_path / "README.md"
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    for text in (f"a\n{begin}\nb\n", f"a\n{end}\nb\n"):
        r.write_text(text)
        with pytest.raises(HarnessError, match=f"has no {begin} ... {end} block"):
            report.update_readme(r, "x")
        assert r.read_text() == text
    for text in (f"{begin}\n{end}\n{begin}\n{end}\n", f"{begin}\n{end}\n{end}\n",
                 f"{begin}\n{begin}\n{end}\n"):
        r.write_text(text)
        with pytest.raises(HarnessError, match="has the results block's markers more than "
                                               "once"):
            report.check_readme(r)


def test_tops_read_in_whole_numbers_from_100_and_in_three_figures_below() -> None:
    def tops(v: str, pct: str = "") -> str:
        return report._tops({"tops": v, "pct_datasheet_tops": pct})

    assert tops("1979.4", "41.05") == "1979 (41.0 %)"
    assert tops("812.4") == "812" and tops("99.5") == "99.5" and tops("0.0112") == "0.0112"
    assert tops("") == "-"


def test_the_table_s_rule_has_a_cell_a_column(tmp_path: Path) -> None:
    """The header's rule line has as many cells as the header, with the TOPS column too."""
    for tops in ("", "812.4"):
        folder = tmp_path / (tops or "none")
        folder.mkdir()
        stage_csv.write(folder / "s.csv", [stage_csv.stage_row("d", 5.0, batch="16384",
                                                               tops=tops)])
        head, rule, row = report.table(folder).splitlines()
        assert head.count("|") == rule.count("|") == row.count("|"), (head, rule)
        assert set(rule) == {"|", "-"}


def test_a_row_of_ours_with_no_time_takes_no_peer_ratio() -> None:
    """Only an ok row with a positive total is set against its peers (nothing to divide by
    otherwise); a peer's zero total is no time to set either."""
    rows = [_run_row("linear_bf16", 30.0), _run_row("pycuda", 0.0),
            _run_row("linear_bf16", 0.0), _run_row("pycuda", 10.0)]
    assert report.peer_ratios(rows) == {}
    short = [_run_row("linear_bf16", 0.9), _run_row("pycuda", 0.45)]  # under 1 µs: a time
    assert report.peer_ratios(short) == {1: {"linear_bf16": (2.0, "")}}


def _pipeline_csv(folder: Path, rows: list[dict[str, str]]) -> None:
    cols = [*rows[0], "in_f", "planes", "intervals", "kernel_hashes"]
    with (folder / "spike_linear.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(cols)), restval="")
        w.writeheader()
        w.writerows(rows)


def test_a_pipeline_row_in_the_table_whole(tmp_path: Path) -> None:
    """Only the batches asked; the point with its out_f (none where the row has none); its
    own intervals; each peer's total over ours."""
    rows = [_run_row("linear_bf16", 25.0), _run_row("pycuda", 10.0),
            _run_row("pycuda", 12.0, batch=32)]
    rows[1]["intervals"] = '{"gemm": {"median_us": 6}, "activation": {"median_us": 3.5}}'
    rows[1]["planes"] = "4"
    _pipeline_csv(tmp_path, rows)
    body = report.pipeline_table(tmp_path, ["spike_linear"], [16]).splitlines()[2:]
    assert body == [
        "| spike_linear | linear_bf16 | default | batch=16 in_f=64 out_f=32 | - | 25.0 | "
        "0.50 % | - | - | ok |",
        "| spike_linear | pycuda | default | batch=16 in_f=64 out_f=32 | 4 | 10.0 | 0.50 % | "
        "activation 3.5, gemm 6.0 | linear_bf16 2.50x | ok |"]
    _pipeline_csv(tmp_path, [{**_run_row("pycuda", 12.0), "out_f": ""}])
    (line,) = report.pipeline_table(tmp_path, ["spike_linear"], [16]).splitlines()[2:]
    assert "| batch=16 in_f=64 | - | 12.0 |" in line


def test_a_stage_row_without_a_rate_shows_a_dash(tmp_path: Path) -> None:
    stage_csv.write(tmp_path / "s.csv", [
        stage_csv.stage_row("d", 5.0, batch="16384", gbps="1234.4", pct_peak="56.78"),
        stage_csv.stage_row("e", 6.0, batch="16384")])
    _, _, d, e = report.table(tmp_path).splitlines()
    assert d.endswith("| 5.00 | 0.10 % | 1234 | 56.8 | - | ok |")
    assert e.endswith("| 6.00 | 0.10 % | - | - | - | ok |")


@draws
def test_a_table_of_one_row_is_kept_and_two_empty_ones_are_one_header(tmp_path: Path) -> None:
    """tables(): a table with one row is a table (the other, empty, left out); with no row
    in either, the stage table's header alone; build() calls one row no empty table."""
    stage_csv.write(tmp_path / "s.csv", [stage_csv.stage_row("d", 5.0, batch="16384")])
    _pipeline_csv(tmp_path, [_run_row("pycuda", 12.0)])
    text = report.tables(tmp_path, [16384], None, ["s", "spike_linear"])
    assert text.splitlines()[0].startswith("| stage |") and len(text.splitlines()) == 3
    both = report.tables(tmp_path, [16384, 16], None, ["s", "spike_linear"]).split("\n\n")
    assert [len(t.splitlines()) for t in both] == [3, 3]
    none = report.tables(tmp_path, [7], None, ["s", "spike_linear"])
    assert none == report.table(tmp_path, [7], None, ["s", "spike_linear"])
    assert report.build(tmp_path, [16384], out=tmp_path / "out").empty is None


def test_the_points_a_folder_has(tmp_path: Path) -> None:
    """Six values are listed, seven shortened; a CSV whose rows have no time says so."""
    assert report._values({"1", "2", "4", "8", "16", "32"}) == "1, 2, 4, 8, 16, 32"
    assert report._values({str(2**i) for i in range(7)}) == "1, 2, 4, ..., 64 (7 values)"
    stage_csv.write(tmp_path / "f.csv", [stage_csv.stage_row(
        "d", 1.0, status="failed", reason="x", median_us="", p10_us="", p90_us="")])
    stage_csv.write(tmp_path / "s.csv", [stage_csv.stage_row("d", 1.0, batch="4")])
    assert report.points(tmp_path) == ["f: no row with a time", "s: batch 4 at in_f 64"]


GATE = ("20 of 20 samples timed without the gate (the work synchronises inside its launch): "
        "host time can be inside")


def test_a_time_that_can_hold_host_time_is_marked_in_the_table(tmp_path: Path) -> None:
    """statistics/h200's activation_fused torch row at batch 16384 (4095.74 µs, every sample
    timed without the gate) stood in the README's table as a plain ``ok``, and our 21.22x
    over it too: the status cell says what the reason says of the time."""
    stage_csv.write(tmp_path / "s.csv", [
        stage_csv.stage_row("d", 4095.74, batch="16384", backend="torch", reason=GATE),
        stage_csv.stage_row("d", 193.04, batch="16384", speedup_vs_best_peer="21.2171",
                            reason="vs best peer: torch's time can hold host time (20 of 20 "
                                   "samples timed without the gate)"),
        stage_csv.stage_row("d", 60.0, batch="16384", backend="torch_compile",
                            status="failed", reason="q: FAILED (abs error 1); " + GATE),
        stage_csv.stage_row("e", 6.0, batch="16384", reason="noise above target when the "
                            "budget ended")])
    _, _, peer, ours, failed, plain = report.table(tmp_path).splitlines()
    assert peer.endswith("| 4095.74 | 0.10 % | - | - | - | ok (host time can be inside) |")
    assert ours.endswith("| 21.22x | ok (its best peer's time can hold host time) |")
    assert failed.endswith("| failed (host time can be inside) |")
    assert plain.endswith("| ok |")  # its noise column says it did not converge
    _pipeline_csv(tmp_path, [{**_run_row("linear_bf16", 25.0), "reason": GATE},
                             _run_row("pycuda", 10.0)])
    body = report.pipeline_table(tmp_path, ["spike_linear"], [16]).splitlines()[2:]
    assert body[0].endswith("| ok (host time can be inside) |") and body[1].endswith("| ok |")


def test_a_row_not_timed_cold_says_its_l2_in_the_point() -> None:
    assert report._l2({"l2": "drained"}) == " l2=drained"
    assert report._l2({"l2": "hot"}) == " l2=hot"
    assert report._l2({"l2": "cold"}) == "" and report._l2({}) == ""
