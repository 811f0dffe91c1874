"""`harness profile`'s rows: the point's join columns and the run's provenance (recorded
ncu output, no GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine import profile
from harness.results import provenance
from harness.results import rows as results
from harness.tools import ncu

RAW = Path(__file__).parents[1] / "fixtures" / "ncu" / "dynamic_spikes_raw.txt"


@pytest.fixture
def recorded(monkeypatch):  # type: ignore[no-untyped-def]
    from harness.backends.pycuda import context

    monkeypatch.setattr(context, "smi_query", lambda index, field: "NVIDIA H200")
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    cmds: list[list[str]] = []

    def run(cmd):  # type: ignore[no-untyped-def]
        cmds.append(cmd)
        return ncu.parse_raw_csv(RAW.read_text())

    monkeypatch.setattr(ncu, "run", run)
    return cmds


def test_rows_carry_the_join_columns_and_the_provenance(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    prof = profile.profile(reg, "dynamic_spikes", options={"batch": "16384"}, out_dir=tmp_path)
    assert prof.path == tmp_path / "dynamic_spikes.csv"
    assert prof.rows and all(set(r) == set(profile.COLUMNS) for r in prof.rows)
    assert all(r["gpu"] == "NVIDIA H200" and r["batch"] == 16384 and r["backend"] == "pycuda"
               and r["in_f"] == 3584 and r["family"] == "normal"
               and r["git_sha"] == provenance.git_sha() and r["timestamp"] and r["command"]
               for r in prof.rows)
    assert [r["kernel"] for r in results.read_rows(prof.path)] == \
        [r["kernel"] for r in prof.rows]
    import json

    cmd = recorded[0]  # ncu watched the launch of the profiled point
    assert "dynamic_spikes" in cmd
    assert json.loads(cmd[cmd.index("--point") + 1])["batch"] == 16384


def test_bad_requests_are_refused_before_ncu_runs(reg, recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import BadInput

    with pytest.raises(BadInput, match="unknown input family 'zipf'"):
        profile.profile(reg, "dynamic_spikes", family="zipf", out_dir=tmp_path)
    with pytest.raises(BadInput, match="takes one point"):
        profile.profile(reg, "dynamic_spikes", sweep=["batch=1,2"], out_dir=tmp_path)
    assert recorded == []
