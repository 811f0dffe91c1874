"""`harness check` and `harness ledger` as library calls (nvcc replaced where it is needed)."""

from __future__ import annotations

import pytest

from harness import paths
from harness.engine import kernels
from harness.errors import BadInput, CompileError


def _write_csv(path, rows) -> None:  # type: ignore[no-untyped-def]
    """Rows (dicts) as a CSV whose header is the first row's keys."""
    import csv

    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

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


def test_older_rows_name_the_rows_of_an_earlier_kernel(reg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import csv
    import dataclasses
    from pathlib import Path

    from harness.contract.kernel import kernel_hash
    from harness.errors import BadInput

    src = Path(__file__).parents[2] / "statistics" / "h200" / "dynamic_spikes.csv"
    with src.open(newline="") as f:
        rows = list(csv.DictReader(f))
    st = reg.stages["dynamic_spikes"]
    now = kernel_hash(st, st.variants[0])
    ours = [r for r in rows if r["backend"] == "pycuda"]
    assert len(ours) >= 3
    for r in rows:
        r["kernel_hash"] = now
    ours[0].update(kernel_hash="0ld", git_sha="abc1234")
    ours[1].update(kernel_hash="0ld", git_sha="abc1234")
    peer = next(r for r in rows if r["backend"] != "pycuda")
    peer["kernel_hash"] = "0ld"  # a peer's row is not a kernel's: not judged
    _write_csv(tmp_path / "dynamic_spikes.csv", rows)
    (older,) = kernels.older_rows(reg, tmp_path)
    assert (older.stage, older.variant, older.row_hash, older.current_hash, older.rows,
            older.git_shas) == ("dynamic_spikes", st.variants[0].name, "0ld", now, 2,
                                ("abc1234",))
    assert "2 row(s) timed at 0ld (commit abc1234), the source is now" in older.describe()
    assert older.validated == "" and older.describe().endswith(
        "; the ledger records no passing validation of that source")
    # A ledger whose record of that source passed every case on a GPU dates it; one that
    # failed a case, ran on the CPU or at fewer seeds does not.
    led = tmp_path / "ledger.csv"
    base = {"stage": "dynamic_spikes", "variant": st.variants[0].name, "kernel_hash": "0ld",
            "status": "pass", "gpu": "NVIDIA H200", "cases": "120", "passed": "120",
            "seeds": "3", "families": "normal,seed", "date": "2026-12-01T00:00:00Z"}
    from harness.results import ledger as ledger_file
    ledger_file.append([{**base, "passed": "119", "status": "fail"}, {**base, "gpu": "cpu"},
                        {**base, "seeds": "1"}, {**base, "families": "normal"}], led)
    (older,) = kernels.older_rows(reg, tmp_path, led)
    assert older.validated == ""
    # 'seed' is a family since renamed (ramp): not held against it; the run narrowed to
    # one family above was no whole validation.
    ledger_file.append([{**base, "families": "normal,llm,seed,edge"}], led)
    (older,) = kernels.older_rows(reg, tmp_path, led)
    assert older.validated == "2026-12-01T00:00:00Z"
    assert older.describe().endswith("; that source passed its validation on "
                                     "2026-12-01T00:00:00Z")
    assert kernels.unvalidated_rows([older], tmp_path) is None
    never = dataclasses.replace(older, validated="")
    assert kernels.unvalidated_rows([older, never], tmp_path) == (
        f"2 row(s) in {tmp_path} timed at a kernel source with no passing GPU validation: "
        f"dynamic_spikes [{st.variants[0].name}]")
    # A validation of that source that failed later on the same GPU revokes its pass.
    ledger_file.append([{**base, "families": "normal,llm,seed,edge", "status": "fail",
                         "passed": "100", "date": "2026-12-02T00:00:00Z"}], led)
    (revoked,) = kernels.older_rows(reg, tmp_path, led)
    assert revoked.validated == ""
    for r in rows:
        r["kernel_hash"] = now
    _write_csv(tmp_path / "dynamic_spikes.csv", rows)
    assert kernels.older_rows(reg, tmp_path) == []
    with pytest.raises(BadInput, match="no such results folder"):
        kernels.older_rows(reg, tmp_path / "none")


def test_unjudged_rows_name_what_the_ledger_cannot_speak_for(reg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Rows of a stage the harness does not have, of a variant it does not have and of a
    --define build are listed, grouped and counted; the declared builds' rows and the
    peers' are not."""
    import csv
    from pathlib import Path

    from harness.contract.kernel import kernel_hash
    from harness.errors import BadInput

    src = Path(__file__).parents[2] / "statistics" / "h200" / "dynamic_spikes.csv"
    with src.open(newline="") as f:
        rows = list(csv.DictReader(f))
    st = reg.stages["dynamic_spikes"]
    ours = [r for r in rows if r["backend"] == "pycuda"]
    for r in ours:
        r.update(variant=st.variants[0].name, kernel_hash=kernel_hash(st, st.variants[0]))
    ours[0]["variant"] = f"{st.variants[0].name}[BLOCK=128]"
    ours[1]["variant"] = f"{st.variants[0].name}[BLOCK=128]"
    ours[2]["variant"] = "gone"
    ours[3]["variant"] = f"{st.variants[0].name}@abc1234"
    hashless = dict(ours[3], variant=st.variants[0].name, kernel_hash="")
    rows.append(hashless)  # one of ours without a hash: listed, not skipped
    peer = next(r for r in rows if r["backend"] != "pycuda")
    peer["variant"] = "gone"  # a peer's row is not a kernel's: not listed
    _write_csv(tmp_path / "dynamic_spikes.csv", rows)
    other = dict(ours[3], stage="dynamic_spikes_prev", variant=st.variants[0].name)
    _write_csv(tmp_path / "dynamic_spikes_prev.csv", [other])
    got = kernels.unjudged_rows(reg, tmp_path)
    by = {(u.stage, u.variant): u for u in got}
    assert sorted((u.stage, u.variant, u.rows) for u in got) == sorted([
        ("dynamic_spikes", "gone", 1),
        ("dynamic_spikes", f"{st.variants[0].name}[BLOCK=128]", 2),
        ("dynamic_spikes", f"{st.variants[0].name}@abc1234", 1),
        ("dynamic_spikes", st.variants[0].name, 1),
        ("dynamic_spikes_prev", st.variants[0].name, 1)])
    assert by[("dynamic_spikes", f"{st.variants[0].name}@abc1234")].why == (
        "a build of another source (bench --against), which the ledger does not validate")
    assert by[("dynamic_spikes", "gone")].describe() == (
        "dynamic_spikes [gone]: 1 row(s) not judged: a variant this harness does not have")
    assert by[("dynamic_spikes", f"{st.variants[0].name}[BLOCK=128]")].why == (
        "a build with --define, which the ledger does not validate")
    assert kernels._unjudged_why(("dynamic_spikes", "default[X=1]@abc"),
                                 {"dynamic_spikes"}, False) == (
        "a build with --define and a build of another source (bench --against), which the "
        "ledger does not validate")
    assert kernels._unjudged_why(("dynamic_spikes_prev", "default[X=1]"),
                                 {"dynamic_spikes"}, False) == (
        "a stage or pipeline this harness does not have")
    assert by[("dynamic_spikes_prev", st.variants[0].name)].why == (
        "a stage or pipeline this harness does not have")
    assert by[("dynamic_spikes", st.variants[0].name)].why == "no kernel hash in the row"
    assert kernels.older_rows(reg, tmp_path) == []  # none of them is judged there
    # Of those, only the row of ours that lacks its hash fails the check: the others are
    # builds and stages the ledger does not speak for.
    said = kernels.unvalidated_rows([], tmp_path, got)
    hashless = by[("dynamic_spikes", st.variants[0].name)]
    assert said == (f"{hashless.rows} row(s) of ours in {tmp_path} with no kernel hash, so no "
                    f"validation can vouch for them: dynamic_spikes [{st.variants[0].name}]")
    assert kernels.unvalidated_rows([], tmp_path, [u for u in got if u is not hashless]) \
        is None
    with pytest.raises(BadInput, match="no such results folder"):
        kernels.unjudged_rows(reg, tmp_path / "none")


def test_older_rows_judge_a_pipeline_row_by_its_pipeline_hash(reg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A pipeline row carries the hash over every kernel its steps build (``kernel_hashes``):
    rows at another one are named, rows at the current one are not."""
    import csv
    from pathlib import Path

    from harness.results.ledger import pipeline_hash

    src = Path(__file__).parents[2] / "statistics" / "h200" / "activation_path.csv"
    with src.open(newline="") as f:
        rows = list(csv.DictReader(f))
    now = pipeline_hash(reg.pipelines["activation_path"], reg.stages)
    for r in rows:
        r["kernel_hashes"] = now
    fused = [r for r in rows if r["variant"] == "fused"]
    assert len(fused) >= 2
    for r in fused[:2]:
        r.update(kernel_hashes="0ld", git_sha="abc1234")

    def write() -> None:
        _write_csv(tmp_path / "activation_path.csv", rows)

    write()
    (older,) = kernels.older_rows(reg, tmp_path)
    assert (older.stage, older.variant, older.row_hash, older.current_hash, older.rows,
            older.git_shas) == ("activation_path", "fused", "0ld", now, 2, ("abc1234",))
    # A pipeline file from before pipelines had variants: its rows are "default"'s.
    pipe_rows = [{k: v for k, v in r.items() if k != "variant"} for r in rows[:3]]
    for r in pipe_rows:
        r.update(stage="spike_quant_gemm", kernel_hashes="0ld")
    old_dir = tmp_path / "old"
    old_dir.mkdir()
    _write_csv(old_dir / "spike_quant_gemm.csv", pipe_rows)
    (no_variant,) = kernels.older_rows(reg, old_dir)
    assert (no_variant.stage, no_variant.variant, no_variant.rows) == \
        ("spike_quant_gemm", "default", 3)
    for r in fused[:2]:
        r["kernel_hashes"] = now
    write()
    assert kernels.older_rows(reg, tmp_path) == []


def test_judge_folders_judges_each_folder_as_judge_rows_does(reg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Several folders judged with the kernels hashed once: each folder's older and
    unjudged rows are what ``judge_rows`` gives it alone, in the order given."""
    stats = paths.project_root() / "statistics" / "h200"
    folders = [stats / "processes-a", stats / "tuning" / "against-aa"]
    got = kernels.judge_folders(reg, folders)
    assert [f for f, _, _ in got] == folders
    for folder, older, unjudged in got:
        assert (older, unjudged) == kernels.judge_rows(reg, folder)
    assert got[0][1] and got[1][2]  # an older row in one, an unjudged one in the other
    assert kernels.judge_folders(reg, []) == []
    with pytest.raises(BadInput, match="no such results folder"):
        kernels.judge_folders(reg, [folders[0], tmp_path / "none"])
    with pytest.raises(BadInput, match="given twice"):
        kernels.judge_folders(reg, [folders[0], folders[1], folders[0]])


def test_judge_folders_hashes_the_kernels_once(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stats = paths.project_root() / "statistics" / "h200"
    calls = []
    real = kernels.current_hashes

    def counted(r):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(r)

    monkeypatch.setattr(kernels, "current_hashes", counted)
    kernels.judge_folders(reg, [stats / "processes-a", stats / "tuning" / "against-aa"])
    assert len(calls) == 1
