"""Running, validating and timing pipelines (plugins that compose stages on two streams).

The GPU side lives in ``harness.backends.pycuda.runner.GpuRunner.pipeline``; this module turns runs into
validation cases, repetitions into timings, and timings into the seed's report and CSV rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.contract.backend import Backend
from harness.contract.stage import Pipeline, Point, Variant
from harness.contract.timing import Timing, summarize
from harness.engine.bench import RunMeta
from harness.engine.validate import CaseResult, case_rng, nonfinite, point_rng
from harness.results.rows import CsvWriter
from harness.spikes.families import check_family

#: Interval names a pipeline reports, in the seed's order, with the seed's labels.
LABELS = {
    "dynamic_spikes": "dynamic_spikes_kernel",
    "encoding_kernels": "Spike Bitwise Encoding - Kernel Only",
    "encoding_total": "Spike Bitwise Encoding - Total (host-side decision included)",
    "weight_quant": "Weight Quantization",
    "decode_reverse": "Spike Decode + Reverse",
    "gemm": "GEMM",
    "total": "End to end (both streams joined)",
}

COLUMNS = (
    "stage", "backend", "variant", "batch", "in_f", "out_f", "mode", "family", "params", "status",
    "reason", "verified", "l2", "planes", "samples",
    *(f"{k}_us" for k in LABELS), *(f"{k}_noise_pct" for k in LABELS),
    "encoding_share_pct", "weight_quant_share_pct", "gpu", "driver", "cuda", "git_sha",
    "kernel_hashes", "timestamp", "command",
)

#: The seed's five batch-size summaries (benchmark/run_perf*.sh): file -> its columns.
SEED_SUMMARIES: dict[str, tuple[str, ...]] = {
    "seed_e2e": ("total_us", "total_noise_pct"),
    "seed_dynamic_spikes": ("dynamic_spikes_us", "dynamic_spikes_noise_pct"),
    "seed_spike_encoding": ("encoding_kernels_us", "encoding_kernels_noise_pct",
                            "encoding_total_us", "encoding_total_noise_pct"),
    "seed_spike_encoding_share": ("encoding_total_us", "total_us", "encoding_share_pct"),
    "seed_weight_quant_share": ("weight_quant_us", "total_us", "weight_quant_share_pct"),
}
_KEYS = ("batch", "in_f", "out_f", "mode", "family", "status", "samples")
_TAIL = ("gpu", "git_sha", "timestamp")


def validate(pipe: Pipeline, stages: dict[str, Any], runner: Backend,
             families: Sequence[str] | None = None, seeds: int = 3,
             base_seed: int = 0, variants: Sequence[Variant] | None = None
             ) -> Iterator[CaseResult]:
    """Each case of each variant (default: all) on fresh inputs: one run, its outputs
    judged by the pipeline's ``check``."""
    fams = list(families) if families else list(pipe.families)
    for variant in variants or pipe.variants:
        for fam in fams:
            for ci, case in enumerate(pipe.cases):
                for si in range(seeds):
                    point = pipe.point(variant, **case)
                    rng = case_rng(base_seed, pipe.name, fam, ci, si)
                    ins = pipe.make_inputs(rng, fam, point)
                    outs, host, _ = runner.pipeline(pipe, stages, ins, point, repeats=0,
                                                    cold=False, warmup=0)
                    comps = pipe.check(ins, point, outs, host)
                    yield CaseResult(pipe.name, variant.name, fam, si, dict(point),
                                     tuple(comps))


@dataclass(frozen=True)
class PipelineTiming:
    """Per-interval timings of a pipeline's repetitions."""

    per_rep: dict[str, list[float]]
    #: T of the run (None where the host never learnt it: decided on the device).
    planes: int | None

    def summary(self) -> dict[str, Timing]:
        """Median, percentiles and noise of each interval."""
        return {k: summarize(v) for k, v in self.per_rep.items() if v}


@dataclass(frozen=True)
class PipelineMeta:
    """What a pipeline row records besides its timings: the run's provenance (the same
    ``RunMeta`` stage rows carry), the hash of the stages' kernels, and the L2 state."""

    run: RunMeta
    kernel_hashes: str = ""
    cold: bool = True


def row(pipe: Pipeline, point: Point, family: str, timing: PipelineTiming | None,
        meta: PipelineMeta, status: str = "ok", reason: str = "",
        verified: str = "") -> dict[str, Any]:
    """One CSV row of a pipeline point."""
    params = {k: v for k, v in point.items() if k not in ("batch", "in_f", "out_f", "mode")}
    r: dict[str, Any] = {
        "stage": pipe.name, "backend": "pycuda", "variant": pipe.variant_of(point).name,
        **{k: point.get(k, "") for k in ("batch", "in_f", "out_f", "mode")},
        "family": family, "params": json.dumps(params, sort_keys=True),
        "status": status, "reason": reason, "verified": verified,
        "l2": "cold" if meta.cold else "hot", "kernel_hashes": meta.kernel_hashes,
        **meta.run.columns(),
    }
    if timing is not None:
        s = timing.summary()
        r["planes"] = "" if timing.planes is None else timing.planes
        r["samples"] = len(timing.per_rep["total"])
        for k, t in s.items():
            if k in LABELS:
                r[f"{k}_us"] = t.median_us
                r[f"{k}_noise_pct"] = t.noise_pct
        tot = s["total"].median_us
        # The seed's shares, where the pipeline has both intervals.
        for part, col in (("encoding_total", "encoding_share_pct"),
                          ("weight_quant", "weight_quant_share_pct")):
            if part in s:
                r[col] = 100 * s[part].median_us / tot
    return r


