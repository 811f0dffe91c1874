"""`harness check` and `harness ledger` as library calls (nvcc replaced where it is needed)."""

from __future__ import annotations

import pytest

from harness.engine import kernels
from harness.errors import CompileError


def test_check_reports_a_variant_that_does_not_compile_and_goes_on(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.contract.kernel import KernelResources

    def nvcc(st, v, arch):  # type: ignore[no-untyped-def]
        if v.name == "away":
            raise CompileError(f"{st.name} [{v.name}] does not compile", detail="log")
        return [KernelResources(st.name, 32, 0, 0, 0, 0)]

    monkeypatch.setattr(kernels, "nvcc_report", nvcc)
    got = kernels.check(reg, ["dynamic_spikes", "find_min_max"], "sm_90")
    assert [(c.stage, c.variant, c.error is None) for c in got] == [
        ("dynamic_spikes", "default", True), ("dynamic_spikes", "away", False),
        ("find_min_max", "default", True)]
    assert got[1].error is not None and got[1].error.detail == "log"
    assert got[0].resources[0].registers == 32


def test_ledger_report(reg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty.csv").write_text("")
    rep = kernels.ledger_report(reg, tmp_path / "empty.csv")
    n = sum(len(s.variants) for s in reg.stages.values()) + \
        sum(len(p.variants) for p in reg.pipelines.values())
    assert len(rep.statuses) == n and len(rep.missing) == n
    assert rep.failure == f"{n} kernel variant(s) without a passing GPU validation at " \
                          "their current source"
    clean = kernels.LedgerReport([], broken=2)
    assert clean.failure == "2 plugin(s) failed to load"
    assert kernels.LedgerReport([], broken=0).failure is None


def test_check_names_unknown_stages(reg) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import BadInput

    with pytest.raises(BadInput, match="unknown stage 'nope'"):
        kernels.check(reg, ["nope"], "sm_90")
