"""GPU tests (marked ``gpu``): run on the H200 by scripts/gpu-check.sh, skipped elsewhere."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.engine import pipeline, validate
from harness.contract.timing import TimingConfig

pytestmark = pytest.mark.gpu


def test_every_stage_variant_validates(reg, gpu_runner) -> None:
    for st in reg.stages.values():
        for v in st.variants:
            bad = [c for c in validate.validate(st, v, gpu_runner, seeds=1) if not c.ok]
            assert not bad, bad[0].describe()


def test_pipeline_round_trips_on_every_family(reg, gpu_runner) -> None:
    """decode(encode(q)) == q and |x_rec - x| <= vth/2 on real runs (every mode)."""
    pipe = reg.pipelines["spike_quant_gemm"]
    cases = list(pipeline.validate(pipe, reg.stages, gpu_runner, seeds=1))
    assert cases and all(c.ok for c in cases), next(c.describe() for c in cases if not c.ok)
    names = {c.output for case in cases for c in case.comparisons}
    assert {"decode(encode(q)) == q", "|x_rec - x| <= vth/2"} <= names


def test_weight_path_overlaps_the_activation_path(reg, gpu_runner) -> None:
    """Two streams: the end-to-end time is less than the two paths' times added up."""
    pipe = reg.pipelines["spike_quant_gemm"]
    p = pipe.point(batch=16384, out_f=18944)
    ins = pipe.make_inputs(np.random.default_rng(0), "normal", p)
    _, _, per = gpu_runner.pipeline(pipe, reg.stages, ins, p, repeats=10, cold=True)
    med = {k: float(np.median(v)) for k, v in per.items()}
    serial = med["dynamic_spikes"] + med["encoding_total"] + med["weight_quant"]
    assert med["total"] < 0.95 * serial, med


def test_integer_outputs_are_deterministic(reg, gpu_runner) -> None:
    st = reg.get("dynamic_spikes")
    p = st.point(batch=257, in_f=3584)
    x = st.make_inputs(np.random.default_rng(5), "llm", p)
    a = gpu_runner.run(st, st.variants[0], x, p).outputs
    b = gpu_runner.run(st, st.variants[0], x, p).outputs
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name


def test_poison_catches_a_kernel_that_skips_rows(reg, gpu_runner) -> None:
    """Launching one block fewer than rows must leave poison that validation rejects."""
    st = reg.get("dynamic_spikes")

    def short_launch(run, bufs, p, v):  # type: ignore[no-untyped-def]
        b = int(p["batch"]) - 1
        run("dynamic_spikes", (b, 1, 1), (256, 1, 1), bufs["x"], bufs["q"], bufs["vth"],
            np.int32(b), np.int32(p["in_f"]), np.float32(p["k"]), np.float32(p["vth_min"]),
            np.float32(p["vth_max"]))

    broken = dataclasses.replace(st, launch=short_launch)
    p = st.point(batch=4, in_f=64)
    x = st.make_inputs(np.random.default_rng(0), "normal", p)
    res = gpu_runner.run(broken, st.variants[0], x, p)
    comps, problems = validate.judge(broken, st.variants[0], p, x, res)
    assert not problems
    vth = next(c for c in comps if c.output == "vth")
    assert not vth.ok and vth.nan_got == 1  # the poison is a NaN


def test_wrong_rounding_variant_is_rejected(reg, gpu_runner) -> None:
    """The away kernel judged as half-to-even must fail on the edge family's ties."""
    st = reg.get("dynamic_spikes")
    p = st.point(batch=6, in_f=3584)
    x = st.make_inputs(np.random.default_rng(1), "edge", p)
    res = gpu_runner.run(st, st.variant("away"), x, p)
    comps, _ = validate.judge(st, st.variant("default"), p, x, res)
    q = next(c for c in comps if c.output == "q")
    assert not q.ok and q.mismatches > 0


def test_event_timer_measures_a_known_delay(gpu_runner) -> None:
    """The delay kernel spins 200 µs by the global timer: the events must say so (±5 %)."""
    from pycuda.compiler import SourceModule

    from harness import paths
    from harness.contract import timing

    src = (paths.harness_cuda_dir() / "timing.cu").read_text()
    fn = SourceModule(src, no_extern_c=True, arch=gpu_runner.device.info.arch).get_function(
        "harness_delay")
    fn.prepare("Q")

    def launch() -> None:
        fn.prepared_async_call((1, 1, 1), (1, 1, 1), gpu_runner.stream, np.uint64(200_000))

    launch()
    gpu_runner.stream.synchronize()
    t = timing.measure(gpu_runner._sampler(launch, cold=True), TimingConfig(budget_s=1.0))
    assert 195.0 < t.median_us < 215.0, t


