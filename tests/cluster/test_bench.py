"""``harness bench --cluster`` on the shared local cluster: the points spread over the
workers, only the driver writing (with the plain columns and where each row was
measured), rows that compare with a plain sweep's, a plain CSV not appended to, a worker's
error said before any point, and Ctrl-C stopping the run with every finished row kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.contract import registry
from harness.engine import bench as plain
from harness.results import compare, files, provenance
from harness.results.rows import CLUSTER_COLUMNS, COLUMNS, read_rows
from tests.cluster.conftest import sweep


def _no_writes() -> None:
    """Runs in each worker: any result file it tried to write would raise."""
    from harness.results import files

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a worker wrote a result file")

    files.RowFile.__init__ = refuse  # type: ignore[method-assign]
    files.replace = refuse
    files._write = refuse


def test_points_are_spread_and_only_the_driver_writes(toy_reg, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    session.client.run(_no_writes)
    got = sweep(toy_reg, session, "slowtoy", "batch=1,2,3,4,5,6,7,8", tmp_path)
    assert sorted(r["batch"] for r in got) == list(range(1, 9))
    assert all(r["status"] == "ok" for r in got), [r["reason"] for r in got]
    on_disk = read_rows(tmp_path / "slowtoy.csv")
    assert list(on_disk[0]) == list(CLUSTER_COLUMNS) == [*COLUMNS, "host", "gpu_uuid",
                                                          "worker"]
    assert len(on_disk) == 8 and len({r["worker"] for r in on_disk}) == 2
    assert all(r["host"] and r["backend"] == "numpy" and not r["gpu_uuid"] for r in on_disk)
    # The driver's command line is every row's, not the worker process's.
    assert {r["command"] for r in on_disk} == {provenance.command_line()}
    # The driver let go of its files: another run can take them.
    with files.locked(tmp_path / "slowtoy.csv"):
        pass


def test_rows_compare_with_a_plain_sweep(toy_reg, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = plain.bench(toy_reg, ["slowtoy"], sweep=["batch=1,2,4"], backend="numpy", budget=0.05,
                      out_dir=tmp_path / "plain")
    assert len([m for m in run.rows]) == 3
    run.close()
    got = sweep(toy_reg, session, "slowtoy", "batch=1,2,4", tmp_path / "cluster")
    assert len(got) == 3
    rep = compare.run(tmp_path / "plain" / "slowtoy.csv", tmp_path / "cluster" / "slowtoy.csv")
    assert [r.verdict for r in rep.rows if r.verdict in (compare.NEW, compare.GONE)] == []
    assert len(rep.rows) == 3


def test_a_cluster_run_does_not_append_to_a_plain_csv(toy_reg, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = plain.bench(toy_reg, ["slowtoy"], sweep=["batch=1"], backend="numpy", budget=0.05,
                      out_dir=tmp_path)
    list(run.rows)
    run.close()
    with pytest.raises(files.ResultFileError, match="other columns"):
        sweep(toy_reg, session, "slowtoy", "batch=2", tmp_path, append=True)
    assert len(read_rows(tmp_path / "slowtoy.csv")) == 1


def test_an_unknown_peer_is_said_before_any_point(toy_reg, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from harness.errors import HarnessError

    with pytest.raises(HarnessError, match="the torch peers are timed on the GPU"):
        sweep(toy_reg, session, "slowtoy", "batch=1", tmp_path, peers="torch")
    assert not (tmp_path / "slowtoy.csv").exists()
    assert os.environ[registry.PATH_ENV]  # the module's plugin folder is still set


def test_ctrl_c_stops_the_run_and_keeps_its_rows(toys: Path, tmp_path: Path) -> None:
    """Ctrl-C at a terminal: SIGINT to the whole process group, the driver and its
    workers; exit 130, every finished row kept in a valid CSV, no process left behind."""
    out = tmp_path / "out"
    # A quarter second a point, two workers: about 250 s in all, far longer than it takes to
    # see two rows and interrupt (the run is interrupted, so its length costs nothing; with
    # 120 points, and again with 400 under a full parallel test load, the run ended between
    # the check and the signal).
    points = ",".join(str(b) for b in range(1, 2001))
    cmd = [sys.executable, "-m", "harness", "bench", "slowtoy", "--cluster", "local",
           "--workers", "2", "--backend", "numpy", "--sweep", f"batch={points}", "--budget",
           "0.05", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=tmp_path,
                            env={**os.environ, "COLUMNS": "1000"})  # one line each
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            csv = out / "slowtoy.csv"
            if csv.exists() and csv.read_text().count("\n") >= 3:  # the header, two rows
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr
    said = [ln for ln in stderr.splitlines() if ln.startswith("interrupted:")]
    assert len(said) == 1 and said[0].endswith(f"finished row(s) kept in {out}/"), stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "UserWarning" not in stderr and "distributed." not in stderr, stderr  # quiet
    kept = compare.read(out / "slowtoy.csv").rows  # whole, and every row a valid one
    assert 2 <= int(said[0].split()[1]) <= len(kept) < 2000
    assert all(r["status"] == "ok" for r in kept)
    with files.locked(out / "slowtoy.csv"):  # the driver let go of its lock
        pass
    deadline = time.monotonic() + 30  # and its workers are gone with it
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        pytest.fail("worker processes outlived the interrupted run")


def test_an_interrupt_between_a_points_rows_keeps_them_all(reg, tmp_path: Path,
                                                           monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A point comes back with several rows (its peers' and ours): all of them are in the
    file before the first is handed on, so Ctrl-C while the progress bar draws that one
    loses none (no cluster needed: the hand-out is a stand-in)."""
    from harness.cluster import bench as cluster_bench
    from harness.cluster import driver
    from harness.cluster.outputs import ClusterOutputs
    from harness.cluster.worker import Done, Identity, Setup, _Rows
    from harness.contract.timing import TimingConfig
    from harness.engine import devices
    from harness.engine.jobs import plan
    from harness.engine.measure import BenchConfig

    jobs = plan([reg.stages["dynamic_spikes"]], ["batch=2", "in_f=8"], None, {}, ())
    chosen = devices.choose("numpy", 0)
    cfg = BenchConfig("normal", 0, TimingConfig(budget_s=0.02), True)
    row = next(iter(plain.run(jobs, chosen.runner, cfg, chosen.meta, _Rows(), peers=[],
                              stages=reg.stages))).row
    made = [dict(row, backend=b) for b in ("torch", "torch_compile", "numpy")]
    ident = Identity("vm", "0", "tcp://w:1", "", "numpy", "cpu", "cpu")

    def hand_out(*a, **k):  # type: ignore[no-untyped-def]
        yield driver.Outcome(a[3][0], Done(ident, made))

    monkeypatch.setattr(cluster_bench, "hand_out", hand_out)
    out = ClusterOutputs(jobs, tmp_path, False)
    gen = cluster_bench._rows(None, Setup("numpy"), cfg, jobs, out, {"tcp://w:1": ident}, 2,
                              reg)
    next(gen)  # the first row drawn; the interrupt lands here
    gen.close()
    assert [r["backend"] for r in read_rows(tmp_path / "dynamic_spikes.csv")] == \
        ["torch", "torch_compile", "numpy"]
