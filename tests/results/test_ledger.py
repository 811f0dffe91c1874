"""The validation ledger and its CI check."""

from __future__ import annotations

from pathlib import Path

from harness.contract import kernel as compiler
from harness.results import ledger


def row(stage, variant, h, status="pass", gpu="NVIDIA H200"):  # type: ignore[no-untyped-def]
    return {"stage": stage, "variant": variant, "kernel_hash": h, "status": status,
            "gpu": gpu, "date": "2026-12-02", "cases": 1, "passed": 1, "worst_error": "0"}


def test_check_needs_a_passing_gpu_row_at_the_current_hash(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    hashes = {v.name: compiler.kernel_hash(st, v) for v in st.variants}
    p = tmp_path / "l.csv"
    ledger.append([row(st.name, "default", hashes["default"]),
                   row(st.name, "away", hashes["away"], status="fail"),
                   row(st.name, "away", hashes["away"], gpu="cpu"),
                   row(st.name, "away", "0" * 16)], p)
    status = {s.variant: s for s in ledger.check([st], ledger.read(p))}
    assert status["default"].ok and not status["away"].ok
    assert "NO passing GPU validation" in status["away"].describe()
    ledger.append([row(st.name, "away", hashes["away"])], p)
    assert all(s.ok for s in ledger.check([st], ledger.read(p)))


def test_missing_ledger_reads_empty(tmp_path: Path) -> None:
    assert ledger.read(tmp_path / "none.csv") == []


def test_committed_ledger_covers_every_builtin_kernel(reg) -> None:  # type: ignore[no-untyped-def]
    """What CI's `harness ledger --check` enforces, as a test too."""
    bad = [s.describe() for s in ledger.check(reg.select(None), ledger.read()) if not s.ok]
    assert not bad, bad
