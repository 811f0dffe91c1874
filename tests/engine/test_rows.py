"""The columns of a job's row known before measuring, and the timed ones."""

from __future__ import annotations

import json

import pytest

from harness.engine import rows
from harness.engine.jobs import plan
from harness.engine.pipeline import PipelineTiming
from harness.results import pipeline_rows
from harness.results import rows as results
from harness.results.provenance import RunMeta

META = RunMeta(gpu="G", git_sha="abc", command="t", peak_gbps=2000.0)


def test_stage_base_row(reg) -> None:  # type: ignore[no-untyped-def]
    job = plan([reg.get("spike_encode")], ["batch=4", "in_f=64"], None,
               {"mode": "bidirectional"})[0]
    r = rows.base(job, "pycuda", "llm", False, META)
    assert set(r) <= set(results.COLUMNS)
    assert (r["batch"], r["in_f"], r["out_f"], r["l2"], r["family"]) == (4, 64, "", "hot", "llm")
    params = json.loads(r["params"])
    assert params["mode"] == "bidirectional" and not {"batch", "in_f"} & set(params)
    assert r["kernel_hash"] and r["peak_gbps"] == 2000.0 and r["gpu"] == "G"
    assert rows.base(job, "numpy", "llm", True, RunMeta())["kernel_hash"] == ""


def test_pipeline_base_row(reg) -> None:  # type: ignore[no-untyped-def]
    job = plan([reg.pipelines["spike_quant_gemm"]], ["batch=2"], None, {"out_f": "8"})[0]
    r = rows.base(job, "pycuda", "ramp", True, META, reg.stages)
    assert set(r) <= set(pipeline_rows.COLUMNS)
    assert (r["batch"], r["out_f"], r["mode"], r["l2"]) == (2, 8, job.point["mode"], "cold")
    assert "mode" not in json.loads(r["params"]) and r["kernel_hashes"]


def test_pipeline_timed_columns() -> None:
    per = {"total": [10.0, 10.0, 10.0], "encoding_total": [4.0, 4.0, 4.0],
           "dynamic_spikes": [1.0, 1.0, 1.0], "not_a_label": [5.0, 5.0, 5.0]}
    r = rows.pipeline_timed(PipelineTiming(per, 6))
    assert r["planes"] == 6 and r["samples"] == 3 and r["total_us"] == 10.0
    assert r["encoding_share_pct"] == pytest.approx(40.0) and "weight_quant_share_pct" not in r
    assert "not_a_label_us" not in r
    assert rows.pipeline_timed(PipelineTiming(per, None))["planes"] == ""
