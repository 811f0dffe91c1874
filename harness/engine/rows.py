"""The CSV row of a measured job: the columns known before measuring, then the timed ones.

A stage row has the columns of :mod:`harness.results.rows`, a pipeline row those of
:mod:`harness.results.pipeline_rows`; both carry the run's provenance.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.contract import datasheet
from harness.contract.kernel import kernel_hash
from harness.contract.stage import Pipeline, Stage
from harness.contract.timing import Timing
from harness.engine.jobs import Job
from harness.engine.pipeline import PipelineTiming
from harness.results import pipeline_rows
from harness.results import rows as rates
from harness.results.ledger import pipeline_hash
from harness.results.provenance import RunMeta

#: Axes with their own columns in a stage row; the rest go, as JSON, into ``params``.
POINT_COLUMNS = ("batch", "in_f", "out_f")


def _params(point: Mapping[str, Any], own: tuple[str, ...]) -> str:
    return json.dumps({k: v for k, v in point.items() if k not in own}, sort_keys=True)


def base(job: Job, backend: str, family: str, l2: str, meta: RunMeta,
         stages: Mapping[str, Stage] | None = None, graph: bool = False) -> dict[str, Any]:
    """The columns of a job's row known before measuring (``l2``: ``TimingConfig.l2``; a
    pipeline's kernel hash is over its steps' kernels, the registry's ``stages``). A stage
    row's ``launch`` is the mode asked for (``graph``), so that a row that fails before it
    is timed stays at its point; a timed row's is how it ran (:func:`stage_timed`)."""
    if isinstance(job.target, Pipeline):
        return _pipeline_base(job, backend, family, l2, meta, stages or {})
    st, p = job.target, job.point
    return {
        "stage": st.name, "backend": backend, "variant": job.variant.name,
        **{c: p.get(c, "") for c in POINT_COLUMNS},
        "family": family, "params": _params(p, POINT_COLUMNS),
        "l2": l2, "launch": "graph" if graph else "stream",
        "bytes": int(st.bytes_moved(p)), "flops": int(st.flops(p)),
        "kernel_hash": kernel_hash(st, job.variant) if backend == "pycuda" else "",
        **meta.columns(),
        "peak_gbps": meta.peak_gbps if meta.peak_gbps else "",
    }


def _pipeline_base(job: Job, backend: str, family: str, l2: str, meta: RunMeta,
                   stages: Mapping[str, Stage]) -> dict[str, Any]:
    assert isinstance(job.target, Pipeline)
    own = pipeline_rows.POINT_COLUMNS
    return {
        "stage": job.target.name, "backend": backend, "variant": job.variant.name,
        **{k: job.point.get(k, "") for k in own},
        "family": family, "params": _params(job.point, own),
        "l2": l2,
        # A peer's row ran none of the steps' kernels.
        "kernel_hashes": pipeline_hash(job.target, stages) if backend == "pycuda" else "",
        **meta.columns(),
    }


def stage_timed(row: dict[str, Any], stage: Stage, point: Mapping[str, Any], t: Timing,
                outputs: Mapping[str, np.ndarray] | None, meta: RunMeta) -> dict[str, Any]:
    """The timed columns of a stage row: the times, the bandwidth over the bytes the run
    moved (where they depend on the data, counted from an ok run's ``outputs``), and the
    compute rate over its flops (:func:`compute_columns`)."""
    nbytes = row["bytes"]
    if stage.bytes_from_outputs is not None and outputs:
        nbytes = int(stage.bytes_from_outputs(point, outputs))
    bandwidth = rates.gbps(nbytes, t.median_us)
    return {"bytes": nbytes, "median_us": t.median_us, "p10_us": t.p10_us,
            "p90_us": t.p90_us, "noise_pct": t.noise_pct, "samples": t.samples,
            "gbps": bandwidth, "launch": t.launch,
            "pct_peak": rates.pct_peak(bandwidth, meta.peak_gbps) if meta.peak_gbps else "",
            **compute_columns(row, stage, t, meta), **clock_columns(t)}


def compute_columns(row: Mapping[str, Any], stage: Stage, t: Timing,
                    meta: RunMeta) -> dict[str, Any]:
    """``tops``, the row's flops over its median in tera-ops/s (none where the stage does no
    arithmetic it counts); on our own kernels' rows (``pycuda``) of a stage that declares
    its ``compute_peak``, on a GPU the datasheet table lists, also that peak
    (``datasheet_tops``) and the share of it (``pct_datasheet_tops``). A peer computes in
    its own precision, so its row is not set against our kernel's rate."""
    flops = int(row.get("flops") or 0)
    if flops <= 0 or t.median_us <= 0:
        return {}
    rate = rates.tops(flops, t.median_us)
    peak = datasheet.peak_tops(meta.gpu, stage.compute_peak) \
        if row.get("backend") == "pycuda" else None
    if not peak:
        return {"tops": rate}
    return {"tops": rate, "datasheet_tops": peak, "pct_datasheet_tops": 100.0 * rate / peak}


def clock_columns(t: Timing) -> dict[str, Any]:
    """The SM clock over a stage row's samples; empty where the backend measured none
    (the NumPy references)."""
    c = t.clocks
    if c is None:
        return {}
    return {"clock_mhz_median": c.median_mhz, "clock_mhz_min": c.min_mhz,
            "clock_mhz_nominal": c.nominal_mhz, "throttled_samples": c.throttled}


def pipeline_peer_timed(timing: Timing) -> dict[str, Any]:
    """The timed columns of a pipeline peer's row: one call, so one interval, the total."""
    return {"samples": timing.samples, "total_us": timing.median_us,
            "total_noise_pct": timing.noise_pct}


def pipeline_timed(timing: PipelineTiming) -> dict[str, Any]:
    """The timed columns of a pipeline row: each interval's median and noise, T, and the
    seed's shares where the pipeline has both intervals."""
    s = timing.summary()
    r: dict[str, Any] = {"planes": "" if timing.planes is None else timing.planes,
                         "samples": len(timing.per_rep["total"])}
    other = {}
    for k, t in s.items():
        if k in pipeline_rows.LABELS:
            r[f"{k}_us"] = t.median_us
            r[f"{k}_noise_pct"] = t.noise_pct
        else:  # an interval of the pipeline's own name: kept too, as JSON
            other[k] = {"median_us": t.median_us, "noise_pct": t.noise_pct}
    r["intervals"] = json.dumps(other, sort_keys=True) if other else ""
    tot = s["total"].median_us
    for part, col in (("encoding_total", "encoding_share_pct"),
                      ("weight_quant", "weight_quant_share_pct")):
        if part in s:
            r[col] = 100 * s[part].median_us / tot
    return r
