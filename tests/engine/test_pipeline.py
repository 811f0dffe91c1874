"""Pipelines on the CPU: their wiring (through a context that runs each step's NumPy
reference on host arrays), their checks, sampling in chunks under the stages' stopping
rule, and the seed's report."""

from __future__ import annotations

import numpy as np
import pytest

from harness.contract.timing import TimingConfig
from harness.engine import pipeline
from tests.engine.host import HostContext, HostRunner


@pytest.fixture(scope="module")
def pipe(reg):  # type: ignore[no-untyped-def]
    return reg.pipelines["spike_quant_gemm"]


def test_pipeline_is_discovered_with_its_steps(reg, pipe) -> None:  # type: ignore[no-untyped-def]
    assert set(pipe.steps) <= set(reg.stages)


def test_report_of_a_pipeline_whose_t_is_decided_on_the_device(reg) -> None:  # type: ignore[no-untyped-def]
    """No T learnt by the host, no out_f axis, intervals of its own names: every interval
    is reported under its name, and the point by its own axes."""
    ap = reg.pipelines["activation_path"]
    per = {"total": [10.0, 12.0, 11.0], "activation": [4.0, 5.0, 4.5]}
    lines = pipeline.report(ap.point(), "normal", pipeline.PipelineTiming(per, None))
    assert lines[0].startswith("batch=1024 in_f=3584 k=4.0") and "T=" not in lines[0]
    assert lines[1].startswith("activation: mean 4.50 us, median 4.50 us")
    assert "out_f" not in "\n".join(lines)


@pytest.mark.parametrize("mode", ["unidirectional", "bidirectional", "twos_complement"])
def test_wiring_passes_every_check(reg, pipe, mode: str) -> None:  # type: ignore[no-untyped-def]
    p = pipe.point(batch=5, in_f=37, out_f=9, group_size=8, mode=mode, with_gemm=1)
    ins = pipe.make_inputs(np.random.default_rng(1), "llm", p)
    ctx = HostContext(reg.stages)
    tr = pipe.run(ctx, dict(ins), p)
    streams = {s: st for s, _, st in ctx.steps}
    assert streams["compute_scales"] == streams["weight_quantize"] == 1
    assert all(streams[s] == 0 for s in ("dynamic_spikes", "spike_encode", "int_gemm"))
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


def test_report_has_the_seeds_lines(pipe) -> None:  # type: ignore[no-untyped-def]
    per = {k: [10.0, 12.0, 11.0] for k in ("dynamic_spikes", "encoding_kernels",
                                         "encoding_total", "weight_quant", "total")}
    lines = pipeline.report(pipe.point(), "ramp", pipeline.PipelineTiming(per, 6))
    text = "\n".join(lines)
    for label in ("dynamic_spikes_kernel", "Spike Bitwise Encoding - Kernel Only",
                  "Spike Bitwise Encoding - Total", "Weight Quantization",
                  "Average time per repetition", "Total time for 3 repetitions: 0.033 ms"):
        assert label in text, label


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


def _sample(reg, runner, cfg):  # type: ignore[no-untyped-def]
    """Sample spike_quant_gemm at a small point; the clock reads 10 ms a repetition run."""
    pipe = reg.pipelines["spike_quant_gemm"]
    p = pipe.point(batch=2, in_f=16, out_f=8)
    ins = pipe.make_inputs(np.random.default_rng(0), "normal", p)
    return pipeline.sample(runner, pipe, reg.stages, ins, p, cfg, lambda: runner.done / 100)


def test_sampling_stops_when_the_total_is_quiet(reg) -> None:  # type: ignore[no-untyped-def]
    runner = HostRunner(times=lambda i: 7.0)
    run = _sample(reg, runner, TimingConfig(budget_s=100.0))
    assert run.total.converged and run.total.samples == 20 and run.total.median_us == 7.0
    assert runner.calls == [(20, pipeline.FIRST_WARMUP)]  # one chunk was enough
    assert all(len(v) == 20 for v in run.timing.per_rep.values())
    assert run.outputs and "planes" in run.host