@pytest.mark.parametrize("batch", [8192, 65536])
def test_event_timing_agrees_with_ncu(reg, gpu_runner, tmp_path, batch: int) -> None:
    """At launches of 50 µs or more, the harness's cold event median and ncu's
    gpu__time_duration of the same kernel at the same point agree within 5 %."""
    import shutil

    from harness.engine import bench, session

    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    st = reg.get("dynamic_spikes")
    job = bench.plan([st], [f"batch={batch}"])[0]
    row = bench.measure(job, gpu_runner, bench.BenchConfig(), bench.RunMeta())
    assert row["status"] == "ok" and row["median_us"] >= 50, row
    prof = session.profile(st, job.variant, job.point, "normal", None, None, 0, tmp_path)
    ncu_us = prof[0]["duration"]
    print(f"batch {batch}: events {row['median_us']:.2f} us, ncu {ncu_us:.2f} us")
    assert abs(row["median_us"] - ncu_us) / ncu_us < 0.05, (row["median_us"], ncu_us)


@pytest.mark.parametrize("mode", ("unidirectional", "bidirectional", "twos_complement"))
def test_fused_activation_path_is_bit_identical_to_the_staged_kernels(
        reg, gpu_runner, mode: str) -> None:  # type: ignore[no-untyped-def]
    """activation_fused (both layouts) against dynamic_spikes -> find_min_max ->
    transform_absmax -> spike_encode run on the same x: the same vth bits, the same
    [qmin, qmax, o, T], the same planes, and the packed planes decode to the staged q."""
    from harness.spikes import spec

    def run(name: str, variant: str, ins: dict, **at):  # type: ignore[no-untyped-def]
        st = reg.get(name)
        v = st.variant(variant)
        names = {a.name for a in st.axes}
        p = st.point(v, **{k: val for k, val in at.items() if k in names})
        return gpu_runner.run(st, v, ins, p).outputs

    fused = reg.get("activation_fused")
    for fam in ("normal", "llm", "seed", "edge"):
        for b, f in ((1, 3584), (300, 130), (64, 4100), (7, 5)):
            at = {"batch": b, "in_f": f, "k": 3.0, "mode": mode}
            x = fused.make_inputs(np.random.default_rng([b, f]), fam,
                                  fused.point(fused.variant(mode), **at))["x"]
            q = run("dynamic_spikes", "default", {"x": x}, **at)
            mm = run("find_min_max", "default", {"q": q["q"]}, **at)["mm"]
            tr = run("transform_absmax", "default", {"q": q["q"], "mm": mm}, **at)
            t = spec.planes(int(tr["amax"][0]), mode)
            planes = run("spike_encode", mode, {"v": tr["v"]}, planes=t, **at)["spikes"]
            stats = np.array([mm[0], mm[1], tr["o"][0], t], np.int32)
            for layout, name in (("int8", mode), ("packed", f"packed_{mode}")):
                pt = fused.point(fused.variant(name), **at)
                got = fused.trim(gpu_runner.run(fused, fused.variant(name), {"x": x}, pt)
                                 .outputs, pt)
                where = f"{name} {fam} batch={b} in_f={f}"
                assert got["vth"].tobytes() == q["vth"].tobytes(), where
                assert np.array_equal(got["stats"], stats), (where, got["stats"], stats)
                if layout == "int8":
                    assert np.array_equal(got["spikes"], planes), where
                else:
                    qd = run("spike_decode_packed", mode,
                             {"packed": got["packed"], "o": stats[2:3].copy()},
                             planes=t, **at)["q"]
                    assert np.array_equal(qd, q["q"]), where


def test_graph_mode_times_one_replay_of_the_stage(reg, gpu_runner) -> None:  # type: ignore[no-untyped-def]
    """--graph: both activation_fused kernels captured once, replayed per sample; the run
    read back for checking is still a plain, poisoned launch that validates."""
    st = reg.get("activation_fused")
    v = st.variants[0]
    for batch in (1, 64):
        p = st.point(v, batch=batch)
        ins = st.make_inputs(np.random.default_rng(batch), "normal", p)
        res, t = gpu_runner.time(st, v, {k: a.copy() for k, a in ins.items()}, p,
                                 TimingConfig(budget_s=0.3, graph=True))
        comps, problems = validate.judge(st, v, p, ins, res)
        assert not problems and all(c.ok for c in comps), problems
        assert t.launch == "graph" and t.median_us > 0
        s = gpu_runner.time(st, v, ins, p, TimingConfig(budget_s=0.3))[1]
        print(f"activation_fused batch {batch}: graph replay {t.median_us:.2f} us "
              f"(noise {t.noise_pct:.2f}%), stream launches {s.median_us:.2f} us "
              f"(noise {s.noise_pct:.2f}%)")
