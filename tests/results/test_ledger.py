"""The validation ledger and its CI check."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.contract import kernel as compiler
from harness.contract import registry
from harness.errors import BadInput
from harness.results import ledger


def row(stage, variant, h, status="pass", gpu="NVIDIA H200", **kw):  # type: ignore[no-untyped-def]
    return {"stage": stage, "variant": variant, "kernel_hash": h, "status": status,
            "gpu": gpu, "date": "2026-12-02", "cases": 1, "passed": 1, "worst_error": "0",
            "families": "normal,llm,ramp,edge", "seeds": 3, **kw}


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
    assert "its validation on NVIDIA H200 2026-12-02 FAILED" in status["away"].describe()
    ledger.append([row(st.name, "away", hashes["away"])], p)
    assert all(s.ok for s in ledger.check([st], ledger.read(p)))


def test_only_a_whole_validation_counts(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A record narrowed by --family or --seeds, or with a case short, is kept but is not
    the validation CI asks for."""
    st = reg.get("dynamic_spikes")
    h = compiler.kernel_hash(st, st.variant("default"))
    p = tmp_path / "l.csv"
    narrowed = [row(st.name, "default", h, families="normal"),
                row(st.name, "default", h, seeds=1),
                row(st.name, "default", h, cases=5, passed=4),
                row(st.name, "default", h, cases=0, passed=0),
                row(st.name, "default", h, seeds="")]
    ledger.append(narrowed, p)
    assert not ledger.check([st], ledger.read(p))[0].ok
    ledger.append([row(st.name, "default", h, cases=120, passed=120)], p)
    assert ledger.check([st], ledger.read(p))[0].ok


