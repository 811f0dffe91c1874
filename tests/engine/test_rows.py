"""The columns of a job's row known before measuring, and the timed ones."""

from __future__ import annotations

import dataclasses
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
    r = rows.base(job, "pycuda", "llm", "hot", META)
    assert set(r) <= set(results.COLUMNS)
    assert (r["batch"], r["in_f"], r["out_f"], r["l2"], r["family"]) == (4, 64, "", "hot", "llm")
    params = json.loads(r["params"])
    assert params["mode"] == "bidirectional" and not {"batch", "in_f"} & set(params)
    assert r["kernel_hash"] and r["peak_gbps"] == 2000.0 and r["gpu"] == "G"
    assert rows.base(job, "numpy", "llm", "cold", RunMeta())["kernel_hash"] == ""


def test_pipeline_base_row(reg) -> None:  # type: ignore[no-untyped-def]
    job = plan([reg.pipelines["spike_quant_gemm"]], ["batch=2"], None, {"out_f": "8"})[0]
    r = rows.base(job, "pycuda", "ramp", "cold", META, reg.stages)
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


def _timed(reg, backend: str, gpu: str, stage: str = "int_gemm") -> dict:  # type: ignore[no-untyped-def]
    from harness.contract.timing import Timing

    st = reg.get(stage)
    job = plan([st], ["batch=4096", "out_f=3584", "in_f=3584"])[0]
    meta = RunMeta(gpu=gpu, peak_gbps=4000.0)
    base = rows.base(job, backend, "normal", "hot", meta)
    return {**base, **rows.stage_timed(base, st, job.point, Timing(100.0, 99.0, 101.0, 0.5,
                                                                   20, True), None, meta)}


def test_gemm_rows_carry_tops_and_the_datasheet_share(reg) -> None:  # type: ignore[no-untyped-def]
    r = _timed(reg, "pycuda", "NVIDIA H200")
    assert set(r) <= set(results.COLUMNS)
    flops = 2 * 4096 * 3584 * 3584
    assert r["flops"] == flops and r["tops"] == pytest.approx(flops / 100e-6 / 1e12)
    assert r["datasheet_tops"] == 1979.0  # int8 dense, the H200 SXM datasheet
    assert r["pct_datasheet_tops"] == pytest.approx(100 * r["tops"] / 1979.0)
    fp32 = _timed(reg, "pycuda", "NVIDIA H200", "gemm")
    assert fp32["datasheet_tops"] == 67.0


def test_no_datasheet_share_is_guessed(reg) -> None:  # type: ignore[no-untyped-def]
    # A GPU the table does not list, a peer (its own precision), a stage without a rate:
    # TOPS where there are flops, never a percentage.
    for r in (_timed(reg, "pycuda", "NVIDIA H200 NVL"), _timed(reg, "torch", "NVIDIA H200")):
        assert r["tops"] > 0 and "pct_datasheet_tops" not in r and "datasheet_tops" not in r
    st = dataclasses.replace(reg.get("int_gemm"), compute_peak=None)
    r = rows.compute_columns({"flops": 10**12, "backend": "pycuda"}, st,
                             _timing(1e6), RunMeta(gpu="NVIDIA H200"))
    assert r == {"tops": pytest.approx(1.0)}
    assert rows.compute_columns({"flops": 0, "backend": "pycuda"}, reg.get("int_gemm"),
                                _timing(1.0), RunMeta(gpu="NVIDIA H200")) == {}


def _timing(median_us: float):  # type: ignore[no-untyped-def]
    from harness.contract.timing import Timing

    return Timing(median_us, median_us, median_us, 0.0, 20, True)


def test_a_pipelines_intervals_of_its_own_names_are_kept() -> None:
    """An interval the seed has no column for (spike_linear's ``activation``) is stored, as
    JSON in ``intervals``, not dropped; the seed's go to their columns as before."""
    import json

    from harness.engine import rows as engine_rows
    from harness.engine.pipeline import PipelineTiming

    per = {"total": [30.0, 31.0, 32.0, 31.0, 30.5], "gemm": [25.0, 25.5, 26.0, 25.5, 25.0],
           "activation": [5.0, 5.5, 6.0, 5.5, 5.0]}
    r = engine_rows.pipeline_timed(PipelineTiming(per, None))
    assert r["gemm_us"] == 25.5 and r["total_us"] == 31.0
    extra = json.loads(r["intervals"])
    assert list(extra) == ["activation"] and extra["activation"]["median_us"] == 5.5
    seed = engine_rows.pipeline_timed(PipelineTiming({"total": per["total"]}, 6))
    assert seed["intervals"] == "" and seed["planes"] == 6
