"""The child that ncu and compute-sanitizer run: its command line read back, one-line errors,
and the inputs it launches on, which must be a sweep's, array for array."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.backends.numpy import NumpyRunner
from harness.errors import BadInput
from harness.front.cli import app
from harness.tools import child, sanitize

#: (stage, variant, point as sorted JSON) -> the arrays handed to a backend.
Drawn = dict[tuple[str, str, str], dict[str, np.ndarray]]


def _key(stage: str, variant: str, point: dict[str, Any]) -> tuple[str, str, str]:
    return stage, variant, json.dumps(point, sort_keys=True)


class FakeGpu:
    """Records what the child launches instead of launching it."""

    def __init__(self) -> None:
        self.drawn: Drawn = {}
        self.counts: list[int] = []

    def launches(self, stage, variant, inputs, point, count):  # type: ignore[no-untyped-def]
        self.drawn[_key(stage.name, variant.name, point)] = {k: v.copy()
                                                              for k, v in inputs.items()}
        self.counts.append(count)


def _sweep(monkeypatch, tmp_path, family: str, seed: int) -> Drawn:  # type: ignore[no-untyped-def]
    """What a `harness bench` sweep (the NumPy backend, every stage and variant) hands its
    backend at each point: the inputs the timings are of."""
    drawn: Drawn = {}
    timed = NumpyRunner.time

    def recording(self, stage, variant, inputs, point, cfg):  # type: ignore[no-untyped-def]
        drawn[_key(stage.name, variant.name, point)] = {k: v.copy()
                                                        for k, v in inputs.items()}
        return timed(self, stage, variant, inputs, point, cfg)

    monkeypatch.setattr(NumpyRunner, "time", recording)
    res = CliRunner().invoke(app, [
        "bench", "--backend", "numpy", "--variant", "all", "--sweep", "batch=1,9",
        "--sweep", "out_f=3,9", "--sweep", "in_f=130", "--family", family, "--seed",
        str(seed), "--budget", "0.01", "--no-verify", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    return drawn


def test_child_launches_on_the_inputs_a_sweep_draws(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """For every stage and variant, at the sweep's own points, family and seed: the command
    line compute-sanitizer runs makes the child launch on the very arrays the sweep timed."""
    family, seed = "llm", 7
    swept = _sweep(monkeypatch, tmp_path, family, seed)
    monkeypatch.setattr("shutil.which", lambda name: f"/cuda/bin/{name}")
    gpu = FakeGpu()
    monkeypatch.setattr(child, "open_runner", lambda device: gpu)
    by_variant: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for stage, variant, point in swept:
        by_variant.setdefault((stage, variant), []).append(json.loads(point))
    # every stage with a variant that takes the family (int_gemm_planes' does not: it takes
    # at most 8 spike planes)
    takes = {n for n, st in reg.stages.items()
             if any(family in (v.families or st.families) for v in st.variants)}
    assert {s for s, _ in by_variant} == takes and len(takes) >= len(reg.stages) - 1
    for (stage, variant), points in by_variant.items():
        st = reg.get(stage)
        cmd = sanitize.command("memcheck", st, st.variant(variant), points, family, 0,
                               seed=seed)
        assert child.main(cmd[cmd.index(child.MODULE) + 1:]) == 0
    assert gpu.drawn.keys() == swept.keys()
    assert set(gpu.counts) == {1}  # sanitizing: one launch a point, no warm-up
    for key, arrays in swept.items():
        got = gpu.drawn[key]
        assert got.keys() == arrays.keys(), key
        for name, a in arrays.items():
            assert got[name].dtype == a.dtype and np.array_equal(got[name], a), (key, name)
    # Not the inputs the child drew before (a generator seeded 0 at every point): at least
    # one array of every stage differs from those.
    for stage, variant, point in swept:
        st, p = reg.get(stage), json.loads(point)
        fixed = st.make_inputs(np.random.default_rng(0), family, p)
        got = gpu.drawn[(stage, variant, point)]
        assert any(not np.array_equal(fixed[n], got[n]) for n in fixed), (stage, p)


def test_command_reads_back(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    v = st.variants[0]
    pts = (st.point(v, batch=3), st.point(v, batch=9, in_f=5))
    job = child.Launches("dynamic_spikes", v.name, "edge", 11, pts, 3, 1)
    cmd = child.command(job, python="py")
    assert cmd[:3] == ["py", "-m", child.MODULE]
    assert cmd.count("--point") == 2
    # vth_max is inf by default: JSON's Infinity comes back as the same float.
    assert child.parse(cmd[3:]) == job
    tuned = child.Launches("dynamic_spikes", v.name, "edge", 11, pts, 3, 1,
                           (("BLOCK", "128"), ("UNROLL", "4")))
    assert child.parse(child.command(tuned, python="py")[3:]) == tuned


def test_defines_compile_the_tuning_build(reg) -> None:  # type: ignore[no-untyped-def]
    """The child's variant is the declared one with the -D values set over it: the build
    `bench --define` names default[BLOCK=128], with the same defines."""
    st = reg.get("dynamic_spikes")
    job = child.Launches("dynamic_spikes", "default", "normal", 0, ({"batch": 4},),
                         defines=(("BLOCK", "128"),))
    _, v, _ = child.resolve(job, reg)
    bench_build = st.variants[0].tuned({"BLOCK": "128"})
    assert v == bench_build and v.name == "default[BLOCK=128]" and v.declared == "default"
    assert dict(v.defines)["BLOCK"] == "128" and v.options() == bench_build.options()


@pytest.mark.parametrize(("argv", "message"), [
    (["s", "--family", "normal", "--seed", "0", "--point", "{}"], "--variant"),
    (["s", "--variant", "v", "--family", "normal", "--seed", "0"], "--point"),
    (["s", "--variant", "v", "--family", "normal", "--seed", "-1", "--point", "{}"],
     "negative"),
    (["s", "--variant", "v", "--family", "normal", "--seed", "0", "--point", "[1]"],
     "not a JSON object"),
    (["s", "--variant", "v", "--family", "normal", "--seed", "0", "--point", "{batch"],
     "not JSON"),
    (["s", "--variant", "v", "--family", "normal", "--seed", "0", "--point", "{}",
      "--define", "UNROLL=2,4"], "one value"),
    (["s", "--variant", "v", "--family", "normal", "--seed", "0", "--point", "{}",
      "--define", "A=1", "--define", "B=1", "--define", "A=2"], "'A' given twice"),
])
def test_bad_arguments_are_one_line(argv: list[str], message: str) -> None:
    with pytest.raises(BadInput, match=message) as exc:
        child.parse(argv)
    assert "\n" not in str(exc.value)


def test_unknown_names_are_one_line_and_exit_2(reg, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(child, "open_runner", lambda device: pytest.fail("GPU opened"))
    base = ["--family", "normal", "--seed", "0"]
    cases = [
        (["nope", "--variant", "default", *base, "--point", "{}"], "unknown stage 'nope'"),
        (["find_min_max", "--variant", "nope", *base, "--point", "{}"],
         "stage find_min_max has no variant 'nope'"),
        (["find_min_max", "--variant", "default", *base, "--point", '{"width": 3}'],
         "stage find_min_max has no axis width"),
    ]
    for argv, message in cases:
        assert child.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_no_gpu_is_one_line(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import GpuUnavailable

    def no_gpu(device: int) -> None:
        raise GpuUnavailable("no CUDA device is visible")

    monkeypatch.setattr(child, "open_runner", no_gpu)
    argv = ["find_min_max", "--variant", "default", "--family", "normal", "--seed", "0",
            "--point", "{}"]
    assert child.main(argv) == 2
    assert capsys.readouterr().err == "error: no CUDA device is visible\n"
