"""The driver's retries on the shared local cluster: a point whose worker is killed is
handed out again and measured, and past ``--retries`` it is a failed row saying why; the
nanny puts a fresh worker, with the same settings, in the dead one's place."""

from __future__ import annotations

import signal
from pathlib import Path

from harness.results.rows import read_rows
from tests.cluster.conftest import sweep, worker_settings


def test_a_killed_workers_point_is_retried(toy_reg, session, toys: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    got = sweep(toy_reg, session, "crashtoy", "batch=1,2,3,4", tmp_path)
    assert (toys / "crashed").read_text().count("\n") == 1  # the worker died once
    assert sorted(r["batch"] for r in got) == [1, 2, 3, 4]
    assert all(r["status"] == "ok" for r in got), [r["reason"] for r in got]
    two = next(r for r in got if r["batch"] == 2)
    assert "measured on attempt 2: the worker that ran it before died" in two["reason"]
    assert len(read_rows(tmp_path / "crashtoy.csv")) == 4
    session.client.wait_for_workers(2, timeout=60)  # the nanny started a new one,
    got = session.client.run(worker_settings)  # set up as the one it replaces was
    assert set(got.values()) == {(False, signal.SIG_IGN, "")}


def test_past_the_retries_a_point_is_a_failed_row(toy_reg, session, toys: Path,  # type: ignore[no-untyped-def]
                                                  tmp_path: Path) -> None:
    doomed = toys / "doomed"
    before = doomed.read_text().count("\n") if doomed.exists() else 0
    got = sweep(toy_reg, session, "doomtoy", "batch=1,2", tmp_path, retries=1)
    assert doomed.read_text().count("\n") == before + 2  # handed out twice, died twice
    by = {r["batch"]: r for r in got}
    assert by[2]["status"] == "ok"
    assert by[1]["status"] == "failed" and "died 2 time(s)" in by[1]["reason"]
    assert by[1]["host"] and by[1]["worker"] != ""  # the worker it last died on
    on_disk = read_rows(tmp_path / "doomtoy.csv")
    assert sorted(r["status"] for r in on_disk) == ["failed", "ok"]
    session.client.wait_for_workers(2, timeout=60)