class PipelineCsv:
    """The full rows in ``<stage>.csv`` and the seed's five summaries beside them."""

    def __init__(self, out_dir: Path, name: str, append: bool = False,
                 summaries: bool = True) -> None:
        self.main = CsvWriter(Path(out_dir) / f"{name}.csv", append, COLUMNS)
        self.views = {k: CsvWriter(Path(out_dir) / f"{k}.csv", append,
                                   (*_KEYS, *cols, *_TAIL))
                      for k, cols in SEED_SUMMARIES.items()} if summaries else {}

    def write(self, r: dict[str, Any]) -> None:
        """Write the row, then its projection into each summary."""
        self.main.write(r)
        for w in self.views.values():
            w.write({c: r.get(c, "") for c in w.columns})

    def close(self) -> None:
        """Close every file (each row is already on disk)."""
        self.main.close()
        for w in self.views.values():
            w.close()


def report(point: Point, family: str, timing: PipelineTiming) -> list[str]:
    """The seed's report (``./spike_quant_gemm REPEATS BATCH``), one line each."""
    s = timing.summary()
    n = len(timing.per_rep["total"])
    lines = [f"batch={point['batch']} in_f={point['in_f']} out_f={point['out_f']} "
             f"mode={point['mode']} k={point['k']} group_size={point['group_size']} "
             f"family={family} T={timing.planes} repetitions={n}"]
    for k, label in LABELS.items():
        if k in s and k != "total":
            t = s[k]
            mean = float(np.mean(timing.per_rep[k]))
            lines.append(f"{label}: mean {mean:.2f} us, median {t.median_us:.2f} us "
                         f"(p10 {t.p10_us:.2f}, p90 {t.p90_us:.2f}, noise {t.noise_pct:.2f}%)")
    tot = timing.per_rep["total"]
    lines.append(f"Average time per repetition: {np.mean(tot):.2f} us "
                 f"(median {s['total'].median_us:.2f} us, noise {s['total'].noise_pct:.2f}%)")
    lines.append(f"Total time for {n} repetitions: {np.sum(tot) / 1000:.3f} ms")
    return lines


#: Points larger than this many activation elements are timed but not re-checked in a
#: sweep (the chained NumPy reference takes tens of seconds there); validation covers them.
VERIFY_LIMIT = 1 << 26


def bench(pipe: Pipeline, stages: dict[str, Any], runner: Backend,
          points: Sequence[dict[str, Any]], family: str, seed: int, budget_s: float,
          cold: bool, meta: PipelineMeta, out_dir: Path,
          append: bool = False) -> Iterator[dict[str, Any]]:
    """Time each point (repetitions sized to the budget), check its outputs, and write its
    row to ``<pipeline>.csv`` and the seed's summaries before yielding it."""
    check_family(family)
    out = PipelineCsv(out_dir, pipe.name, append, pipe.seed_summaries)
    try:
        for p in points:
            ins = pipe.make_inputs(point_rng(seed, pipe.name, family, p), family, p)
            if (bad := nonfinite(ins)) is not None:
                r = row(pipe, p, family, None, meta, "skipped", bad)
                out.write(r)
                yield r
                continue
            try:
                _, _, probe = runner.pipeline(pipe, stages, ins, p, repeats=3, cold=cold)
                per = float(np.median(probe["total"])) * 1e-6
                reps = int(min(500, max(10, budget_s / max(per, 1e-6))))
                outs, host, per_rep = runner.pipeline(pipe, stages, ins, p, repeats=reps,
                                                      cold=cold, warmup=2)
            except Exception as exc:
                oom = "out of memory" in str(exc).lower() or isinstance(exc, MemoryError)
                r = row(pipe, p, family, None, meta, "oom" if oom else "failed",
                        f"{type(exc).__name__}: {exc}"[:500])
                out.write(r)
                yield r
                continue
            verified, status, reason = "skipped", "ok", ""
            if p.get("batch", 1) * p.get("in_f", 1) <= VERIFY_LIMIT:
                bad = [c.describe() for c in pipe.check(ins, p, outs, host) if not c.ok]
                verified = "no" if bad else "yes"
                if bad:
                    status, reason = "failed", bad[0][:500]
            else:
                reason = "outputs not re-checked above 2^26 elements (validation covers it)"
            planes = host.get("planes")
            timing = PipelineTiming(per_rep, None if planes is None else int(planes))
            r = row(pipe, p, family, timing, meta, status, reason, verified)
            out.write(r)
            yield r
    finally:
        out.close()
