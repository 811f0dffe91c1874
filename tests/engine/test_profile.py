"""`harness profile`'s rows: the point's join columns and the run's provenance (recorded
ncu output, no GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine import profile
from harness.errors import BadInput, HarnessError
from harness.results import provenance
from harness.results import rows as results
from harness.results.rows import CsvWriter
from harness.tools import ncu

RAW = Path(__file__).parents[1] / "fixtures" / "ncu" / "dynamic_spikes_raw.txt"


@pytest.fixture
def recorded(monkeypatch):  # type: ignore[no-untyped-def]
    from harness.backends.pycuda import context

    monkeypatch.setattr(context, "smi_query", lambda index, field: "NVIDIA H200")
    monkeypatch.setattr(profile, "sm_count", lambda device: 132)
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    cmds: list[list[str]] = []

    def run(cmd):  # type: ignore[no-untyped-def]
        cmds.append(cmd)
        return ncu.parse_raw_csv(RAW.read_text())

    monkeypatch.setattr(ncu, "run", run)
    return cmds


def test_rows_carry_the_join_columns_and_the_provenance(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    prof = profile.profile(reg, "dynamic_spikes", options={"batch": "16384"}, out_dir=tmp_path)
    assert prof.path == tmp_path / "dynamic_spikes.csv"
    assert prof.rows and all(set(r) == set(profile.COLUMNS) for r in prof.rows)
    assert all(r["gpu"] == "NVIDIA H200" and r["batch"] == 16384 and r["backend"] == "pycuda"
               and r["in_f"] == 3584 and r["family"] == "normal"
               and r["git_sha"] == provenance.git_sha() and r["timestamp"] and r["command"]
               for r in prof.rows)
    assert [r["kernel"] for r in results.read_rows(prof.path)] == \
        [r["kernel"] for r in prof.rows]
    import json

    cmd = recorded[0]  # ncu watched the launch of the profiled point
    assert "dynamic_spikes" in cmd
    assert json.loads(cmd[cmd.index("--point") + 1])["batch"] == 16384


def test_bad_requests_are_refused_before_ncu_runs(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match="unknown input family 'zipf'"):
        profile.profile(reg, "dynamic_spikes", family="zipf", out_dir=tmp_path)
    with pytest.raises(BadInput, match="takes one point"):
        profile.profile(reg, "dynamic_spikes", sweep=["batch=1,2"], out_dir=tmp_path)
    assert recorded == []


def test_asked_for_metrics_join_the_defaults_and_are_stored(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``--metrics`` adds to the defaults (every row keeps its columns) and what it adds is
    stored, by name, in the ``metrics`` column."""
    import json

    extra = "sm__inst_executed_pipe_tensor_op_imma.avg.pct_of_peak_sustained_active"
    prof = profile.profile(reg, "dynamic_spikes", metrics=[extra], out_dir=tmp_path)
    asked = recorded[0][recorded[0].index("--metrics") + 1].split(",")
    assert asked == [*ncu.DEFAULT_METRICS, extra]
    stored = results.read_rows(prof.path)
    assert stored and all(extra in json.loads(r["metrics"]) for r in stored)
    assert prof.unstored == ()


