"""`harness sanitize`'s plan and rows (the sanitizer replaced by recorded outcomes)."""

from __future__ import annotations

import pytest

from harness.engine import sanitize
from harness.errors import BadInput, HarnessError
from harness.results import provenance
from harness.results import rows as results
from harness.tools import sanitize as tool


@pytest.fixture
def fake(monkeypatch):  # type: ignore[no-untyped-def]
    from harness.backends.pycuda import context

    monkeypatch.setattr(context, "smi_query", lambda index, field: "NVIDIA H200")
    monkeypatch.setattr(tool, "find", lambda: "compute-sanitizer")
    ran: list[tuple[str, str, str]] = []

    def run(t, st, v, family, device):  # type: ignore[no-untyped-def]
        ran.append((st.name, v.name, t))
        return tool.Outcome(st.name, v.name, t, 8, int(t == "racecheck"), 0, 0, "")

    monkeypatch.setattr(tool, "run", run)
    return ran


def test_one_row_per_stage_variant_and_tool(reg, fake, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "s.csv"
    run = sanitize.sanitize(reg, ["dynamic_spikes"], tools=["memcheck", "racecheck"],
                            out_file=out)
    assert run.total == 4 and run.path == out and fake == []  # nothing runs until asked
    outcomes = list(run.outcomes)
    assert [(o.variant, o.tool, o.ok) for o in outcomes] == [
        ("default", "memcheck", True), ("default", "racecheck", False),
        ("away", "memcheck", True), ("away", "racecheck", False)]
    rows = results.read_rows(out)
    assert [r["status"] for r in rows] == ["ok", "failed", "ok", "failed"]
    assert set(rows[0]) == set(sanitize.COLUMNS)
    assert rows[0]["gpu"] == "NVIDIA H200" and rows[0]["git_sha"] == provenance.git_sha()


def test_default_path_is_the_gpus_folder(fake) -> None:  # type: ignore[no-untyped-def]
    assert sanitize.default_path(0).parts[-2:] == ("h200", "sanitizer.csv")


def test_unknown_tool_and_family(reg, fake) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HarnessError, match="unknown sanitizer tool 'leakcheck'"):
        sanitize.sanitize(reg, None, tools=["leakcheck"])
    with pytest.raises(HarnessError, match="unknown input family 'zipf'"):
        sanitize.sanitize(reg, None, family="zipf")


def test_one_build_by_variant_and_defines(reg, fake, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """--variant and --define name one build of one stage: only it runs, under its tuned
    name, and the child is handed its -D values."""
    run = sanitize.sanitize(reg, ["dynamic_spikes"], tools=["memcheck"], variant="away",
                            defines=["BLOCK=128"], out_file=tmp_path / "s.csv")
    assert run.total == 1
    assert [(o.variant, o.tool) for o in run.outcomes] == [("away[BLOCK=128]", "memcheck")]
    assert results.read_rows(tmp_path / "s.csv")[0]["variant"] == "away[BLOCK=128]"
    run = sanitize.sanitize(reg, ["dynamic_spikes"], tools=["memcheck"], variant="away",
                            out_file=tmp_path / "t.csv")
    assert [o.variant for o in run.outcomes] == ["away"]


def test_one_build_needs_one_stage_and_good_defines(reg, fake) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match="name one stage"):
        sanitize.sanitize(reg, None, defines=["BLOCK=128"])
    with pytest.raises(BadInput, match="name one stage"):
        sanitize.sanitize(reg, ["dynamic_spikes", "find_min_max"], variant="default")
    with pytest.raises(HarnessError, match="given twice"):
        sanitize.sanitize(reg, ["dynamic_spikes"], defines=["BLOCK=1", "BLOCK=2"])
    with pytest.raises(HarnessError, match="zzz"):
        sanitize.sanitize(reg, ["dynamic_spikes"], variant="zzz")