def test_a_failure_after_the_pass_stands_until_its_gpu_passes_again(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A validation that failed after the last pass revokes it, named in the status; so
    does one on a GPU with no pass of its own (an H100 pass does not answer an H200
    failure); a full pass on that GPU after it clears it, a narrowed one does not, and a
    failure before the pass never counted."""
    st = reg.get("dynamic_spikes")
    h = compiler.kernel_hash(st, st.variant("default"))
    h100 = "NVIDIA H100 80GB HBM3"

    def status(*rows: dict) -> ledger.LedgerStatus:  # type: ignore[type-arg]
        return ledger.check([st], [{k: str(v) for k, v in r.items()} for r in rows])[0]

    passed = row(st.name, "default", h, date="2026-12-01")
    late_fail = row(st.name, "default", h, status="fail", date="2026-12-03", cases=108,
                    passed=97)
    s = status(passed, late_fail)
    assert not s.ok and s.failed is not None
    assert s.describe() == (f"dynamic_spikes [default] {h}: its validation on NVIDIA H200 "
                            "2026-12-03 FAILED (97/108 cases), and no full pass on that GPU "
                            "came after it (run `harness validate --record` there once it is "
                            "mended)")
    assert not status(row(st.name, "default", h, gpu=h100, date="2026-12-05"), late_fail).ok
    assert not status(passed, late_fail,
                      row(st.name, "default", h, date="2026-12-05", families="normal")).ok
    assert status(passed, late_fail, row(st.name, "default", h, date="2026-12-05")).ok
    early_fail = dict(late_fail, date="2026-11-30")
    assert status(early_fail, passed).ok
    # the same date: the file's order decides
    same_day = dict(late_fail, date="2026-12-01")
    assert not status(passed, same_day).ok and status(same_day, passed).ok


def test_a_torn_or_mangled_ledger_row_is_bad_input(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text(",".join(ledger.COLUMNS) + "\ndynamic_spikes,default,abc,pass\n")
    with pytest.raises(BadInput, match=r"row 1 has fewer fields than the header"):
        ledger.read(p)
    p.write_text(",".join(ledger.COLUMNS) + "\n" + ",".join(["x"] * 16) + "\n")
    with pytest.raises(BadInput, match=r"row 1 has more fields than the header"):
        ledger.read(p)


def test_an_append_waits_for_another_append_and_then_says_so(tmp_path: Path,  # type: ignore[no-untyped-def]
                                                               monkeypatch) -> None:
    """An append waits up to APPEND_WAIT for another run's lock (released within it: the row
    lands); a lock held past it is one line naming the wait, and nothing is written."""
    import threading

    from filelock import FileLock

    from harness.results import files
    from harness.results.files import ResultFileError

    p = tmp_path / "l.csv"
    ledger.append([row("dynamic_spikes", "default", "a")], p)
    held = FileLock(files.lock_path(p.resolve()), timeout=0)
    held.acquire()
    monkeypatch.setattr(ledger, "APPEND_WAIT", 0.05)
    with pytest.raises(ResultFileError, match=r"another harness run \(still after 0\.05 s\)"):
        ledger.append([row("dynamic_spikes", "away", "b")], p)
    assert [r["variant"] for r in ledger.read(p)] == ["default"]
    held.release()
    monkeypatch.setattr(ledger, "APPEND_WAIT", 10.0)
    taken, other = threading.Event(), FileLock(files.lock_path(p.resolve()), timeout=0)

    def append_elsewhere() -> None:  # another run holds the lock 0.2 s, then lets go
        other.acquire()
        taken.set()
        threading.Event().wait(0.2)
        other.release()

    t = threading.Thread(target=append_elsewhere)
    t.start()
    assert taken.wait(5)
    ledger.append([row("dynamic_spikes", "away", "b")], p)
    t.join()
    assert [r["variant"] for r in ledger.read(p)] == ["default", "away"]


def test_a_recorder_keeps_a_failed_append_and_names_the_rows_left_out(tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                        monkeypatch) -> None:
    """The Recorder checks the ledger when made and appends a row at a time; an append that
    fails is kept, not raised, and ``unrecorded`` names it and every row not written after
    it; a torn last row another run left is cut and said in ``repaired``."""
    from filelock import FileLock

    from harness.results import files

    p = tmp_path / "l.csv"
    book = ledger.Recorder(p)
    book.write(row("dynamic_spikes", "default", "a"))
    assert book.rows == 1 and book.unrecorded == "" and book.repaired == ""
    with open(p, "a") as f:  # another run killed mid-row
        f.write("dynamic_spikes,away,b,pa")
    book.write(row("dynamic_spikes", "away", "b"))
    assert "cut" in book.repaired or "torn" in book.repaired, book.repaired
    monkeypatch.setattr(ledger, "APPEND_WAIT", 0.05)
    held = FileLock(files.lock_path(p.resolve()), timeout=0)
    held.acquire()
    try:
        book.write(row("spike_decode", "default", "c"))
    finally:
        held.release()
    book.write(row("spike_encode", "unidirectional", "d"))  # not tried after a failure
    assert book.rows == 2
    assert book.unrecorded.startswith(f"{p} is being written by another harness run")
    assert book.unrecorded.endswith("not recorded in the ledger: spike_decode [default], "
                                    "spike_encode [unidirectional] (2 row(s) written before it)")
    assert [r["variant"] for r in ledger.read(p)] == ["default", "away"]


def test_missing_ledger_reads_empty(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No ledger yet at the default place: no rows. A ledger named that is not there, or
    is no ledger, is bad input."""
    monkeypatch.setattr(ledger, "default_path", lambda: tmp_path / "none.csv")
    assert ledger.read() == []
    (tmp_path / "empty.csv").write_text("")
    assert ledger.read(tmp_path / "empty.csv") == []
    with pytest.raises(BadInput, match=r"no such ledger: .*none\.csv"):
        ledger.read(tmp_path / "none.csv")
    (tmp_path / "other.csv").write_text("stage,variant,gpu\na,b,c\n")
    with pytest.raises(BadInput, match="not a ledger CSV: no kernel_hash, status, date"):
        ledger.read(tmp_path / "other.csv")
    (tmp_path / "bin.csv").write_bytes(bytes(range(128, 256)))
    with pytest.raises(BadInput, match=r"bin\.csv is not a ledger CSV \(UnicodeDecodeError"):
        ledger.read(tmp_path / "bin.csv")