def test_a_file_of_the_earlier_columns_is_added_to_in_them(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A committed CSV from before the L2, tensor-pipe and metrics columns stays readable:
    new rows go in its own columns, and what has no column is named as printed only."""
    import csv

    path = tmp_path / "dynamic_spikes.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerow(profile.EARLIER)
    prof = profile.profile(reg, "dynamic_spikes", out_dir=tmp_path)
    with path.open(newline="") as f:
        lines = list(csv.reader(f))
    assert tuple(lines[0]) == profile.EARLIER and len(lines) == 1 + len(prof.rows)
    assert prof.unstored == ()  # the recorded ncu output has no L2 or tensor-pipe values


def test_what_an_earlier_file_has_no_column_for_is_named(reg, recorded, monkeypatch,  # type: ignore[no-untyped-def]
                                                          tmp_path) -> None:
    """A profile with the L2's and the tensor pipe's figures, added to a file of the earlier
    columns: those two are printed, not stored, and named as such."""
    import csv

    path = tmp_path / "dynamic_spikes.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerow(profile.EARLIER)
    values = {"gpu__time_duration.sum": "810",
              "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": "41.5",
              "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "0"}
    monkeypatch.setattr(ncu, "run", lambda cmd: [ncu.KernelProfile("k", values, {})])
    prof = profile.profile(reg, "dynamic_spikes", out_dir=tmp_path)
    assert prof.unstored == ("l2_pct_of_peak", "tensor_pct_of_peak")
    assert prof.rows[0]["l2_pct_of_peak"] == 41.5


def test_define_profiles_that_build_and_names_it(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``--define`` reaches the child ncu watches (it compiles that build), and the rows name
    the build as bench's tuning rows do, not as the declared variant."""
    prof = profile.profile(reg, "dynamic_spikes", options={"batch": "64"}, out_dir=tmp_path,
                           defines=["BLOCK=128"])
    assert {r["variant"] for r in prof.rows} == {"default[BLOCK=128]"}
    cmd = recorded[0]
    assert cmd[cmd.index("--variant") + 1] == "default"
    assert cmd[cmd.index("--define") + 1] == "BLOCK=128"
    with pytest.raises(BadInput, match="one value here"):
        profile.profile(reg, "dynamic_spikes", out_dir=tmp_path, defines=["BLOCK=128,256"])
    assert len(recorded) == 1


@pytest.mark.parametrize(("stage", "tensor", "noted"), [
    ("int_gemm", "0", True),        # a tensor-core stage whose MMAs did not run
    ("int_gemm", "42.3", False),
    ("dynamic_spikes", "0", False),  # no tensor-core arithmetic: 0 % is what it should be
])
def test_an_idle_tensor_pipe_in_a_tensor_core_stage_is_noted(  # type: ignore[no-untyped-def]
        reg, recorded, monkeypatch, tmp_path, stage, tensor, noted) -> None:
    metric = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
    monkeypatch.setattr(ncu, "run", lambda cmd: [ncu.KernelProfile(
        "k", {metric: tensor, "gpu__time_duration.sum": "810"}, {metric: "%"})])
    prof = profile.profile(reg, stage, options={"batch": "64"}, out_dir=tmp_path)
    assert prof.rows[0]["tensor_pct_of_peak"] == float(tensor)
    assert bool(prof.notes) is noted
    if noted:
        assert prof.notes[0].startswith("int_gemm int8: the tensor pipe was idle (0 %)")
        assert "\n" not in prof.notes[0]


def test_the_launches_are_predicted_for_the_devices_sm_count(reg, recorded, monkeypatch,  # type: ignore[no-untyped-def]
                                                              tmp_path) -> None:
    """The ncu command counts the kernels the device launches: activation_fused at batch
    2000 is act_grid on 132 SMs, the two passes on 114 (the SM count of the device asked)."""
    asked = []
    monkeypatch.setattr(profile, "sm_count", lambda device: asked.append(device) or 114)
    profile.profile(reg, "activation_fused", options={"batch": "2000"}, device=0,
                    out_dir=tmp_path)
    cmd = recorded[-1]
    assert asked == [0]
    assert cmd[cmd.index("-k") + 1] == "regex:^(act_stats|act_encode)$"


def test_a_set_s_every_metric_is_kept_beside_the_rows(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``--set`` asks ncu for hundreds of metrics: the rows keep the headline columns, and
    the whole table (a column a metric, its units, a row a kernel) goes to a file named by
    the rows' timestamp, never over an earlier one."""
    import csv

    first = profile.profile(reg, "dynamic_spikes", section_set="full", out_dir=tmp_path)
    assert "--set" in recorded[0] and recorded[0][recorded[0].index("--set") + 1] == "full"
    stamp = first.rows[0]["timestamp"].replace(":", "").replace("-", "")
    assert first.table == tmp_path / "dynamic_spikes.full" / f"{stamp}.csv"
    table = list(csv.reader(first.table.open()))
    raw = ncu.parse_raw_csv(RAW.read_text())
    assert len(table) == 2 + len(raw) == 2 + len(first.rows)
    header, units = table[0], dict(zip(table[0], table[1], strict=True))
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed" in header
    assert units["gpu__time_duration.sum"] == raw[0].units["gpu__time_duration.sum"]
    assert [r[header.index("Kernel Name")] for r in table[2:]] == [p.kernel for p in raw]
    again = profile.write_table(first.table.parent, first.rows[0]["timestamp"], raw)
    assert again != first.table and list(csv.reader(again.open())) == table
    assert profile.profile(reg, "dynamic_spikes", out_dir=tmp_path).table is None


def _stall_fakes(monkeypatch, page_text: str, writes: bool = True):  # type: ignore[no-untyped-def]
    """ncu faked for ``stalls``: the profiling run writes a report file (unless not
    ``writes``: ncu matched no kernel); reading it back gives the recorded raw table and
    ``page_text`` as the source page. Returns the command lines the profiling run was
    given, and the results files closed, in order."""
    from harness.backends.pycuda import context
    from harness.tools import ncu_source

    monkeypatch.setattr(context, "smi_query", lambda index, field: "NVIDIA H200")
    monkeypatch.setattr(profile, "sm_count", lambda device: 132)
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    seen: list[list[str]] = []
    closed: list[Path] = []

    def collect(cmd):  # type: ignore[no-untyped-def]
        seen.append(cmd)
        if writes:
            Path(cmd[cmd.index("-o") + 1]).write_bytes(b"report")

    def read_report(report):  # type: ignore[no-untyped-def]
        if not report.exists():
            raise HarnessError("ncu printed no profile table (no kernel matched, or it failed)")
        assert report.read_bytes() == b"report"  # the scratch folder lives while it is read
        return (ncu.parse_raw_csv(RAW.read_text()), ncu_source.parse_source_csv(page_text),
                page_text)

    closing = CsvWriter.close

    def close(self):  # type: ignore[no-untyped-def]
        closed.append(self.path)
        closing(self)

    monkeypatch.setattr(CsvWriter, "close", close)

    monkeypatch.setattr(ncu, "collect", collect)
    monkeypatch.setattr(ncu, "read_report", read_report)
    monkeypatch.setattr(ncu, "run", lambda cmd: pytest.fail("the table comes from the report"))
    return seen, closed


def test_stalls_keep_the_source_page_beside_the_rows(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``stalls``: ncu writes a report (in a scratch folder, gone afterwards); the rows are
    stored as ever, the pages returned, and the page's text kept gzipped under
    ``<stage>.source/``, named by the run's timestamp, never replacing a file."""
    import gzip

    page_text = (RAW.parent / "source_page.csv").read_text()
    seen, closed = _stall_fakes(monkeypatch, page_text)
    prof = profile.profile(reg, "dynamic_spikes", out_dir=tmp_path, stalls=True)
    assert closed == [tmp_path / "dynamic_spikes.csv"]
    report = Path(seen[0][seen[0].index("-o") + 1])
    assert not report.parent.exists()
    assert results.read_rows(prof.path) and len(prof.pages) == 2
    assert prof.source is not None and prof.source.parent == tmp_path / "dynamic_spikes.source"
    assert prof.source.name.endswith(".csv.gz")
    with gzip.open(prof.source, "rt", encoding="utf-8") as f:
        assert f.read() == page_text
    again = profile.profile(reg, "dynamic_spikes", out_dir=tmp_path, stalls=True)
    assert again.source != prof.source and prof.source.exists()


def test_a_report_that_cannot_be_read_back_is_kept_not_lost(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ncu profiled, but its source page does not parse: one clear error naming where the
    report now lies (moved out of the scratch folder), no rows written, the results file
    closed."""
    seen, closed = _stall_fakes(monkeypatch, '"Kernel Name","k"\n"Address","Source"\n')
    with pytest.raises(HarnessError, match=r"lacks the column.*the profile is kept in") as err:
        profile.profile(reg, "dynamic_spikes", out_dir=tmp_path, stalls=True)
    kept = list((tmp_path / "dynamic_spikes.source").glob("*.ncu-rep"))
    assert len(kept) == 1 and kept[0].read_bytes() == b"report" and str(kept[0]) in str(err.value)
    assert not Path(seen[0][seen[0].index("-o") + 1]).parent.exists()
    assert results.read_rows(tmp_path / "dynamic_spikes.csv") == []  # no rows written
    assert closed == [tmp_path / "dynamic_spikes.csv"]


def test_where_ncu_wrote_no_report_its_error_stands_alone(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ncu matched no kernel (it exits 0 and writes no report): ncu's own one line, nothing
    kept, no pages folder made, the results file closed."""
    _, closed = _stall_fakes(monkeypatch, "", writes=False)
    with pytest.raises(HarnessError, match=r"^ncu printed no profile table \(no kernel matched, "
                                           r"or it failed\)$"):
        profile.profile(reg, "dynamic_spikes", out_dir=tmp_path, stalls=True)
    assert not (tmp_path / "dynamic_spikes.source").exists()
    assert closed == [tmp_path / "dynamic_spikes.csv"]
