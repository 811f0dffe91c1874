"""The library side of the CLI commands: targets, options, validation overrides, sessions."""

from __future__ import annotations

import pytest

from harness.backends.numpy import NumpyRunner
from harness.engine import session
from harness.errors import BadInput


def test_targets_split_stages_and_pipelines(reg) -> None:  # type: ignore[no-untyped-def]
    tg = session.targets(reg, ["dynamic_spikes", "spike_quant_gemm"], with_pipelines=False)
    assert [s.name for s in tg.stages] == ["dynamic_spikes"]
    assert [p.name for p in tg.pipelines] == ["spike_quant_gemm"]
    assert session.targets(reg, None, with_pipelines=False).pipelines == []
    assert len(session.targets(reg, None, with_pipelines=True).pipelines) == len(reg.pipelines)


def test_options_keep_only_given_values() -> None:
    assert session.options(mode=None, k=2.5, group_size=None) == {"k": "2.5"}


def test_validation_overrides_apply_where_the_axis_exists(reg) -> None:  # type: ignore[no-untyped-def]
    tg = session.targets(reg, ["spike_encode", "compute_scales"], False)
    opts = session.options(mode="twos_complement", k=2.5, group_size=7)
    sums = list(session.validation(reg, tg, NumpyRunner(), "all", ["normal"], 1, 0, opts))
    assert [(s.name, s.variant) for s in sums] == [("spike_encode", "twos_complement"),
                                                   ("compute_scales", "default")]
    assert {c.point["k"] for c in sums[0].cases} == {2.5}
    assert {c.point["group_size"] for c in sums[1].cases} == {7}
    assert all(s.passed == len(s.cases) for s in sums)
    with pytest.raises(BadInput, match=r"unknown mode .ternary."):
        list(session.validation(reg, tg, NumpyRunner(), "all", ["normal"], 1, 0,
                                {"mode": "ternary"}))


def test_cpu_session_keeps_the_default_sweep_small(reg) -> None:  # type: ignore[no-untyped-def]
    s = session.open_bench("numpy", 0)
    assert not s.on_gpu and s.slug == "cpu"
    jobs = session.bench_jobs(s, session.targets(reg, ["dynamic_spikes"], False), [], None, {})
    assert jobs and all(j.stage.bytes_moved(j.point) <= session.CPU_BYTES for j in jobs)
    with pytest.raises(BadInput, match="unknown backend"):
        session.open_bench("opencl", 0)


def test_pipeline_points_take_options(reg) -> None:  # type: ignore[no-untyped-def]
    pipe = reg.pipelines["spike_quant_gemm"]
    pts = session.pipeline_points(pipe, ["batch=1,2"], {"mode": "bidirectional", "k": "2"})
    assert [(p["batch"], p["mode"], p["k"]) for p in pts] == [(1, "bidirectional", 2.0),
                                                              (2, "bidirectional", 2.0)]


def test_profile_and_sanitizer_rows_carry_the_runs_provenance(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Rows about a child process's run (ncu, compute-sanitizer): the point's join columns,
    the GPU, the commit, the time and the command (recorded ncu output, no GPU)."""
    from pathlib import Path

    from harness.backends.pycuda import context as device
    from harness.results import provenance as meta
    from harness.tools import ncu, sanitize

    monkeypatch.setattr(device, "smi_query", lambda index, field: "NVIDIA H200")
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    raw = (Path(__file__).parents[1] / "fixtures" / "ncu" / "dynamic_spikes_raw.txt").read_text()
    monkeypatch.setattr(ncu, "run", lambda cmd: ncu.parse_raw_csv(raw))
    st = reg.get("dynamic_spikes")
    v = st.variants[0]
    rows = session.profile(st, v, st.point(v, batch=16384), "normal", None, None, 0, tmp_path)
    assert rows and set(rows[0]) == set(session.NCU_COLUMNS)
    assert all(r["gpu"] == "NVIDIA H200" and r["batch"] == 16384 and r["backend"] == "pycuda"
               and r["git_sha"] == meta.git_sha() and r["timestamp"] and r["command"]
               for r in rows)
    r = session.sanitizer_row(sanitize.Outcome("s", "v", "memcheck", 8, 0, 0, 0, ""), 0)
    assert set(r) == set(session.SANITIZER_COLUMNS)
    assert r["gpu"] == "NVIDIA H200" and r["status"] == "ok" and r["git_sha"] == meta.git_sha()
