"""Benchmark sweeps: plan the (stage, variant, point) jobs, measure each, write its row.

Rows go to ``<out>/<stage>.csv`` the moment they are measured (see ``harness.results.rows``), and
each is also yielded so the CLI can draw progress. Every timed point is first checked
against the reference (``verified``), so a fast wrong kernel cannot produce a number.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.contract import kernel as compiler
from harness.contract.backend import Backend
from harness.contract.stage import Stage, Variant
from harness.contract.timing import TimingConfig
from harness.engine import sweep
from harness.engine.validate import input_problem, judge, point_rng
from harness.errors import BadInput, HarnessError
from harness.results.rows import CsvWriter

#: Axes with their own CSV columns; the rest go, as JSON, into ``params``.
POINT_COLUMNS = ("batch", "in_f", "out_f")


@dataclass(frozen=True)
class Job:
    """One row to measure."""

    stage: Stage
    variant: Variant
    point: dict[str, Any]


@dataclass(frozen=True)
class BenchConfig:
    """What every job of a sweep shares."""

    family: str = "normal"
    seed: int = 0
    timing: TimingConfig = field(default_factory=TimingConfig)
    verify: bool = True


@dataclass(frozen=True)
class RunMeta:
    """Provenance written into every row."""

    gpu: str = ""
    driver: str = ""
    cuda: str = ""
    git_sha: str = ""
    command: str = ""
    peak_gbps: float | None = None

    def columns(self) -> dict[str, Any]:
        """The provenance columns of a row written now (stage and pipeline rows alike)."""
        from harness.results import provenance as _meta

        return {"gpu": self.gpu, "driver": self.driver, "cuda": self.cuda,
                "git_sha": self.git_sha, "timestamp": _meta.now(), "command": self.command}


def plan(stages: Sequence[Stage], sweep_specs: Sequence[str],
         variants: Sequence[str] | None = None,
         options: dict[str, str] | None = None,
         define_specs: Sequence[str] = ()) -> list[Job]:
    """Every job of the sweep.

    ``variants`` None means each stage's first (default) variant, ``["all"]`` every one.
    ``options`` (``--mode``, ``--k``, ``--group-size``) apply to the stages that have the
    axis; where variants pin that axis (a compiled-in mode), they choose the variant instead.
    ``define_specs`` (``NAME=V1,V2``, ``--define``) compile each chosen variant once per
    combination of the values, a tuning sweep over the kernel's ``-D`` parameters.
    """
    grid = sweep.parse(sweep_specs)
    tuning = parse_defines(define_specs)
    for axis in grid:
        if stages and not any(axis in {a.name for a in st.axes} for st in stages):
            raise BadInput(f"no selected stage has an axis {axis!r}")
    jobs = []
    for st in stages:
        chosen = [t for v in select_variants(st, variants, options or {})
                  for t in tuned(v, tuning)]
        names = {a.name for a in st.axes}
        fixed = {k: v for k, v in (options or {}).items() if k in names}
        for v in chosen:
            pinned = dict(v.pins)
            keep = {k: val for k, val in fixed.items() if k not in pinned}
            jobs += [Job(st, v, p) for p in sweep.points(st, grid, keep, v, lenient=True)]
    return jobs


_DEFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.+)$")


def parse_defines(specs: Sequence[str]) -> dict[str, list[str]]:
    """``["UNROLL=2,4"]`` -> ``{"UNROLL": ["2", "4"]}``; BadInput on a malformed spec."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        m = _DEFINE.match(spec.strip())
        values = [v.strip() for v in m.group(2).split(",")] if m else []
        if not m or not all(v and not any(c in v for c in " \n") for v in values):
            raise BadInput(f"bad --define {spec!r}: expected NAME=V1,V2,... (a C macro name "
                           "and non-empty values)")
        if m.group(1) in out:
            raise BadInput(f"bad --define: {m.group(1)!r} given twice")
        out[m.group(1)] = list(dict.fromkeys(values))
    return out


def tuned(v: Variant, tuning: dict[str, list[str]]) -> list[Variant]:
    """``v`` once per combination of the tuning values: its defines overridden (or
    extended), and named after them, ``default[UNROLL=4]``; ``[v]`` without tuning."""
    if not tuning:
        return [v]
    out = []
    for combo in itertools.product(*tuning.values()):
        over = dict(zip(tuning, combo, strict=True))
        defines = {**dict(v.defines), **over}
        label = ",".join(f"{k}={val}" for k, val in over.items())
        out.append(dataclasses.replace(v, name=f"{v.name}[{label}]",
                                       defines=tuple(defines.items())))
    return out


def select_variants(st: Stage, names: Sequence[str] | None,
                    options: dict[str, str]) -> list[Variant]:
    """The variants named (or the default, or all); options that match pins filter them."""
    if names and list(names) == ["all"]:
        chosen = list(st.variants)
    elif names:
        chosen = []
        for name in names:
            try:
                chosen.append(st.variant(name))
            except KeyError:
                known = ", ".join(v.name for v in st.variants)
                raise BadInput(f"stage {st.name} has no variant {name!r} "
                               f"(variants: {known})") from None
    else:
        chosen = list(st.variants)
        pinned = {k for v in chosen for k, _ in v.pins}
        if not any(k in options for k in pinned):
            return chosen[:1]
    for key, val in options.items():
        if any(key == k for v in chosen for k, _ in v.pins):
            try:
                st.axis(key).parse(str(val))
            except ValueError as exc:
                raise BadInput(f"{st.name}: {exc}") from None
            chosen = [v for v in chosen if str(dict(v.pins).get(key)) == str(val)]
            if not chosen:
                known = ", ".join(dict.fromkeys(str(dict(v.pins).get(key))
                                                for v in st.variants))
                raise BadInput(f"stage {st.name} has no variant with {key}={val} "
                               f"(known: {known})")
    return chosen


