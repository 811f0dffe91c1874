"""The spike_quant_gemm pipeline on the CPU: its wiring (through a context that runs each
step's NumPy reference on host arrays), its checks, its report and its CSV."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.backends.pycuda.runner import POISON8, POISON32
from harness.engine import pipeline
from harness.engine.bench import RunMeta
from harness.results import rows as results


class HostContext:
    """PipelineContext whose buffers are NumPy arrays and whose steps are the references."""

    def __init__(self, stages: Mapping[str, Any]) -> None:
        self.stages = stages
        self.steps: list[tuple[str, str, int]] = []

    def launcher(self, stage: str, variant: str, stream: int) -> Any:
        raise AssertionError("pipelines launch through step()")

    def step(self, stage: str, variant: str, stream: int, bufs: Mapping[str, Any],
             **values: Any) -> None:
        st = self.stages[stage]
        v = st.variant(variant)
        names = {a.name for a in st.axes}
        p = st.point(v, **{k: val for k, val in values.items() if k in names})
        specs = st.outputs(p)
        ins = {k: a.copy() for k, a in bufs.items()
               if k not in specs or k in st.inplace.values()}
        for name, arr in st.reference(ins, p, v, None).items():
            a = np.asarray(arr).astype(specs[name][1])
            if st.trim is not None and a.shape != tuple(specs[name][0]):
                bufs[name][: a.shape[0]] = a  # T planes of a larger buffer, as the kernel
            else:
                np.copyto(bufs[name], a.reshape(specs[name][0]))
        self.steps.append((stage, variant, stream))

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        a = np.empty(shape, dtype=dtype)
        a.view(np.uint8)[...] = POISON8
        if a.itemsize == 4:
            a.view(np.uint32)[...] = POISON32
        return a

    def read(self, buf: np.ndarray, shape: tuple[int, ...], dtype: Any,
             stream: int) -> np.ndarray:
        return buf.copy()

    def mark(self, name: str, stream: int) -> None:
        pass

    def wait(self, name: str, stream: int) -> None:
        pass


class HostRunner:
    """Runs pipelines through HostContext; intervals are fake (1 µs each)."""

    def pipeline(self, pipe, stages, inputs, point, repeats, cold, warmup=1):  # type: ignore[no-untyped-def]
        ctx = HostContext(stages)
        tr = pipe.run(ctx, dict(inputs), point)
        outs = {k: buf.copy() for k, (buf, _, _) in tr.outputs.items()}
        per = {k: [1.0 + i for i in range(repeats)] for k in tr.intervals}
        return outs, tr.host, per


@pytest.fixture(scope="module")
def pipe(reg):  # type: ignore[no-untyped-def]
    return reg.pipelines["spike_quant_gemm"]


def test_pipeline_is_discovered_with_its_steps(reg, pipe) -> None:  # type: ignore[no-untyped-def]
    assert set(pipe.steps) <= set(reg.stages)


@pytest.mark.parametrize("mode", ["unidirectional", "bidirectional", "twos_complement"])
def test_wiring_passes_every_check(reg, pipe, mode: str) -> None:  # type: ignore[no-untyped-def]
    p = pipe.point(batch=5, in_f=37, out_f=9, group_size=8, mode=mode, with_gemm=1)
    ins = pipe.make_inputs(np.random.default_rng(1), "llm", p)
    ctx = HostContext(reg.stages)
    tr = pipe.run(ctx, dict(ins), p)
    streams = {s: st for s, _, st in ctx.steps}
    assert streams["compute_scales"] == streams["weight_quantize"] == 1
    assert all(streams[s] == 0 for s in ("dynamic_spikes", "spike_encode", "gemm"))
    assert ("spike_encode", mode, 0) in ctx.steps
    outs = {k: b for k, (b, _, _) in tr.outputs.items()}
    comps = pipe.check(ins, p, outs, tr.host)
    assert all(c.ok for c in comps), [c.describe() for c in comps if not c.ok]
    names = {c.output for c in comps}
    assert {"decode(encode(q)) == q", "|x_rec - x| <= vth/2", "out", "spikes"} <= names


def test_checks_catch_a_broken_round_trip(reg, pipe) -> None:  # type: ignore[no-untyped-def]
    p = pipe.point(batch=3, in_f=16, out_f=4, with_gemm=1)
    ins = pipe.make_inputs(np.random.default_rng(2), "normal", p)
    tr = pipe.run(HostContext(reg.stages), dict(ins), p)
    outs = {k: b.copy() for k, (b, _, _) in tr.outputs.items()}
    outs["qd"][0, 0] += 1
    outs["spikes"][0, 1, 1] = 5
    bad = {c.output for c in pipe.check(ins, p, outs, tr.host) if not c.ok}
    assert bad == {"decode(encode(q)) == q", "spikes"}


def test_validate_yields_cases(reg, pipe) -> None:  # type: ignore[no-untyped-def]
    cases = list(pipeline.validate(pipe, reg.stages, HostRunner(), ["seed", "edge"], 1))
    assert len(cases) == 2 * len(pipe.cases) and all(c.ok for c in cases)


def test_bench_writes_the_row_and_the_seeds_five_summaries(reg, pipe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pts = [pipe.point(batch=b, in_f=16, out_f=8) for b in (1, 2)]
    rows = list(pipeline.bench(pipe, reg.stages, HostRunner(), pts, "seed", 0, 1e-9, True,
                               pipeline.PipelineMeta(RunMeta(gpu="Fake")), tmp_path))
    assert [r["status"] for r in rows] == ["ok", "ok"] and rows[0]["verified"] == "yes"
    main = results.read_rows(tmp_path / "spike_quant_gemm.csv")
    assert [r["batch"] for r in main] == ["1", "2"]
    for name, cols in pipeline.SEED_SUMMARIES.items():
        view = results.read_rows(tmp_path / f"{name}.csv")
        assert len(view) == 2 and all(view[0][c] != "" for c in cols), name
    share = float(main[0]["encoding_share_pct"])
    assert share == pytest.approx(100 * float(main[0]["encoding_total_us"]) /
                                  float(main[0]["total_us"]))


def test_report_has_the_seeds_lines(pipe) -> None:  # type: ignore[no-untyped-def]
    per = {k: [10.0, 12.0, 11.0] for k in ("dynamic_spikes", "encoding_kernels",
                                         "encoding_total", "weight_quant", "total")}
    lines = pipeline.report(pipe.point(), "seed", pipeline.PipelineTiming(per, 6))
    text = "\n".join(lines)
    for label in ("dynamic_spikes_kernel", "Spike Bitwise Encoding - Kernel Only",
                  "Spike Bitwise Encoding - Total", "Weight Quantization",
                  "Average time per repetition", "Total time for 3 repetitions: 0.033 ms"):
        assert label in text, label


def test_variants_are_validated_benched_and_recorded_apart(reg, pipe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A pipeline whose variants pin an axis: every variant is validated, swept side by
    side and named in its rows and ledger entries; no seed summaries unless it asks."""
    import dataclasses

    from harness.contract.stage import Variant
    from harness.engine import session
    from harness.results import ledger

    two = dataclasses.replace(
        pipe, name="two", seed_summaries=False, cases=pipe.cases[:1],
        variants=(Variant("plain", pins=(("with_gemm", 0),)),
                  Variant("gemm", pins=(("with_gemm", 1),))))
    cases = list(pipeline.validate(two, reg.stages, HostRunner(), ["normal"], 1))
    assert [c.variant for c in cases] == ["plain", "gemm"] and all(c.ok for c in cases)
    assert [c.point["with_gemm"] for c in cases] == [0, 1]
    pts = session.pipeline_points(two, ["batch=1,2", "in_f=16", "out_f=8"], {})
    assert [(two.variant_of(p).name, p["batch"]) for p in pts] == [
        ("plain", 1), ("plain", 2), ("gemm", 1), ("gemm", 2)]
    rows = list(pipeline.bench(two, reg.stages, HostRunner(), pts, "normal", 0, 1e-9, True,
                               pipeline.PipelineMeta(RunMeta(gpu="Fake")), tmp_path))
    assert [r["variant"] for r in rows] == ["plain", "plain", "gemm", "gemm"]
    assert all(r["status"] == "ok" for r in rows)
    assert (tmp_path / "two.csv").exists() and not (tmp_path / "seed_e2e.csv").exists()
    status = ledger.check([], [], [two], reg.stages)
    assert [(s.stage, s.variant, s.ok) for s in status] == [("two", "plain", False),
                                                            ("two", "gemm", False)]