def test_committed_ledger_covers_every_builtin_kernel(reg) -> None:  # type: ignore[no-untyped-def]
    """What CI's `harness ledger --check` enforces, as a test too."""
    bad = [s.describe() for s in ledger.check(reg.select(None), ledger.read()) if not s.ok]
    assert not bad, bad


def test_a_pipelines_hash_covers_its_last_step(reg: registry.Registry) -> None:
    """A define of the LAST step's kernel changes the pipeline's hash, so the pipeline's
    ledger record at the old hash no longer passes: an edit to any step's kernel needs the
    pipeline validated again, not only an edit to its first."""
    pipe = reg.pipelines["spike_linear"]
    last = reg.stages[pipe.steps[-1]]
    v0 = last.variants[0]
    edited = dataclasses.replace(v0, defines=(*v0.defines, ("EDITED", "1")))
    stages = {**reg.stages, last.name: dataclasses.replace(
        last, variants=(edited, *last.variants[1:]))}
    before = ledger.pipeline_hash(pipe, reg.stages)
    assert ledger.pipeline_hash(pipe, stages) != before
    rows = [row(pipe.name, v.name, before) for v in pipe.variants]
    assert all(s.ok for s in ledger.check([], rows, [pipe], reg.stages))
    assert not any(s.ok for s in ledger.check([], rows, [pipe], stages))


def test_committed_ledger_covers_every_builtin_pipeline(reg: registry.Registry) -> None:
    """What CI's `harness ledger --check` enforces of the pipelines: every variant of each
    has a passing GPU record at its current hash (over every step's kernels)."""
    pipes = [reg.pipelines[n] for n in sorted(reg.pipelines)]
    status = ledger.check([], ledger.read(), pipes, reg.stages)
    assert {s.stage for s in status} == set(reg.pipelines)
    assert len(status) == sum(len(p.variants) for p in pipes)
    bad = [s.describe() for s in status if not s.ok]
    assert not bad, bad


def test_two_seeds_are_a_narrowed_run_and_full_seeds_is_validate_s_default() -> None:
    """FULL_SEEDS is ``harness validate``'s default (3): a record of fewer is narrowed."""
    fams = ["normal"]
    assert ledger.FULL_SEEDS == 3
    assert ledger.full_pass(row("s", "d", "h", seeds=3), fams)
    assert ledger.full_pass(row("s", "d", "h", seeds="2"), fams) is False
    assert ledger.full_pass({"cases": "x"}, fams) is False


def test_a_passing_status_names_its_latest_record(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    h = compiler.kernel_hash(st, st.variant("default"))
    p = tmp_path / "l.csv"
    assert ledger.append([row(st.name, "default", h, date="2026-01-01"),
                          row(st.name, "default", h, date="2026-02-02", cases=7, passed=7,
                              worst_error="1e-3")], p) == p
    status = ledger.check([st], ledger.read(p))[0]
    assert status.ok and status.record is not None and status.record["date"] == "2026-02-02"
    assert status.describe() == (f"dynamic_spikes [default] {h}: validated on NVIDIA H200 "
                                 "2026-02-02 (7/7 cases, worst 1e-3)")
    failing = dataclasses.replace(status, ok=False)
    assert "NO passing GPU validation" in failing.describe()


def test_a_torn_row_is_named_by_its_number(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    good = ",".join(["x"] * len(ledger.COLUMNS))
    p.write_text(",".join(ledger.COLUMNS) + f"\n{good}\n{good}\ndynamic_spikes,default\n")
    with pytest.raises(BadInput, match=r"row 3 has fewer fields than the header"):
        ledger.read(p)
