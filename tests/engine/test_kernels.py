"""`harness check` and `harness ledger` as library calls (nvcc replaced where it is needed)."""

from __future__ import annotations

import pytest

from harness.engine import kernels
from harness.errors import BadInput, CompileError


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

    with pytest.raises(BadInput, match="unknown stage 'nope'"):
        kernels.check(reg, ["nope"], "sm_90")


def test_check_cache_skips_a_variant_already_checked_by_the_same_nvcc(  # type: ignore[no-untyped-def]
        reg, monkeypatch, tmp_path) -> None:
    from harness.contract.kernel import KernelResources

    calls: list[str] = []
    version = ["release 13.0, V13.0.88"]

    def nvcc(st, v, arch):  # type: ignore[no-untyped-def]
        calls.append(f"{st.name}/{v.name}")
        if v.name == "away":
            raise CompileError(f"{st.name} [{v.name}] does not compile", detail="log")
        return [KernelResources(st.name, 40, 128, 0, 0, 0)]

    monkeypatch.setattr(kernels, "nvcc_report", nvcc)
    monkeypatch.setattr(kernels, "nvcc_version", lambda nvcc=None: version[0])
    names = ["dynamic_spikes", "find_min_max"]

    run = kernels.check_run(reg, names, "sm_90", tmp_path)
    assert run.total == 3
    first = list(run.results)
    assert calls == ["dynamic_spikes/default", "dynamic_spikes/away", "find_min_max/default"]
    assert not any(c.cached for c in first)

    calls.clear()  # the same hashes and nvcc: only the variant that failed is compiled again
    second = kernels.check(reg, names, "sm_90", tmp_path)
    assert calls == ["dynamic_spikes/away"]
    assert [c.cached for c in second] == [True, False, True]
    assert second[0].resources == first[0].resources
    assert second[1].error is not None

    calls.clear()  # another arch, another nvcc, or no cache: compiled again
    kernels.check(reg, ["find_min_max"], "sm_80", tmp_path)
    version[0] = "release 13.1, V13.1.0"
    kernels.check(reg, ["find_min_max"], "sm_90", tmp_path)
    kernels.check(reg, ["find_min_max"], "sm_90", None)
    assert calls == ["find_min_max/default"] * 3

    calls.clear()  # a garbled entry is a miss, not an error
    for p in tmp_path.glob("*.json"):
        p.write_text("{not json")
    assert not kernels.check(reg, ["find_min_max"], "sm_90", tmp_path)[0].cached
    assert calls == ["find_min_max/default"]


def test_check_cache_follows_the_kernel_hash(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from harness.contract.kernel import KernelResources

    calls: list[str] = []
    monkeypatch.setattr(kernels, "nvcc_report", lambda st, v, arch: calls.append(v.name)
                        or [KernelResources(st.name, 1, 0, 0, 0, 0)])
    monkeypatch.setattr(kernels, "nvcc_version", lambda nvcc=None: "V1")
    hashes = {"h": "aaaa"}
    monkeypatch.setattr(kernels, "kernel_hash", lambda st, v: hashes["h"])
    kernels.check(reg, ["find_min_max"], "sm_90", tmp_path)
    kernels.check(reg, ["find_min_max"], "sm_90", tmp_path)
    hashes["h"] = "bbbb"  # the source changed
    assert not kernels.check(reg, ["find_min_max"], "sm_90", tmp_path)[0].cached
    assert calls == ["default", "default"]


def test_cache_dir_is_the_users(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert kernels.cache_dir() == tmp_path / "spike-harness" / "check"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert kernels.cache_dir() == tmp_path / "home" / ".cache" / "spike-harness" / "check"


def test_nvcc_version_without_nvcc(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import HarnessError

    monkeypatch.setattr(kernels.shutil, "which", lambda name: None)
    with pytest.raises(HarnessError, match="nvcc not found on PATH"):
        kernels.nvcc_version()
