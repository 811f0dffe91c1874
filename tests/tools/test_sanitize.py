"""compute-sanitizer: report parsing, the shapes swept, the command line, missing tool."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.errors import HarnessError
from harness.front.cli import app
from harness.tools import child, ncu, sanitize

CLEAN = """========= COMPUTE-SANITIZER
========= ERROR SUMMARY: 0 errors
"""
DIRTY = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at dynamic_spikes+0x1a0
=========     by thread (0,0,0) in block (2,0,0)
========= ERROR SUMMARY: 1 error
"""
RACE = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at dynamic_spikes+0x2f0
========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)
"""


def test_parse_summaries() -> None:
    assert sanitize.parse(CLEAN) == (0, 0)
    assert sanitize.parse(DIRTY) == (1, 0)
    assert sanitize.parse(RACE) == (2, 1)
    assert sanitize.parse("Segmentation fault") is None


def test_outcome_needs_no_errors_and_a_clean_exit() -> None:
    ok = sanitize.Outcome("s", "v", "memcheck", 8, 0, 0, 0, "")
    assert ok.ok
    assert not sanitize.Outcome("s", "v", "memcheck", 8, 0, 0, 3, "").ok
    assert not sanitize.Outcome("s", "v", "memcheck", 8, 1, 0, 0, "").ok


def test_points_cover_the_odd_shapes(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    pts = sanitize.points(st, st.variants[0])
    assert {(p["batch"], p["in_f"]) for p in pts} == {
        (b, f) for b in (1, 3, 9) for f in (1, 5, 130, 3584)}
    w = reg.get("weight_quantize")
    assert {(p["out_f"], p["in_f"], p["group_size"]) for p in sanitize.points(w, w.variants[0])} \
        == {(o, f, 128) for o in (1, 3, 9) for f in (1, 5, 130, 3584)} | {(3, 516, 256)}
    # Each of activation_fused's paths is among the watched launches: act_one (batch 1,
    # in_f 3584), act_rows (batch 3, in_f 3584), act_small (batch 1 on odd widths),
    # act_grid (batch 9 at in_f 3584) and the two passes (batches 3 and 9 on odd widths).
    fused = reg.get("activation_fused")
    launched = {k for p in sanitize.points(fused, fused.variants[0])
                for k in ncu.launched_kernels(fused, fused.variants[0], p, sm_count=132)}
    assert launched == {"act_one", "act_rows", "act_small", "act_grid", "act_stats",
                        "act_encode"}


def test_every_entry_point_is_watched() -> None:
    """Every kernel of every discovered stage is launched at some point compute-sanitizer
    watches, for one variant or another (a path the odd shapes never reach, like the
    tensor-core one, comes from the stage's ``sanitize_shapes``)."""
    from harness.contract.registry import discover

    reg = discover()
    for st in reg.select(None):
        launched = {k for v in st.variants for p in sanitize.points(st, v)
                    for k in ncu.launched_kernels(st, v, p, sm_count=132)}
        assert set(st.entry_points) <= launched, (st.name, set(st.entry_points) - launched)


def test_command(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("shutil.which", lambda name: f"/cuda/bin/{name}")
    st = reg.get("spike_encode")
    v = st.variant("twos_complement")
    pts = sanitize.points(st, v)
    cmd = sanitize.command("racecheck", st, v, pts, "edge", 0, seed=4)
    assert cmd[:5] == ["/cuda/bin/compute-sanitizer", "--tool", "racecheck", "--error-exitcode",
                       "3"]
    # The child launches once at every point (no warm-up), on the sweep's inputs of seed 4.
    job = child.parse(cmd[cmd.index(child.MODULE) + 1:])
    assert job == child.Launches("spike_encode", "twos_complement", "edge", 4, tuple(pts), 0, 0)
    assert all(p["mode"] == "twos_complement" for p in pts)
    # A tuning build: the child gets the declared variant and the -D values over it.
    tuned = sanitize.command("memcheck", st, v.tuned({"UNITS": "2"}), pts, "edge", 0)
    job = child.parse(tuned[tuned.index(child.MODULE) + 1:])
    assert (job.variant, job.defines) == ("twos_complement", (("UNITS", "2"),))
    with pytest.raises(HarnessError, match="unknown sanitizer tool"):
        sanitize.command("leakcheck", st, v, pts, "edge", 0)


def test_missing_sanitizer_is_one_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("shutil.which", lambda name: None)
    res = CliRunner().invoke(app, ["sanitize"])
    assert res.exit_code == 2
    assert res.stderr.strip() == ("error: compute-sanitizer not found on PATH: install the "
                                  "CUDA toolkit's sanitizer or add it to PATH")


@pytest.mark.parametrize("script, errors, ok", [
    ("printf '========= ERROR SUMMARY: 0 errors\\n'", 0, True),
    ("printf '========= ERROR SUMMARY: 2 errors\\n'; exit 3", 2, False),
    # A report with no summary at all (the child crashed, the tool died) counts as an
    # error, whatever the exit status: a run that said nothing was not shown clean.
    ("echo 'Segmentation fault'", 1, False),
])
def test_a_run_is_judged_by_its_summary(reg, monkeypatch, script: str, errors: int,  # type: ignore[no-untyped-def]
                                        ok: bool) -> None:
    monkeypatch.setattr(sanitize, "command", lambda *a, **k: ["sh", "-c", script])
    st = reg.get("dynamic_spikes")
    got = sanitize.run("memcheck", st, st.variants[0])
    assert (got.errors, got.ok) == (errors, ok)
    assert got.points == len(sanitize.points(st, st.variants[0]))