def _inputs(job: Job, cfg: BenchConfig) -> dict[str, np.ndarray]:
    rng = point_rng(cfg.seed, job.stage.name, cfg.family, job.point)
    return job.stage.make_inputs(rng, cfg.family, job.point)


def base_row(job: Job, backend: str, cfg: BenchConfig, meta: RunMeta) -> dict[str, Any]:
    """The columns of a row known before measuring."""
    p = job.point
    params = {k: v for k, v in p.items() if k not in POINT_COLUMNS}
    return {
        "stage": job.stage.name, "backend": backend, "variant": job.variant.name,
        **{c: p.get(c, "") for c in POINT_COLUMNS},
        "family": cfg.family, "params": json.dumps(params, sort_keys=True),
        "l2": "cold" if cfg.timing.cold else "hot",
        "bytes": int(job.stage.bytes_moved(p)), "flops": int(job.stage.flops(p)),
        "kernel_hash": compiler.kernel_hash(job.stage, job.variant)
        if backend == "pycuda" else "",
        **meta.columns(),
        "peak_gbps": meta.peak_gbps if meta.peak_gbps else "",
    }


def measure(job: Job, runner: Backend, cfg: BenchConfig, meta: RunMeta) -> dict[str, Any]:
    """Measure one job and return its row; failures become a status, not an exception."""
    row = base_row(job, runner.backend, cfg, meta)
    try:
        inputs = _inputs(job, cfg)
        if (bad := input_problem(job.stage, inputs, job.point)) is not None:
            return {**row, "status": "skipped", "reason": bad}
        pristine = {k: v.copy() for k, v in inputs.items()} if cfg.verify else inputs
        result, t = runner.time(job.stage, job.variant, inputs, job.point, cfg.timing)
    except HarnessError as exc:
        return {**row, "status": "failed", "reason": str(exc)}
    except Exception as exc:
        if runner.is_oom(exc):
            return {**row, "status": "oom", "reason": f"out of memory: {exc}"}
        return {**row, "status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    status, reason = "ok", "" if t.converged else "noise above target when the budget ended"
    if cfg.verify and runner.backend != "numpy":
        comps, problems = judge(job.stage, job.variant, job.point, pristine, result)
        bad = list(problems) + [c.describe() for c in comps if not c.ok]
        # A wrong answer is a failed row; its time stays beside it (a peer that is fast
        # but wrong is worth seeing), and no speedup is ever computed against it.
        status, reason = ("failed", bad[0][:500]) if bad else (status, reason)
        row["verified"] = "no" if bad else "yes"
    if job.stage.bytes_from_outputs is not None and result.outputs and status == "ok":
        row["bytes"] = int(job.stage.bytes_from_outputs(job.point, result.outputs))
    gbps = row["bytes"] / (t.median_us * 1e-6) / 1e9 if t.median_us > 0 else 0.0
    return {
        **row, "status": status, "reason": reason,
        "median_us": t.median_us, "p10_us": t.p10_us, "p90_us": t.p90_us,
        "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps, "launch": t.launch,
        "pct_peak": 100.0 * gbps / meta.peak_gbps if meta.peak_gbps else "",
    }


def speedup(row: dict[str, Any], peer_rows: Sequence[dict[str, Any]]) -> float | str:
    """The fastest ok peer's median over ours ('' when there is nothing to compare)."""
    peers = [r["median_us"] for r in peer_rows if r["status"] == "ok"]
    if row["status"] != "ok" or not peers:
        return ""
    return min(peers) / row["median_us"]


def run(jobs: Sequence[Job], runner: Backend, cfg: BenchConfig, meta: RunMeta,
        out_dir: Path, append: bool = False,
        peers: Sequence[Backend] = ()) -> Iterator[dict[str, Any]]:
    """Measure the jobs in order, each point on the peers first (stages that have them) and
    then on ``runner``, whose row gets ``speedup_vs_best_peer``. Each row is on disk in
    ``<out_dir>/<stage>.csv`` before it is yielded: an interrupted sweep keeps them all."""
    writers: dict[str, CsvWriter] = {}
    try:
        for job in jobs:
            name = job.stage.name
            if name not in writers:
                writers[name] = CsvWriter(Path(out_dir) / f"{name}.csv", append=append)
            peer_rows = []
            for peer in peers if job.stage.torch_impl is not None else ():
                peer_rows.append(measure(job, peer, cfg, meta))
                writers[name].write(peer_rows[-1])
                yield peer_rows[-1]
            row = measure(job, runner, cfg, meta)
            row["speedup_vs_best_peer"] = speedup(row, peer_rows)
            writers[name].write(row)
            yield row
    finally:
        for w in writers.values():
            w.close()