def test_sampling_stops_when_the_budget_ends(reg) -> None:  # type: ignore[no-untyped-def]
    """Never quiet: chunks until the budget (1 s, 10 ms a repetition) is spent, each sized
    to what is left of it, at most doubling; every interval cut to the samples used."""
    runner = HostRunner()
    run = _sample(reg, runner, TimingConfig(budget_s=1.0))
    assert not run.total.converged
    assert 100 <= run.total.samples <= 110
    sizes = [r for r, _ in runner.calls]
    assert sizes[:3] == [20, 20, 40] and all(r % 5 == 0 for r in sizes)
    assert [w for _, w in runner.calls] == [pipeline.FIRST_WARMUP] + \
        [pipeline.LATER_WARMUP] * (len(sizes) - 1)
    assert sum(sizes) - run.total.samples < sizes[-1]  # only the last chunk is cut
    assert {len(v) for v in run.timing.per_rep.values()} == {run.total.samples}
    assert run.timing.per_rep["total"] == [1.0 + i for i in range(run.total.samples)]


def test_sampling_stops_at_the_sample_cap(reg) -> None:  # type: ignore[no-untyped-def]
    runner = HostRunner()
    run = _sample(reg, runner, TimingConfig(budget_s=1e9, max_samples=60))
    assert run.total.samples == 60 and [r for r, _ in runner.calls] == [20, 20, 20]


def test_every_chunk_is_run_behind_the_config_s_spacer(reg) -> None:  # type: ignore[no-untyped-def]
    held: list[int] = []

    class Spaced(HostRunner):
        def pipeline(self, *a, spacer_bytes=0, **k):  # type: ignore[no-untyped-def]
            held.append(spacer_bytes)
            return super().pipeline(*a, spacer_bytes=spacer_bytes, **k)

    _sample(reg, Spaced(), TimingConfig(budget_s=1e9, max_samples=40, spacer_bytes=3 << 20))
    assert held == [3 << 20] * 2


def test_a_pipeline_without_a_total_is_an_error(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import HarnessError

    class NoTotal(HostRunner):
        def pipeline(self, *a, **k):  # type: ignore[no-untyped-def]
            outs, host, per = super().pipeline(*a, **k)
            return outs, host, {k: v for k, v in per.items() if k != "total"}

    with pytest.raises(HarnessError, match="no 'total' interval"):
        _sample(reg, NoTotal(), TimingConfig())


def test_run_checks_then_reports(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`harness run`: the point of the options, outputs checked, the seed's report."""
    from harness.errors import BadInput, ValidationFailed

    runner = HostRunner()
    monkeypatch.setattr(pipeline, "open_gpu", lambda device: runner)
    opts = {"batch": "3", "in_f": "16", "out_f": "8", "mode": "bidirectional",
            "with_gemm": "1"}
    rep = pipeline.run(reg, "spike_quant_gemm", opts, "ramp", 4)
    assert rep.checks >= 4 and runner.calls == [(4, 2)]
    assert rep.lines[0].startswith("batch=3 in_f=16 out_f=8 group_size=128 k=3.0 "
                                   "mode=bidirectional with_gemm=1 family=ramp T=")
    assert "repetitions=4" in rep.lines[0] and rep.lines[-1].startswith("Total time for 4")

    def off(outs):  # type: ignore[no-untyped-def]
        outs["spikes"].flat[0] ^= 1

    monkeypatch.setattr(pipeline, "open_gpu", lambda device: HostRunner(corrupt=off))
    with pytest.raises(ValidationFailed, match="output check failed: spikes: FAILED"):
        pipeline.run(reg, "spike_quant_gemm", opts, "ramp", 4)
    with pytest.raises(BadInput, match="unknown input family 'zipf'"):
        pipeline.run(reg, "spike_quant_gemm", opts, "zipf", 4)


def test_a_step_may_leave_out_only_its_optional_outputs(reg) -> None:  # type: ignore[no-untyped-def]
    """activation_fused's q_wide is optional (its kernel gets null and writes none); a
    required output left out fails the step."""
    st = reg.get("activation_fused")
    assert st.optional_outputs == ("q_wide",)
    x = np.random.default_rng(3).standard_normal((5, 40), dtype=np.float32)
    base = {"x": x, "vth": np.zeros(5, np.float32), "stats": np.zeros(4, np.int32),
            "q8": np.zeros((5, 40), np.int8)}
    cap = st.outputs(st.point(st.variant("unidirectional"), batch=5, in_f=40))["spikes"][0]
    ctx = HostContext(reg.stages)
    ctx.step("activation_fused", "unidirectional", 0,
             {**base, "spikes": np.zeros(cap, np.int8)}, batch=5, in_f=40, k=3.0)
    assert base["stats"][3] > 0  # the step ran: T decided
    with pytest.raises(KeyError, match="spikes"):
        ctx.step("activation_fused", "unidirectional", 0, dict(base), batch=5, in_f=40, k=3.0)
