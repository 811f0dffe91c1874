"""The sweep loop and `harness bench` as a library call, with fake backends: rows written
as they land, peers first, interruption, the CPU fallback, pipelines beside stages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.engine import bench
from harness.engine.jobs import plan
from harness.errors import BadInput, GpuUnavailable
from harness.results import pipeline_rows
from harness.results import rows as results
from harness.results.provenance import RunMeta
from tests.engine.host import HostRunner
from tests.engine.test_measure import FAST, META, FakeGpu


@pytest.fixture
def jobs(reg):  # type: ignore[no-untyped-def]
    return plan([reg.get("dynamic_spikes")], ["batch=1,4", "in_f=64"])


def test_interrupted_sweep_keeps_finished_rows(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outputs = bench.Outputs(jobs, tmp_path)
    gen = bench.run(jobs, FakeGpu(), FAST, META, outputs)
    assert outputs.written == 0
    next(gen)  # first row measured and written
    assert outputs.written == 1  # counted where it landed, before it was handed out
    gen.close()  # as Ctrl-C would stop the loop
    outputs.close()
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert len(rows) == 1 and rows[0]["status"] == "ok"


def test_an_interrupt_as_a_row_lands_still_counts_it(jobs, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch) -> None:
    """Ctrl-C caught after the row is in the file but before the write returns: the count
    an interrupted run reports is the file's, so that row is counted (a count kept after
    the write returned would say one row fewer than the file holds)."""
    real = results.CsvWriter.write

    def landed_then_interrupted(self, row):  # type: ignore[no-untyped-def]
        real(self, row)
        raise KeyboardInterrupt

    outputs = bench.Outputs(jobs, tmp_path)
    monkeypatch.setattr(results.CsvWriter, "write", landed_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        outputs.write(jobs[0], {"stage": "dynamic_spikes", "status": "ok"})
    assert outputs.written == 1
    outputs.close()
    assert len(results.read_rows(tmp_path / "dynamic_spikes.csv")) == 1


def test_a_crash_mid_sweep_leaves_valid_csv(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    class Crashing(FakeGpu):
        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            if self.timed == 1:
                raise KeyboardInterrupt
            return super().time(*a, **k)

    with pytest.raises(KeyboardInterrupt):
        list(bench.run(jobs, Crashing(), FAST, META, tmp_path))
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [r["batch"] for r in rows] == ["1"]


def test_numpy_backend_rows(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    got = list(bench.run(jobs, NumpyRunner(), FAST, RunMeta(gpu="cpu"), tmp_path))
    assert [m.row["backend"] for m in got] == ["numpy", "numpy"]
    assert all(m.row["status"] == "ok" and m.row["pct_peak"] == "" for m in got)
    assert not any(m.job.is_pipeline for m in got)


def test_peers_first_and_the_speedup_over_the_best(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from harness.contract.timing import Timing

    class Peer(FakeGpu):
        def __init__(self, name: str, median: float) -> None:
            super().__init__()
            self.backend, self.median = name, median

        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            res, _ = super().time(*a, **k)
            return res, Timing(self.median, self.median, self.median, 0.1, 50, True)

    got = list(bench.run(jobs[:1], FakeGpu(), FAST, META, tmp_path,
                         peers=[Peer("torch", 400.0), Peer("torch_compile", 250.0)]))
    assert [m.row["backend"] for m in got] == ["torch", "torch_compile", "pycuda"]
    assert got[-1].row["speedup_vs_best_peer"] == 2.5  # 250 / 100
    on_disk = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [r["backend"] for r in on_disk] == ["torch", "torch_compile", "pycuda"]


def test_pipelines_in_the_same_loop(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A stage and a pipeline in one sweep: each row in its target's CSV with its own
    columns, the pipeline's beside the seed's five summaries."""
    class Both(HostRunner):
        time = FakeGpu.time

    ds, pipe = reg.get("dynamic_spikes"), reg.pipelines["spike_quant_gemm"]
    js = plan([ds, pipe], ["batch=1,2", "in_f=16"], None, {"out_f": "8"})
    gpu = Both()
    gpu.raise_exc, gpu.corrupt, gpu.converged = None, None, True
    got = list(bench.run(js, gpu, bench.BenchConfig(family="ramp", timing=FAST.timing), META,
                         tmp_path, stages=reg.stages))
    assert [m.job.is_pipeline for m in got] == [False, False, True, True]
    assert all(m.row["status"] == "ok" for m in got)
    assert "speedup_vs_best_peer" in got[0].row and "speedup_vs_best_peer" not in got[2].row
    with (tmp_path / "spike_quant_gemm.csv").open() as f:
        assert tuple(f.readline().strip().split(",")) == pipeline_rows.COLUMNS
    main = results.read_rows(tmp_path / "spike_quant_gemm.csv")
    assert [r["batch"] for r in main] == ["1", "2"] and main[0]["verified"] == "yes"
    for name, cols in pipeline_rows.SEED_SUMMARIES.items():
        view = results.read_rows(tmp_path / f"{name}.csv")
        assert len(view) == 2 and all(view[0][c] != "" for c in cols), name
    share = float(main[0]["encoding_share_pct"])
    assert share == pytest.approx(100 * float(main[0]["encoding_total_us"]) /
                                  float(main[0]["total_us"]))
    assert [r["batch"] for r in results.read_rows(tmp_path / "dynamic_spikes.csv")] == \
        ["1", "2"]


