"""`harness ledger --rows` as library calls: committed rows judged against the ledger (the
rows of earlier sources, those no record can speak for, what fails the check)."""

from __future__ import annotations

import pytest

from harness import paths
from harness.engine import kernels, ledger_rows
from harness.errors import BadInput


def _write_csv(path, rows) -> None:  # type: ignore[no-untyped-def]
    """Rows (dicts) as a CSV whose header is the first row's keys."""
    import csv

    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

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
    (older,) = ledger_rows.older_rows(reg, tmp_path)
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
    (older,) = ledger_rows.older_rows(reg, tmp_path, led)
    assert older.validated == ""
    # 'seed' is a family since renamed (ramp): not held against it; the run narrowed to
    # one family above was no whole validation.
    ledger_file.append([{**base, "families": "normal,llm,seed,edge"}], led)
    (older,) = ledger_rows.older_rows(reg, tmp_path, led)
    assert older.validated == "2026-12-01T00:00:00Z"
    assert older.describe().endswith("; that source passed its validation on "
                                     "2026-12-01T00:00:00Z")
    assert ledger_rows.unvalidated_rows([older], tmp_path) is None
    never = dataclasses.replace(older, validated="")
    assert ledger_rows.unvalidated_rows([older, never], tmp_path) == (
        f"2 row(s) in {tmp_path} timed at a kernel source with no passing GPU validation: "
        f"dynamic_spikes [{st.variants[0].name}]")
    # A validation of that source that failed later on the same GPU revokes its pass.
    ledger_file.append([{**base, "families": "normal,llm,seed,edge", "status": "fail",
                         "passed": "100", "date": "2026-12-02T00:00:00Z"}], led)
    (revoked,) = ledger_rows.older_rows(reg, tmp_path, led)
    assert revoked.validated == ""
    for r in rows:
        r["kernel_hash"] = now
    _write_csv(tmp_path / "dynamic_spikes.csv", rows)
    assert ledger_rows.older_rows(reg, tmp_path) == []
    with pytest.raises(BadInput, match="no such results folder"):
        ledger_rows.older_rows(reg, tmp_path / "none")


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
    got = ledger_rows.unjudged_rows(reg, tmp_path)
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
    assert ledger_rows._unjudged_why(("dynamic_spikes", "default[X=1]@abc"),
                                 {"dynamic_spikes"}, False) == (
        "a build with --define and a build of another source (bench --against), which the "
        "ledger does not validate")
    assert ledger_rows._unjudged_why(("dynamic_spikes_prev", "default[X=1]"),
                                 {"dynamic_spikes"}, False) == (
        "a stage or pipeline this harness does not have")
    assert by[("dynamic_spikes_prev", st.variants[0].name)].why == (
        "a stage or pipeline this harness does not have")
    assert by[("dynamic_spikes", st.variants[0].name)].why == "no kernel hash in the row"
    assert ledger_rows.older_rows(reg, tmp_path) == []  # none of them is judged there
    # Of those, only the row of ours that lacks its hash fails the check: the others are
    # builds and stages the ledger does not speak for.
    said = ledger_rows.unvalidated_rows([], tmp_path, got)
    hashless = by[("dynamic_spikes", st.variants[0].name)]
    assert said == (f"{hashless.rows} row(s) of ours in {tmp_path} with no kernel hash, so no "
                    f"validation can vouch for them: dynamic_spikes [{st.variants[0].name}]")
    assert ledger_rows.unvalidated_rows([], tmp_path, [u for u in got if u is not hashless]) \
        is None
    with pytest.raises(BadInput, match="no such results folder"):
        ledger_rows.unjudged_rows(reg, tmp_path / "none")


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
    (older,) = ledger_rows.older_rows(reg, tmp_path)
    assert (older.stage, older.variant, older.row_hash, older.current_hash, older.rows,
            older.git_shas) == ("activation_path", "fused", "0ld", now, 2, ("abc1234",))
    # A pipeline file from before pipelines had variants: its rows are "default"'s.
    pipe_rows = [{k: v for k, v in r.items() if k != "variant"} for r in rows[:3]]
    for r in pipe_rows:
        r.update(stage="spike_quant_gemm", kernel_hashes="0ld")
    old_dir = tmp_path / "old"
    old_dir.mkdir()
    _write_csv(old_dir / "spike_quant_gemm.csv", pipe_rows)
    (no_variant,) = ledger_rows.older_rows(reg, old_dir)
    assert (no_variant.stage, no_variant.variant, no_variant.rows) == \
        ("spike_quant_gemm", "default", 3)
    for r in fused[:2]:
        r["kernel_hashes"] = now
    write()
    assert ledger_rows.older_rows(reg, tmp_path) == []


def test_judge_folders_judges_each_folder_as_judge_rows_does(reg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Several folders judged with the kernels hashed once: each folder's older and
    unjudged rows are what ``judge_rows`` gives it alone, in the order given."""
    stats = paths.project_root() / "statistics" / "h200"
    folders = [stats / "processes-a", stats / "tuning" / "against-aa"]
    got = ledger_rows.judge_folders(reg, folders)
    assert [f for f, _, _ in got] == folders
    for folder, older, unjudged in got:
        assert (older, unjudged) == ledger_rows.judge_rows(reg, folder)
    assert got[0][1] and got[1][2]  # an older row in one, an unjudged one in the other
    assert ledger_rows.judge_folders(reg, []) == []
    with pytest.raises(BadInput, match="no such results folder"):
        ledger_rows.judge_folders(reg, [folders[0], tmp_path / "none"])
    with pytest.raises(BadInput, match="given twice"):
        ledger_rows.judge_folders(reg, [folders[0], folders[1], folders[0]])


def test_judge_folders_hashes_the_kernels_once(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stats = paths.project_root() / "statistics" / "h200"
    calls = []
    real = kernels.current_hashes

    def counted(r):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(r)

    monkeypatch.setattr(ledger_rows, "current_hashes", counted)
    ledger_rows.judge_folders(reg, [stats / "processes-a", stats / "tuning" / "against-aa"])
    assert len(calls) == 1
