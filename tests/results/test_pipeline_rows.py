"""The pipeline CSV: the full rows, and the seed's five summaries projected from them."""

from __future__ import annotations

from pathlib import Path

from harness.results import pipeline_rows
from harness.results import rows as results


def test_schema_has_every_interval() -> None:
    cols = pipeline_rows.COLUMNS
    assert len(set(cols)) == len(cols)
    assert all(f"{k}_us" in cols and f"{k}_noise_pct" in cols for k in pipeline_rows.LABELS)
    for view in pipeline_rows.SEED_SUMMARIES.values():
        assert set(view) <= set(cols)


def test_rows_and_their_summaries(tmp_path: Path) -> None:
    row = {"stage": "p", "batch": 4, "status": "ok", "total_us": 10.0, "samples": 20,
           "encoding_total_us": 4.0, "encoding_share_pct": 40.0}
    w = pipeline_rows.PipelineCsv(tmp_path, "p")
    w.write(row)
    w.close()
    assert results.read_rows(tmp_path / "p.csv")[0]["total_us"] == "10"
    share = results.read_rows(tmp_path / "seed_spike_encoding_share.csv")
    assert share == [{"batch": "4", "in_f": "", "out_f": "", "mode": "", "family": "",
                      "status": "ok", "samples": "20", "encoding_total_us": "4",
                      "total_us": "10", "encoding_share_pct": "40", "gpu": "",
                      "git_sha": "", "timestamp": ""}]
    alone = tmp_path / "alone"
    w = pipeline_rows.PipelineCsv(alone, "p", summaries=False)
    w.write(row)
    w.close()
    assert [f.name for f in alone.glob("*.csv")] == ["p.csv"]


def test_a_peer_s_row_stays_out_of_the_seed_summaries(tmp_path: Path) -> None:
    """The summaries have no backend column: a peer's row there would read as ours."""
    w = pipeline_rows.PipelineCsv(tmp_path, "p")
    w.write({"stage": "p", "backend": "linear_bf16", "batch": 4, "status": "ok",
             "total_us": 30.0, "samples": 20})
    w.write({"stage": "p", "backend": "pycuda", "batch": 4, "status": "ok", "total_us": 10.0,
             "samples": 20})
    w.close()
    assert [r["backend"] for r in results.read_rows(tmp_path / "p.csv")] == ["linear_bf16",
                                                                           "pycuda"]
    assert [r["total_us"] for r in results.read_rows(tmp_path / "seed_e2e.csv")] == ["10"]


def test_closing_releases_every_file_and_written_counts_the_main_rows(tmp_path: Path) -> None:
    """``written`` counts the main file's rows, a peer's too; once closed, every file (the
    main one and each summary) is free for the next run."""
    from harness.results import files

    w = pipeline_rows.PipelineCsv(tmp_path, "p")
    assert w.written == 0 and w.repaired == ""
    w.write({"stage": "p", "backend": "linear_bf16", "batch": 4, "status": "ok",
             "total_us": 30.0, "samples": 20})
    w.write({"stage": "p", "batch": 4, "status": "ok", "total_us": 10.0, "samples": 20})
    assert w.written == 2
    w.close()
    again = pipeline_rows.PipelineCsv(tmp_path, "p", files.APPEND)
    again.close()
    for name in pipeline_rows.SEED_SUMMARIES:
        with files.locked(tmp_path / f"{name}.csv"):
            pass


def test_a_summary_that_cannot_be_opened_leaves_no_file_locked(tmp_path: Path) -> None:
    """All the files or none: the locks already taken are released when a later one fails."""
    import pytest

    from harness.errors import HarnessError
    from harness.results import files

    (tmp_path / "seed_spike_encoding.csv").mkdir()  # a folder where a summary goes
    # the error is still held (by a handler up the stack, say) while the files are reused:
    # the locks are released by the failed open, not when its half-built writer is freed
    with pytest.raises(HarnessError, match=r"seed_spike_encoding\.csv is a folder") as held:
        pipeline_rows.PipelineCsv(tmp_path, "p")
    w = pipeline_rows.PipelineCsv(tmp_path, "p", files.APPEND, summaries=False)
    w.close()
    for name in ("seed_e2e", "seed_dynamic_spikes"):
        with files.locked(tmp_path / f"{name}.csv"):
            pass
    assert held.value is not None


def test_a_torn_last_row_cut_before_appending_is_said(tmp_path: Path) -> None:
    from harness.results import files

    w = pipeline_rows.PipelineCsv(tmp_path, "p")
    w.write({"stage": "p", "batch": 4, "status": "ok", "total_us": 10.0, "samples": 20})
    w.close()
    with (tmp_path / "p.csv").open("a") as f:
        f.write("p,pycuda,default,8")  # a write cut short
    again = pipeline_rows.PipelineCsv(tmp_path, "p", files.APPEND)
    again.close()
    assert again.repaired.startswith(f"repaired {tmp_path / 'p.csv'}: cut a torn last row")