@pytest.mark.parametrize("mode", ["unidirectional", "bidirectional", "twos_complement"])
def test_activation_path_both_variants_pass_and_agree(reg, mode: str) -> None:  # type: ignore[no-untyped-def]
    """The staged and the fused path, wired through the references: every check passes,
    and both give the same planes and decisions on the same x."""
    ap = reg.pipelines["activation_path"]
    got = {}
    for v in ap.variants:
        p = ap.point(v, batch=5, in_f=37, mode=mode)
        ins = ap.make_inputs(np.random.default_rng(3), "llm", p)
        tr = ap.run(HostContext(reg.stages), dict(ins), p)
        outs = {k: b for k, (b, _, _) in tr.outputs.items()}
        comps = ap.check(ins, p, outs, tr.host)
        assert all(c.ok for c in comps), [c.describe() for c in comps if not c.ok]
        got[v.name] = outs
    t = int(got["fused"]["stats"][3])
    assert np.array_equal(got["fused"]["spikes"][:t], got["staged"]["spikes"])
    assert list(got["fused"]["stats"][:3]) == [*got["staged"]["mm"], got["staged"]["o"][0]]


def test_activation_path_check_catches_a_wrong_plane_and_a_wrong_t(reg) -> None:  # type: ignore[no-untyped-def]
    ap = reg.pipelines["activation_path"]
    p = ap.point(ap.variant("fused"), batch=3, in_f=16)
    ins = ap.make_inputs(np.random.default_rng(4), "normal", p)
    tr = ap.run(HostContext(reg.stages), dict(ins), p)
    outs = {k: b.copy() for k, (b, _, _) in tr.outputs.items()}
    outs["spikes"][0, 0, 0] ^= 1
    assert {c.output for c in ap.check(ins, p, outs, tr.host) if not c.ok} == {"spikes"}
    outs["stats"][3] += 1
    assert "T" in {c.output for c in ap.check(ins, p, outs, tr.host) if not c.ok}
