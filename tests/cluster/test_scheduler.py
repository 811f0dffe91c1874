"""A run on a scheduler started elsewhere (``--cluster tcp://HOST:PORT``) whose cluster
fails under it: its last worker lost (the run waits $HARNESS_CLUSTER_WAIT_S for another,
then stops in one line), or its scheduler lost (one line, none of Dask's tracebacks).
Either way the exit status is 2 and every row written before is kept, whole. The scheduler,
its one worker and the run are processes of their own, as on a cluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cluster.options import WAIT_ENV
from harness.results import files, resultcsv
from tests.cluster.conftest import stopped_sweep, until

Proc = subprocess.Popen[bytes]

def _started(args: list[str], log: Path, env: dict[str, str]) -> Proc:
    with log.open("wb") as f:  # the child holds its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", *args], stdout=f, stderr=f, env=env,
                                start_new_session=True)


@pytest.fixture
def scheduler(toys: Path, tmp_path: Path) -> Iterator[tuple[str, dict[str, Proc]]]:
    """A Dask scheduler and one worker of one thread (no nanny: killed, it stays dead),
    each a process of its own, the worker joined: the scheduler's address and the two."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "",
           "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    address_file = tmp_path / "scheduler.json"
    procs: dict[str, Proc] = {}
    try:
        procs["scheduler"] = _started(
            ["distributed.cli.dask_scheduler", "--scheduler-file", str(address_file),
             "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
            tmp_path / "scheduler.log", env)
        until(address_file.exists, "no scheduler started")
        log = tmp_path / "worker.log"
        procs["worker"] = _started(
            ["distributed.cli.dask_worker", "--scheduler-file", str(address_file),
             "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
            log, env)
        until(lambda: "Registered to" in log.read_text(errors="replace"),
               "no worker joined the scheduler")
        yield json.loads(address_file.read_text())["address"], procs
    finally:
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _lose(address: str, doomed: Proc, out: Path,
          tmp_path: Path) -> tuple[int, str]:
    """Run a long sweep on the scheduler, kill ``doomed`` once two rows are written, and
    return the run's exit status and stderr (a run still going a minute later fails)."""
    rc, stderr, _ = stopped_sweep(["--cluster", address], out, tmp_path,
                                  lambda proc: os.killpg(doomed.pid, signal.SIGKILL),
                                  {WAIT_ENV: "2"})
    return rc, stderr


def _one_line(rc: int, stderr: str, text: str, out: Path) -> None:
    """Exit 2 and one error line saying ``text``, nothing of Dask's; the rows written
    before kept in a whole CSV, and let go of."""
    assert rc == 2, stderr
    said = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(said) == 1 and text in said[0], stderr
    assert "Traceback" not in stderr and "distributed." not in stderr, stderr
    kept = resultcsv.read(out / "slowtoy.csv").rows
    assert len(kept) >= 2 and all(r["status"] == "ok" for r in kept)
    with files.locked(out / "slowtoy.csv"):
        pass


def test_a_run_whose_last_worker_is_lost_stops_past_its_wait(scheduler, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    address, procs = scheduler
    rc, stderr = _lose(address, procs["worker"], tmp_path / "out", tmp_path)
    _one_line(rc, stderr, "the cluster has had no worker for 2 s (every worker lost, or none "
                          "joined): the run stops here; what it wrote so far is kept "
                          "(HARNESS_CLUSTER_WAIT_S=SECONDS waits longer)", tmp_path / "out")


def test_a_lost_scheduler_is_one_line(scheduler, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    address, procs = scheduler
    rc, stderr = _lose(address, procs["scheduler"], tmp_path / "out", tmp_path)
    _one_line(rc, stderr, "error: lost the Dask scheduler (its process ended, or its host is "
                          "out of reach)", tmp_path / "out")
