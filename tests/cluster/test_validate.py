"""``harness validate --cluster`` on the shared local cluster: each target variant's cases
on a worker, as the plain validation plans them, and a unit whose worker dies a failed
case saying so."""

from __future__ import annotations

from pathlib import Path

from harness.cluster import options, validate
from harness.engine import validate as plain_validate
from harness.engine.targets import resolve


def test_validation_runs_on_the_workers(toy_reg, session) -> None:  # type: ignore[no-untyped-def]
    rep = validate.validate_targets(toy_reg, ["slowtoy", "dynamic_spikes"],
                                    cluster=options.spec("local"), families=["normal"],
                                    seeds=1, backend="numpy", session=session)
    from harness.backends.numpy import NumpyRunner

    here = list(plain_validate.validation(
        toy_reg, resolve(toy_reg, ["slowtoy", "dynamic_spikes"], True), NumpyRunner(), "all",
        ["normal"], 1, 0, {}))
    assert [(s.name, s.variant, s.kernel_hash, len(s.cases)) for s in rep.summaries] == \
        [(s.name, s.variant, s.kernel_hash, len(s.cases)) for s in here]
    assert rep.failure is None and all(s.passed == len(s.cases) > 0 for s in rep.summaries)


def test_a_validation_unit_whose_worker_dies_is_a_failed_case(toy_reg, session, toys: Path) -> None:  # type: ignore[no-untyped-def]
    before = (toys / "doomed").read_text().count("\n") if (toys / "doomed").exists() else 0
    rep = validate.validate_targets(toy_reg, ["doomtoy"], cluster=options.spec("local", retries=0),
                                    backend="numpy", session=session)
    assert (toys / "doomed").read_text().count("\n") == before + 1
    assert rep.failure == "1 validation case(s) failed"
    assert "not validated: the worker running it died 1 time(s)" in \
        rep.failures[0].problems[0]
    session.client.wait_for_workers(2, timeout=60)


def _stand_in(monkeypatch, tmp_path: Path, hand_out):  # type: ignore[no-untyped-def]
    """A cluster of one H200 worker whose hand-out is ``hand_out``, the ledger in
    ``tmp_path``: (the worker's identity, a passing case, the ledger's path, a session)."""
    import dataclasses

    from harness.backends.pycuda.context import DeviceInfo
    from harness.cluster.worker import Identity
    from harness.results import ledger

    book = tmp_path / "ledger.csv"
    monkeypatch.setattr(ledger, "default_path", lambda: book)
    info = DeviceInfo(0, "NVIDIA H200", (9, 0), 132, 60 << 20, 141 << 30, "580.1", "13.0",
                      1980, 3201, 6144)
    ident = dataclasses.replace(Identity("far", "3", "tcp://far:1", "GPU-a", "pycuda",
                                         "h200", "NVIDIA H200"), device=info)
    ok = plain_validate.CaseResult("dynamic_spikes", "default", "normal", 0, {}, (), ())
    monkeypatch.setattr(validate, "greet", lambda client, setup, wait_s: {ident.address: ident})
    monkeypatch.setattr(validate, "hand_out", lambda *a: hand_out(ident, ok, *a))
    session = type("S", (), {"client": None, "close": lambda self: None})()
    return book, session


def test_a_unit_built_from_another_source_is_a_failed_case(reg, tmp_path: Path,
                                                           monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A worker whose plugins or kernels differ from the driver's validates another kernel:
    its cases cannot stand for the driver's source, so the unit is a failed case naming both
    hashes (a recorded row would certify the driver's hash on another kernel's run). No
    cluster needed: the hand-out is a stand-in."""
    from harness.cluster import driver
    from harness.cluster.worker import Done
    from harness.results import ledger

    def hand_out(ident, ok, client, fn, args, tasks, retries, window, wait_s):  # type: ignore[no-untyped-def]
        for t in tasks:
            yield driver.Outcome(t, Done(ident, cases=[ok], kernel_hash="0123456789abcdef"))

    book, session = _stand_in(monkeypatch, tmp_path, hand_out)
    rep = validate.validate_targets(reg, ["dynamic_spikes"], cluster=options.spec("local"),
                                    variant="default", seeds=1, backend="numpy",
                                    session=session, record=True)
    (s,) = rep.summaries
    assert rep.rows == 0 and ledger.read(book) == []  # no row: no validation of this source
    assert s.passed == 0 and len(s.cases) == 1
    why = s.cases[0].problems[0]
    assert why.startswith("not validated: worker 3 on far built 0123456789abcdef, where this "
                          f"source hashes {s.kernel_hash}: its plugins or kernels differ")


def test_an_interrupted_cluster_validation_keeps_the_units_that_landed(
        reg, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A unit's ledger row is written as its result lands: Ctrl-C before the next keeps it
    (the hand-out is a stand-in)."""
    import pytest

    from harness.cluster import driver
    from harness.cluster.worker import Done
    from harness.results import ledger

    def hand_out(ident, ok, client, fn, args, tasks, retries, window, wait_s):  # type: ignore[no-untyped-def]
        first = tasks[0]
        st = reg.stages[first.target]
        yield driver.Outcome(first, Done(ident, cases=[ok], kernel_hash=plain_validate
                                         .target_hash(st, first.variant, reg.stages)))
        raise KeyboardInterrupt

    book, session = _stand_in(monkeypatch, tmp_path, hand_out)
    with pytest.raises(KeyboardInterrupt):
        validate.validate_targets(reg, ["dynamic_spikes"], cluster=options.spec("local"),
                                  seeds=1, record=True, backend="numpy", session=session)
    assert [(r["variant"], r["status"], r["gpu"]) for r in ledger.read(book)] == \
        [("default", "pass", "NVIDIA H200")]
