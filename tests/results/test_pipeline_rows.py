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