def test_pipeline_variants_side_by_side_without_summaries(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from harness.contract.stage import Variant

    pipe = reg.pipelines["spike_quant_gemm"]
    two = dataclasses.replace(
        pipe, name="two", seed_summaries=False,
        variants=(Variant("plain", pins=(("with_gemm", 0),)),
                  Variant("gemm", pins=(("with_gemm", 1),))))
    js = plan([two], ["batch=1,2", "in_f=16", "out_f=8"])
    got = list(bench.run(js, HostRunner(), FAST, META, tmp_path, stages=reg.stages))
    assert [(m.row["variant"], m.row["batch"]) for m in got] == [
        ("plain", 1), ("plain", 2), ("gemm", 1), ("gemm", 2)]
    assert all(m.row["status"] == "ok" for m in got)
    assert (tmp_path / "two.csv").exists() and not (tmp_path / "seed_e2e.csv").exists()


def test_bench_on_the_cpu(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The NumPy fallback: the default sweep kept small, half a second a point at most,
    nothing measured until the rows are asked for (the CSV is open, holding its header)."""
    run = bench.bench(reg, ["dynamic_spikes"], backend="numpy", budget=5.0, out_dir=tmp_path)
    assert not run.on_gpu and run.out_dir == tmp_path and run.note
    assert results.read_rows(tmp_path / "dynamic_spikes.csv") == []
    assert 0 < run.total < 17  # batch 1..65536, the largest points left out
    run.close()  # not measured: its file's lock let go
    run = bench.bench(reg, ["dynamic_spikes"], sweep=["batch=1,2", "in_f=8"],
                      variants=["all"], backend="numpy", budget=0.05, out_dir=tmp_path)
    assert run.total == 4
    got = list(run.rows)
    assert [(m.row["variant"], m.row["batch"]) for m in got] == [
        ("default", 1), ("default", 2), ("away", 1), ("away", 2)]
    assert len(results.read_rows(tmp_path / "dynamic_spikes.csv")) == 4


def test_bench_refuses_before_measuring(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def go(*names: str, **kw):  # type: ignore[no-untyped-def]
        return bench.bench(reg, list(names), backend="numpy", out_dir=tmp_path, **kw)

    with pytest.raises(BadInput, match="unknown input family 'zipf'"):
        go("dynamic_spikes", family="zipf")
    with pytest.raises(BadInput, match="--graph times CUDA graph replays"):
        go("dynamic_spikes", graph=True)
    with pytest.raises(BadInput, match="--drain and --hot exclude each other"):
        go("dynamic_spikes", drain=True, hot=True)
    with pytest.raises(BadInput, match="--drain times the GPU's write-back"):
        go("dynamic_spikes", drain=True)
    with pytest.raises(GpuUnavailable, match="spike_quant_gemm is a pipeline of GPU streams"):
        go("spike_quant_gemm")
    with pytest.raises(BadInput, match="--define tunes a stage's kernel"):
        go("activation_path", defines=["A=1"])
    assert not list(tmp_path.iterdir())
    # over a pipeline, on a GPU (the check itself: the CPU stops at the backend first)
    with pytest.raises(BadInput, match="not the pipeline spike_quant_gemm"):
        bench.check_drain(True, False, True, [reg.pipelines["spike_quant_gemm"]])
    # no --drain: nothing to check
    bench.check_drain(False, True, False, [reg.pipelines["spike_quant_gemm"]])


class FirstSlow(FakeGpu):
    """The process's first measurement takes 130 µs, every later one 100 µs: the order
    effect repeats are there to cancel (in three A/B sweeps on the H200 the build measured
    first was the slowest)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def time(self, *a, **k):  # type: ignore[no-untyped-def]
        from harness.contract.timing import Timing

        res, _ = super().time(*a, **k)
        t = 130.0 if self.calls == 0 else 100.0
        self.calls += 1
        return res, Timing(t, t - 1, t + 1, 0.1, 50, True)


def test_repeats_keep_the_first_measured_variant_from_losing(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = plan([reg.get("dynamic_spikes")], ["batch=4,8", "in_f=64"], variants=["all"])
    got = list(bench.run(jobs, FirstSlow(), FAST, META, tmp_path / "plain"))
    assert [m.row["median_us"] for m in got] == [130.0, 100.0, 100.0, 100.0]
    rep = list(bench.run(jobs, FirstSlow(), FAST, META, tmp_path / "rep", repeats=3))
    # Grouped by point: both variants of batch 4, then of batch 8; the slow first
    # measurement is one of away's three at batch 4 (the point's last unit opens its first
    # round), so its median repeat is not it.
    assert [(m.row["variant"], m.row["batch"]) for m in rep] == [
        ("default", 4), ("away", 4), ("default", 8), ("away", 8)]
    assert [m.row["median_us"] for m in rep] == [100.0] * 4
    assert rep[1].row["reason"] == "median of 3 repeats (130, 100, 100 µs; spread 30 %)"
    assert rep[1].row["noise_pct"] > 10  # the 30 µs repeat is in the noise
    assert all("median of 3 repeats" in m.row["reason"] for m in rep)
    on_disk = results.read_rows(tmp_path / "rep" / "dynamic_spikes.csv")
    assert [r["median_us"] for r in on_disk] == ["100"] * 4


def test_a_point_s_repeats_rotate_its_order(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = plan([reg.get("dynamic_spikes")], ["batch=4", "in_f=64"], variants=["all"])
    seen: list[str] = []

    class Recording(FakeGpu):
        def time(self, stage, variant, *a, **k):  # type: ignore[no-untyped-def]
            seen.append(variant.name)
            return super().time(stage, variant, *a, **k)

    list(bench.run(jobs, Recording(), FAST, META, tmp_path, repeats=4))
    assert seen == ["away", "default"] * 2 + ["default", "away"] * 2


def test_every_unit_of_a_round_is_placed_behind_that_round_s_spacer(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = plan([reg.get("dynamic_spikes")], ["batch=4", "in_f=64"], variants=["all"])
    seen: list[tuple[str, int]] = []

    class Recording(FakeGpu):
        def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
            seen.append((variant.name, cfg.spacer_bytes))
            return super().time(stage, variant, inputs, point, cfg)

    list(bench.run(jobs, Recording(), FAST, META, tmp_path, repeats=3))
    mb = [b >> 20 for _, b in seen]
    assert mb == [0, 0, 2, 2, 6, 6]  # a round's units share its placement
    assert {v for v, b in seen if b == 2 << 20} == {"default", "away"}
    seen.clear()
    list(bench.run(jobs, Recording(), FAST, META, tmp_path / "once"))
    assert [b for _, b in seen] == [0, 0]  # one measurement: nothing held


def test_variants_that_pin_an_axis_rotate_with_the_rest(reg) -> None:  # type: ignore[no-untyped-def]
    # spike_encode's variants pin its mode: the point without the pinned axis is shared.
    jobs = plan([reg.get("spike_encode")], ["batch=1,2", "in_f=8"], variants=["all"])
    groups = bench._points(jobs)
    assert len(groups) == 2 and len({j.variant.name for j in groups[0]}) > 1
    assert all({j.point["batch"] for j in g} == {g[0].point["batch"]} for g in groups)


def test_two_peers_of_one_name_stay_two_rows(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    class Peer(FakeGpu):
        backend = "torch"

    got = list(bench.run(jobs[:1], FakeGpu(), FAST, META, tmp_path, peers=[Peer(), Peer()],
                         repeats=3))
    assert [m.row["backend"] for m in got] == ["torch", "torch", "pycuda"]
    assert all("median of 3 repeats" in m.row["reason"] for m in got)


def test_repeats_with_peers_keep_peers_first_and_the_speedup(jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from harness.contract.timing import Timing

    class Peer(FakeGpu):
        backend = "torch"

        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            res, _ = super().time(*a, **k)
            return res, Timing(300.0, 299.0, 301.0, 0.1, 50, True)

    got = list(bench.run(jobs[:1], FakeGpu(), FAST, META, tmp_path, peers=[Peer()],
                         repeats=2))
    assert [m.row["backend"] for m in got] == ["torch", "pycuda"]
    assert got[-1].row["speedup_vs_best_peer"] == 3.0


def _counting(monkeypatch) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    """Lists that fill as the sweep draws a point's inputs and as its checks compute a
    reference (the fake GPU's own run passes no ``given``: not counted), each entry the
    variant it was for."""
    from harness.contract.stage import Stage
    from harness.engine import measure as m

    drawn: list[str] = []
    referenced: list[str] = []
    draw, expected = m.job_inputs, Stage.expected

    def counting_draw(job, cfg):  # type: ignore[no-untyped-def]
        drawn.append(job.variant.name)
        return draw(job, cfg)

    def counting_expected(self, inputs, point, variant, given=None):  # type: ignore[no-untyped-def]
        if given is not None:
            referenced.append(variant.name)
        return expected(self, inputs, point, variant, given)

    monkeypatch.setattr(m, "job_inputs", counting_draw)
    monkeypatch.setattr(Stage, "expected", counting_expected)
    return drawn, referenced


def _counted_repeats(reg, tmp_path: Path, monkeypatch, stage: str, wrong: tuple[int, str],
                     repeats: int = 3) -> tuple[list[str], list[str], list]:  # type: ignore[no-untyped-def]
    """Two builds of ``stage`` at two points, three repeats each, one repeat's output
    ``wrong[1]`` spoilt at the ``wrong[0]``-th launch: the inputs drawn, the references the
    checks computed, and the rows."""
    drawn, referenced = _counting(monkeypatch)
    jobs = plan([reg.get(stage)], ["batch=4,8", "in_f=64"], define_specs=["BLOCK=64,128"])
    calls = {"n": 0}

    class WrongOnce(FakeGpu):
        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            res, t = super().time(*a, **k)
            calls["n"] += 1
            if calls["n"] == wrong[0]:
                res.outputs[wrong[1]][...] = -1
            return res, t

    got = [x.row for x in bench.run(jobs, WrongOnce(), FAST, META, tmp_path,
                                    repeats=repeats)]
    return drawn, referenced, got


def test_repeats_draw_a_point_once_and_reference_it_once(reg, tmp_path: Path,
                                                         monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A tuning sweep's repeats run the same binaries on the same data: the point's inputs
    are drawn once and its reference computed once, for every build of the variant (each
    is judged as the declared variant), yet every repeat is checked (a repeat whose
    outputs are wrong still fails its row)."""
    # Launches 7-12 are the second point's (2 builds x 3 repeats a point).
    drawn, referenced, got = _counted_repeats(reg, tmp_path, monkeypatch, "find_min_max",
                                              (9, "mm"))
    assert len(drawn) == 2  # once a point, not once a build and repeat (12)
    # Once a point, as the declared variant: 2, not 2 x 2 builds, nor 2 x 2 x 3 repeats.
    assert referenced == ["default"] * 2
    assert [r["status"] for r in got].count("failed") == 1
    failed = next(r for r in got if r["status"] == "failed")
    assert failed["batch"] == 8 and "mm" in failed["reason"]


def test_without_repeats_a_point_s_builds_share_its_draw_and_reference(reg, tmp_path: Path,
                                                                      monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without --repeats a --define sweep measures a point's builds side by side: the
    point's inputs are drawn once and its reference computed once for both builds (not
    once a build), and a build whose outputs are wrong still fails its row."""
    # Launches: builds 64 and 128 at batch 4, then 128 and 64 at 8 (the order turns by one
    # a point); the third (128 at 8) is wrong.
    drawn, referenced, got = _counted_repeats(reg, tmp_path, monkeypatch, "find_min_max",
                                              (3, "mm"), repeats=1)
    assert len(drawn) == 2 and referenced == ["default"] * 2
    assert [(r["variant"], r["batch"], r["status"]) for r in got] == [
        ("default[BLOCK=64]", 4, "ok"), ("default[BLOCK=128]", 4, "ok"),
        ("default[BLOCK=128]", 8, "failed"), ("default[BLOCK=64]", 8, "ok")]


class _Told(FakeGpu):
    """A peer that keeps the variant each call got, and a time of its own."""

    def __init__(self, name: str, median: float) -> None:
        super().__init__()
        self.backend, self.median, self.told = name, median, []

    def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
        from harness.contract.timing import Timing

        self.told.append(variant.name)
        res, _ = super().time(stage, variant, inputs, point, cfg)
        return res, Timing(self.median, self.median, self.median, 0.1, 50, True)


@pytest.mark.parametrize("repeats", [1, 2])
def test_a_define_sweep_times_its_peers_once_a_point_on_the_declared_variant(
        reg, tmp_path: Path, repeats: int) -> None:  # type: ignore[no-untyped-def]
    """Two builds a point: the peers are timed once a point, with the first build, on the
    declared variant (a peer given a build's defines would round away from zero as the
    build does, and fail beside it; ``#ifdef ROUNDING_AWAY``: any value is away). The
    failing builds get no speedup."""
    import dataclasses

    cfg = dataclasses.replace(FAST, family="edge")
    jobs = plan([reg.get("dynamic_spikes")], ["batch=6,10", "in_f=64"],
                define_specs=["ROUNDING_AWAY=1", "BLOCK=64,128"])
    peer = _Told("torch", 300.0)
    got = [m.row for m in bench.run(jobs, FakeGpu(), cfg, META, tmp_path, peers=[peer],
                                    repeats=repeats)]
    builds = ("default[ROUNDING_AWAY=1,BLOCK=64]", "default[ROUNDING_AWAY=1,BLOCK=128]")
    assert [(r["backend"], r["variant"], r["batch"], r["status"]) for r in got] == [
        ("torch", "default", 6, "ok"), ("pycuda", builds[0], 6, "failed"),
        ("pycuda", builds[1], 6, "failed"), ("torch", "default", 10, "ok"),
        ("pycuda", builds[1], 10, "failed"), ("pycuda", builds[0], 10, "failed")]
    assert peer.told == ["default"] * 2 * repeats
    assert [r["speedup_vs_best_peer"] for r in got if r["backend"] == "pycuda"] == [""] * 4
    again = plan([reg.get("dynamic_spikes")], ["batch=6", "in_f=64"],
                 define_specs=["BLOCK=64,128"])
    later = [m.row for m in bench.run(again, FakeGpu(), cfg, META, tmp_path / "b",
                                      peers=[_Told("torch", 200.0)], repeats=repeats)]
    assert [(r["backend"], r["speedup_vs_best_peer"]) for r in later[1:]] == \
        [("pycuda", 2.0), ("pycuda", 2.0)]  # the later build's too, from the same rows


def test_peers_and_ours_share_a_point_s_draw_and_reference(reg, tmp_path: Path,
                                                           monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two peers and ours at a point: its inputs drawn once and its reference computed
    once, where each of the three drew and computed its own (seconds each at batch 65536)."""
    drawn, referenced = _counting(monkeypatch)

    class Peer(FakeGpu):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.backend = name

    jobs = plan([reg.get("find_min_max")], ["batch=4,8", "in_f=64"])
    got = [x.row for x in bench.run(jobs, FakeGpu(), FAST, META, tmp_path,
                                    peers=[Peer("torch"), Peer("torch_compile")])]
    assert [r["status"] for r in got] == ["ok"] * 6
    assert len(drawn) == 2 and referenced == ["default"] * 2


def test_a_point_s_memo_lives_for_that_point_alone(reg, tmp_path: Path,
                                                   monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without --repeats a point shared by a peer and ours gets a memo of its own, which
    holds that point's draw and nothing of another's, and is let go before the next."""
    from harness.engine import measure as m

    made: list[m.PointMemo] = []

    class Recorded(m.PointMemo):
        def __post_init__(self) -> None:
            super().__post_init__()
            made.append(self)

    monkeypatch.setattr(bench, "PointMemo", Recorded)

    class Peer(FakeGpu):
        backend = "torch"

    jobs = plan([reg.get("find_min_max")], ["batch=4,8", "in_f=64"])
    list(bench.run(jobs, FakeGpu(), FAST, META, tmp_path, peers=[Peer()]))
    assert [list(memo.inputs) for memo in made] == [[m.point_key(jobs[0])],
                                                   [m.point_key(jobs[1])]]
    made.clear()
    list(bench.run(jobs, FakeGpu(), FAST, META, tmp_path / "alone"))
    assert made == []  # a point measured once keeps nothing


def test_memo_slots_are_apart_by_target_point_and_rows(reg) -> None:  # type: ignore[no-untyped-def]
    """Two stages at the same axis values, or one point checked on two row subsets, never
    share a draw or a reference slot."""
    from harness.engine import measure as m

    quant = plan([reg.get("weight_quantize")], ["out_f=8", "in_f=64"])[0]
    scales = plan([reg.get("compute_scales")], ["out_f=8", "in_f=64"])[0]
    assert quant.point == scales.point
    memo = m.PointMemo()
    assert memo.reference_slot(quant, None) is not memo.reference_slot(scales, None)
    memo.job_inputs(quant, FAST)
    memo.job_inputs(scales, FAST)
    assert len(memo.inputs) == 2  # each stage's own draw
    assert memo.reference_slot(quant, np.array([0, 1])) is not \
        memo.reference_slot(quant, np.array([2, 3]))
    assert memo.reference_slot(quant, np.array([0, 1])) is \
        memo.reference_slot(quant, np.array([0, 1]))


def test_a_reference_that_reads_the_kernel_s_outputs_runs_every_repeat(reg, tmp_path: Path,
                                                                        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # dynamic_spikes' reference quantises with the kernel's own vth (``given``): kept, it
    # would judge a repeat against another repeat's outputs.
    drawn, referenced, got = _counted_repeats(reg, tmp_path, monkeypatch, "dynamic_spikes",
                                              (2, "q"))
    assert len(drawn) == 2 and len(referenced) == 12
    assert [r["status"] for r in got].count("failed") == 1


def test_each_repeat_gets_its_own_copy_of_the_inputs(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """transform_absmax writes v over its input q: a repeat that got the last repeat's
    overwritten q would be judged wrong. Each gets a fresh copy of the point's draw."""

    class InPlace(FakeGpu):
        def time(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
            res, t = super().time(stage, variant, inputs, point, cfg)
            inputs["q"][...] = res.outputs["v"]  # what the kernel does to its buffer
            return res, t

    jobs = plan([reg.get("transform_absmax")], ["batch=4,8", "in_f=64"], variants=["all"])
    got = [x.row for x in bench.run(jobs, InPlace(), FAST, META, tmp_path, repeats=3)]
    assert got and all(r["status"] == "ok" for r in got), [r["reason"] for r in got]


def test_a_memo_without_room_draws_and_references_every_time(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.engine import measure as m

    drawn: list[int] = []
    draw = m.job_inputs
    monkeypatch.setattr(m, "job_inputs", lambda job, cfg: drawn.append(1) or draw(job, cfg))
    jobs = plan([reg.get("find_min_max")], ["batch=4", "in_f=64"])
    full, empty = m.PointMemo(), m.PointMemo(limit_bytes=0)
    for memo in (full, empty):
        for _ in range(3):
            assert m.measure(jobs[0], FakeGpu(), FAST, META, memo=memo)["status"] == "ok"
    assert len(drawn) == 1 + 3
    assert empty.kept_bytes == 0 and not empty.inputs
    assert all(not ref for ref in empty.references.values())
    assert full.kept_bytes > 0 and all(full.references.values())


def test_a_non_array_input_is_named_with_repeats_too(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    st = dataclasses.replace(reg.get("find_min_max"), make_inputs=lambda rng, fam, p: {"q": 3})
    jobs = plan([st], ["batch=4", "in_f=64"])
    [plain] = [x.row for x in bench.run(jobs, FakeGpu(), FAST, META, tmp_path / "a")]
    [rep] = [x.row for x in bench.run(jobs, FakeGpu(), FAST, META, tmp_path / "b", repeats=2)]
    assert plain["status"] == rep["status"] == "failed"
    assert "not a NumPy array" in plain["reason"] and "not a NumPy array" in rep["reason"]


def test_repeats_are_refused_below_one_and_on_a_cluster(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from harness.cluster import bench as cluster_bench
    from harness.cluster.options import ClusterSpec

    with pytest.raises(BadInput, match="--repeats must be at least 1"):
        bench.bench(reg, ["dynamic_spikes"], backend="numpy", out_dir=tmp_path, repeats=0)
    with pytest.raises(BadInput, match="--repeats measures a point's rows in one process"):
        cluster_bench.bench(reg, ["dynamic_spikes"], cluster=ClusterSpec("local"),
                            out_dir=tmp_path, repeats=2)
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc on PATH")
def test_a_twin_of_against_lands_beside_its_variant(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """bench --against: each point's twin row (``default@snap``) lands in the same CSV right
    after its variant's, with the earlier source's kernel hash, no peer measured for it and
    so no speedup; the peers are measured once, beside the variant."""
    import shutil

    from harness import paths
    from harness.contract.kernel import kernel_hash
    from harness.engine import baseline

    snap = tmp_path / "snap"
    shutil.copytree(paths.kernels_dir(), snap / "kernels")
    cu = snap / "kernels" / "dynamic_spikes.cu"
    cu.write_text(cu.read_text() + "\n// an earlier source: another hash\n")
    st = reg.get("dynamic_spikes")
    jobs = baseline.with_twins(plan([st], ["batch=1,4", "in_f=64"]), snap / "kernels", "snap")
    out = tmp_path / "out"

    class Torch(FakeGpu):
        backend = "torch"

    got = list(bench.run(jobs, FakeGpu(), FAST, META, out, peers=[Torch()]))
    assert [(m.row["backend"], m.row["variant"], m.job.twin_of) for m in got] == [
        ("torch", "default", ""), ("pycuda", "default", ""),
        ("pycuda", "default@snap", "default")] * 2
    twin = got[2].row
    assert twin["kernel_hash"] == kernel_hash(jobs[1].target, jobs[1].variant)
    assert twin["kernel_hash"] != got[1].row["kernel_hash"] != ""
    assert twin["status"] == "ok" and got[1].row["speedup_vs_best_peer"] not in ("", None)
    assert twin["speedup_vs_best_peer"] in ("", None)
    on_disk = results.read_rows(out / "dynamic_spikes.csv")
    assert [r["variant"] for r in on_disk] == [m.row["variant"] for m in got]


def test_against_needs_the_gpu_and_writes_nothing(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match="--against times kernel builds: it needs the pycuda"):
        bench.bench(reg, ["dynamic_spikes"], backend="numpy", out_dir=tmp_path, against=".")
    assert not list(tmp_path.iterdir())


def test_a_pipeline_s_peers_land_before_its_row_and_the_report_pairs_them(
        reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """spike_linear beside its PyTorch peers in one sweep: each point's peer rows, then
    ours, in the pipeline's CSV; the report sets ours against the peers of its own point."""
    pytest.importorskip("torch", reason="the peers need PyTorch (CI installs the CPU build)")
    pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
    from harness.backends.torch import TorchRunner
    from harness.results import report
    from tests.backends.test_torch import _timed_on_cpu

    pipe = reg.pipelines["spike_linear"]
    js = plan([pipe], ["batch=2,3", "in_f=128", "out_f=16"], ["default"])
    peer = TorchRunner("linear_bf16", named=list(pipe.peers))
    _timed_on_cpu(peer)  # its fake sampler says 10 µs
    ours = HostRunner(times=lambda i: 4.0)
    got = list(bench.run(js, ours, bench.BenchConfig(family="normal", timing=FAST.timing),
                         META, tmp_path, peers=[peer], stages=reg.stages))
    assert [(m.row["backend"], m.row["batch"]) for m in got] == [
        ("linear_bf16", 2), ("pycuda", 2), ("linear_bf16", 3), ("pycuda", 3)]
    assert all(m.row["status"] == "ok" for m in got), [m.row["reason"] for m in got]
    table = report.pipeline_table(tmp_path, ["spike_linear"], [2, 3]).splitlines()[2:]
    assert [ln.split(" | ")[1] for ln in table] == ["linear_bf16", "pycuda"] * 2
    assert all(ln.endswith("| linear_bf16 2.50x | ok |") for ln in table[1::2]), table
    # With repeats, the peer's rows are combined as the pipeline's rows are (total_us).
    again = tmp_path / "repeats"
    got = list(bench.run(js[:1], ours, bench.BenchConfig(family="normal", timing=FAST.timing),
                         META, again, peers=[peer], stages=reg.stages, repeats=3))
    assert [(m.row["backend"], m.row["status"]) for m in got] == [("linear_bf16", "ok"),
                                                                  ("pycuda", "ok")]
    assert "median of 3 repeats (10, 10, 10 µs" in got[0].row["reason"]


def test_resume_measures_only_the_points_not_yet_measured(reg, tmp_path: Path) -> None:
    """The same command again with --resume: a point whose rows are all there and ok is left
    as it is; a point with a row missing, failed, or of another source is measured again
    whole; nothing already measured is lost."""
    from harness.results import rows as files_rows

    def sweep(**kw):  # type: ignore[no-untyped-def]
        run = bench.bench(reg, ["dynamic_spikes"], sweep=["batch=1,2,4", "in_f=64"],
                          backend="numpy", budget=0.05, out_dir=tmp_path, **kw)
        got = list(run.rows)
        return run, [(m.row["batch"], m.row["status"]) for m in got]

    first, got = sweep()
    assert [b for b, _ in got] == [1, 2, 4] and first.resumed == 0
    again, got = sweep(resume=True)
    assert got == [] and again.resumed == 3 and again.total == 0
    path = tmp_path / "dynamic_spikes.csv"
    kept = files_rows.read_rows(path)
    assert len(kept) == 3
    # batch 2's row failed, batch 4's is of another commit: both measured again, appended
    kept[1]["status"], kept[1]["reason"] = "failed", "out: 1 mismatch"
    kept[2]["git_sha"] = "0000000"
    with files_rows.CsvWriter(path, "overwrite") as w:
        for r in kept:
            w.write({k: v for k, v in r.items()})
    third, got = sweep(resume=True)
    assert [b for b, _ in got] == [2, 4] and third.resumed == 1
    assert len(files_rows.read_rows(path)) == 5
    # A later failed row of batch 1 undoes its earlier ok one: measured again.
    kept = files_rows.read_rows(path)
    with files_rows.CsvWriter(path, "append") as w:
        w.write({**kept[0], "status": "failed", "reason": "out: 1 mismatch"})
    fourth, got = sweep(resume=True)
    assert [b for b, _ in got] == [1] and fourth.resumed == 2
    with pytest.raises(BadInput, match="--resume and --overwrite exclude each other"):
        bench.bench(reg, ["dynamic_spikes"], backend="numpy", out_dir=tmp_path, resume=True,
                    overwrite=True)


def _drop_row(path: Path, batch: str, variant: str) -> None:
    """The file without our row of ``variant`` at ``batch``: a point left part-measured."""
    from harness.results import rows as files_rows

    kept = [r for r in files_rows.read_rows(path)
            if not (r["batch"] == batch and r["variant"] == variant)]
    with files_rows.CsvWriter(path, "overwrite") as w:
        for r in kept:
            w.write(r)


def test_resume_keeps_a_point_s_builds_together(reg, tmp_path: Path) -> None:
    """A point whose one build's row is missing is measured again with all its builds (and
    the command's own rows are recognised whatever --resume or --append it had)."""
    from harness.engine import resume

    kw = dict(sweep=["batch=1,2", "in_f=64"], backend="numpy", budget=0.05, out_dir=tmp_path,
              defines=["BLOCK=64,128"])
    list(bench.bench(reg, ["dynamic_spikes"], **kw).rows)
    _drop_row(tmp_path / "dynamic_spikes.csv", "2", "default[BLOCK=128]")
    run = bench.bench(reg, ["dynamic_spikes"], resume=True, **kw)
    got = [(m.row["batch"], m.row["variant"]) for m in run.rows]
    assert got == [(2, "default[BLOCK=128]"), (2, "default[BLOCK=64]")] and run.resumed == 1
    assert resume.same_command("harness bench s --resume --append --out x") == \
        "harness bench s --out x"
    assert resume.same_command("harness bench s --overwrite") == "harness bench s"


def test_the_command_of_a_resumed_run_and_of_merged_processes() -> None:
    """``same_command``: less --resume, --append and --overwrite; with ``out``, less --out
    and its folder too (either spelling), nothing else; a line shlex cannot split is kept
    as it is."""
    from harness.engine import resume

    cmd = "harness bench s --out p0 --repeats 3 --append"
    assert resume.same_command(cmd, out=True) == "harness bench s --repeats 3"
    assert resume.same_command(cmd) == "harness bench s --out p0 --repeats 3"
    assert resume.same_command("harness bench s --out=p1 --graph", out=True) == \
        "harness bench s --graph"
    assert resume.same_command("harness bench s --out=p1 --graph") == \
        "harness bench s --out=p1 --graph"
    assert resume.same_command("harness bench 'a b' --resume") == "harness bench 'a b'"
    assert resume.same_command('harness bench "s --resume') == 'harness bench "s --resume'


def test_resume_matches_a_stage_s_and_a_pipeline_s_rows_by_their_own_columns() -> None:
    """A stage row of another kernel source, and a pipeline row of another launch mode or
    other kernel hashes, is not the row the job would write now: its point is measured
    again."""
    from types import SimpleNamespace

    from harness.engine import resume

    def done(pipeline: bool, want: dict[str, str], have: dict[str, str]) -> int:
        job = SimpleNamespace(target=SimpleNamespace(name="t"), is_pipeline=pipeline)
        base = {"stage": "t", "backend": "pycuda", "variant": "default", "batch": "8",
                "git_sha": "abc", "gpu": "G", "command": "harness bench t --resume"}
        todo, n = resume.pending([[job]], lambda j: [{**base, **want}],  # type: ignore[list-item]
                                 lambda j: [{**base, **have, "status": "ok"}])
        assert len(todo) == 1 - n
        return n

    assert done(False, {"kernel_hash": "k1"}, {"kernel_hash": "k1"}) == 1
    assert done(False, {"kernel_hash": "k1"}, {"kernel_hash": "k0"}) == 0
    pipe = {"mode": "graph", "kernel_hashes": "h1"}
    assert done(True, pipe, pipe) == 1
    assert done(True, pipe, {**pipe, "mode": "stream"}) == 0
    assert done(True, pipe, {**pipe, "kernel_hashes": "h0"}) == 0


def test_resume_knows_a_define_sweep_s_peer_rows(reg, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A --define sweep with peers on a (fake) GPU: its peer rows, once a point and named
    after the declared variant, are the rows --resume looks for, so a finished sweep is
    left as it is, and a point that lost a build's row is measured again, its peers once."""
    from harness.engine import devices

    peer = _Told("torch", 300.0)
    monkeypatch.setattr(devices, "choose", lambda backend, device: devices.Chosen(
        FakeGpu(), META, "fake"))  # type: ignore[arg-type]
    monkeypatch.setattr(devices, "peers", lambda chosen, which, named: [peer])
    kw = dict(sweep=["batch=1,2", "in_f=64"], budget=0.05, out_dir=tmp_path,
              defines=["BLOCK=64,128"], peers="torch")
    first = bench.bench(reg, ["dynamic_spikes"], **kw)
    assert first.total == 6 and len(list(first.rows)) == 6
    again = bench.bench(reg, ["dynamic_spikes"], resume=True, **kw)
    assert list(again.rows) == [] and again.resumed == 2 and again.total == 0
    _drop_row(tmp_path / "dynamic_spikes.csv", "2", "default[BLOCK=128]")
    third = bench.bench(reg, ["dynamic_spikes"], resume=True, **kw)
    got = [(m.row["backend"], m.row["variant"], m.row["batch"]) for m in third.rows]
    assert got == [("torch", "default", 2), ("pycuda", "default[BLOCK=128]", 2),
                   ("pycuda", "default[BLOCK=64]", 2)] and third.total == 3


def test_resume_counts_a_row_skipped_by_a_rule_of_the_point_as_done(reg, tmp_path: Path) -> None:
    """int_gemm's int8 variant does not take the llm family: its row is skipped, again
    whenever asked, so the point is done and not measured (and appended) again."""
    kw = dict(variants=["all"], family="llm", sweep=["batch=2", "in_f=64", "out_f=16"],
              backend="numpy", budget=0.05, out_dir=tmp_path)
    first = [m.row["status"] for m in bench.bench(reg, ["int_gemm"], **kw).rows]
    assert "skipped" in first and "ok" in first
    again = bench.bench(reg, ["int_gemm"], resume=True, **kw)
    assert list(again.rows) == [] and again.resumed == 1


def test_a_define_that_changes_the_answer_fails_its_check(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every build is judged as its declared variant: rounding away from zero set by
    --define on the half-to-even variant fails on the edge family's ties (the fake GPU
    does what the build's defines say), while the declared away variant, judged as
    itself, passes, and so does the plain default."""
    import dataclasses

    cfg = dataclasses.replace(FAST, family="edge")
    got = []
    for variants, defines in ((None, ["ROUNDING_AWAY=1"]), (["away"], []), (None, [])):
        jobs = plan([reg.get("dynamic_spikes")], ["batch=6", "in_f=64"], variants,
                    define_specs=defines)
        out = tmp_path / str(len(got))
        got += [(x.row["variant"], x.row["status"]) for x in bench.run(jobs, FakeGpu(), cfg,
                                                                       META, out)]
    assert got == [("default[ROUNDING_AWAY=1]", "failed"), ("away", "ok"), ("default", "ok")]


@pytest.mark.parametrize("repeats", [1, 2])
def test_a_speedup_over_a_peer_whose_time_can_hold_host_time_says_so(
        jobs, tmp_path: Path, repeats: int) -> None:  # type: ignore[no-untyped-def]
    """The best peer's row says its samples were timed without the gate (host time can be
    inside: statistics/h200's activation_fused torch row at batch 16384, 4095.74 µs, that
    the README's 21.22x rests on); our row's speedup is over that time, and says so. Over a
    gated peer nothing is said."""
    import dataclasses

    from harness.contract.timing import Timing

    class Peer(FakeGpu):
        def __init__(self, name: str, median: float, ungated: int) -> None:
            super().__init__()
            self.backend, self.median, self.ungated = name, median, ungated

        def time(self, *a, **k):  # type: ignore[no-untyped-def]
            res, _ = super().time(*a, **k)
            t = Timing(self.median, self.median, self.median, 0.1, 20, True)
            return res, dataclasses.replace(t, ungated=self.ungated)

    got = [m.row for m in bench.run(jobs[:1], FakeGpu(), FAST, META, tmp_path / "a",
                                    peers=[Peer("torch", 300.0, 20),
                                           Peer("torch_compile", 400.0, 0)],
                                    repeats=repeats)]
    peer, ours = got[0], got[-1]
    assert "host time can be inside" in peer["reason"]
    assert ours["speedup_vs_best_peer"] == 3.0
    assert ("vs best peer: torch's time can hold host time (20 of 20 samples timed "
            "without the gate)") in ours["reason"]
    on_disk = results.read_rows(tmp_path / "a" / "dynamic_spikes.csv")[-1]
    assert "vs best peer: torch's time can hold host time" in on_disk["reason"]
    gated = [m.row for m in bench.run(jobs[:1], FakeGpu(), FAST, META, tmp_path / "b",
                                      peers=[Peer("torch", 300.0, 0),
                                             Peer("torch_compile", 400.0, 20)],
                                      repeats=repeats)]
    assert gated[-1]["speedup_vs_best_peer"] == 3.0 and "vs best peer" not in \
        gated[-1]["reason"]  # the best peer (torch) was gated


def test_the_sampling_options_stop_each_point_where_they_say(reg, tmp_path: Path) -> None:
    """--max-samples caps a point's samples, --min-samples keeps it sampling past a met
    noise target, --max-noise is the target: each reaches the point's TimingConfig."""
    from harness.engine.bench import Sampling

    def samples(sampling: Sampling, out: str) -> list[tuple[int, str]]:
        run = bench.bench(reg, ["dynamic_spikes"], sweep=["batch=4,8", "in_f=64"],
                          backend="numpy", budget=5.0, out_dir=tmp_path / out,
                          sampling=sampling)
        return [(int(m.row["samples"]), m.row["reason"]) for m in run.rows]

    # A target no run meets: the cap ends each point, and the row says it was the cap.
    assert samples(Sampling(max_noise_pct=1e-9, min_samples=5, max_samples=25), "a") == \
        [(25, "noise above target when the sample cap was reached")] * 2
    # Any noise meets it: the floor ends each point.
    assert samples(Sampling(max_noise_pct=1e9, min_samples=40, max_samples=100), "b") == \
        [(40, "")] * 2
    with pytest.raises(BadInput, match="--max-noise must be a finite percentage above 0"):
        bench.bench(reg, ["dynamic_spikes"], backend="numpy", out_dir=tmp_path / "c",
                    sampling=Sampling(max_noise_pct=float("inf")))
    with pytest.raises(BadInput, match=r"--min-samples \(9\) must be at least 1 and at most "
                                       r"--max-samples \(8\)"):
        bench.bench(reg, ["dynamic_spikes"], backend="numpy", out_dir=tmp_path / "d",
                    sampling=Sampling(min_samples=9, max_samples=8))
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()


class _LosesContext(FakeGpu):
    """A fake GPU whose third timed run hits an illegal memory access, as PyCUDA says it;
    every later call would fail too (the context is gone)."""

    def time(self, *a, **k):  # type: ignore[no-untyped-def]
        if self.timed >= 2:
            self.timed += 1
            raise RuntimeError("cuStreamSynchronize failed: an illegal memory access was "
                               "encountered")
        return super().time(*a, **k)


def test_a_lost_context_stops_the_sweep_at_its_row(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A sticky CUDA error fails its row, which says it, and stops the sweep there (each
    later job would fail on its own first call, with a message about that call): the rows
    before it and its own are written, the rest named as not run."""
    from harness.errors import ContextLost

    jobs = plan([reg.get("dynamic_spikes")], ["batch=1,2,4,8", "in_f=64"])
    got: list[bench.Measured] = []
    with pytest.raises(ContextLost, match=r"lost at dynamic_spikes \[default\] batch=4.*"
                       r"illegal memory access.*\); 1 job\(s\) not run: run them again"):
        got.extend(bench.run(jobs, _LosesContext(), FAST, META, tmp_path))
    assert [m.row["status"] for m in got] == ["ok", "ok", "failed"]
    on_disk = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [(r["batch"], r["status"]) for r in on_disk] == [("1", "ok"), ("2", "ok"),
                                                            ("4", "failed")]
    assert ContextLost("x").exit_code == 1


def test_a_lost_context_under_repeats_keeps_the_point_s_repeats(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """With --repeats the point's rows land after its last repeat; a lost context mid-point
    writes each unit's row from the repeats it has, then stops."""
    from harness.errors import ContextLost

    jobs = plan([reg.get("dynamic_spikes")], ["batch=4,8", "in_f=64"], variants=["all"])
    with pytest.raises(ContextLost, match=r"4 job\(s\) not run \(this point's included"):
        list(bench.run(jobs, _LosesContext(), FAST, META, tmp_path, repeats=3))
    on_disk = results.read_rows(tmp_path / "dynamic_spikes.csv")
    # round 1 timed both variants at batch 4; round 2's first unit lost the context
    assert [(r["batch"], r["status"]) for r in on_disk] == [("4", "failed"), ("4", "ok")] \
        or [(r["batch"], r["status"]) for r in on_disk] == [("4", "ok"), ("4", "failed")]
    assert any("illegal memory access" in r["reason"] for r in on_disk)


def test_a_cluster_worker_s_sweep_hands_back_every_row(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """stop_when_lost=False (a cluster worker, whose nanny restarts it): no stop, each row
    as it came, the failed ones saying why."""
    jobs = plan([reg.get("dynamic_spikes")], ["batch=1,2,4,8", "in_f=64"])
    got = [m.row for m in bench.run(jobs, _LosesContext(), FAST, META, tmp_path,
                                    stop_when_lost=False)]
    assert [r["status"] for r in got] == ["ok", "ok", "failed", "failed"]
    assert all("illegal memory access" in r["reason"] for r in got[2:])
