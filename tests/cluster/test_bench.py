"""``harness bench --cluster`` on the shared local cluster: the points spread over the
workers, only the driver writing (with the plain columns and where each row was
measured), rows that compare with a plain sweep's, a plain CSV not appended to, a worker's
error said before any point, and Ctrl-C stopping the run with every finished row kept."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from harness.contract import registry
from harness.engine import bench as plain
from harness.results import compare, files, provenance, resultcsv
from harness.results.rows import CLUSTER_COLUMNS, COLUMNS, read_rows
from tests.cluster.conftest import stopped_sweep, sweep


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
    rc, stderr, pid = stopped_sweep(["--cluster", "local", "--workers", "2"], out, tmp_path,
                                    lambda proc: os.killpg(proc.pid, signal.SIGINT))
    assert rc == 130, stderr
    said = [ln for ln in stderr.splitlines() if ln.startswith("interrupted:")]
    assert len(said) == 1 and said[0].endswith(f"finished row(s) kept in {out}/"), stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "UserWarning" not in stderr and "distributed." not in stderr, stderr  # quiet
    kept = resultcsv.read(out / "slowtoy.csv").rows  # whole, and every row a valid one
    assert 2 <= int(said[0].split()[1]) <= len(kept) < 2000
    assert all(r["status"] == "ok" for r in kept)
    with files.locked(out / "slowtoy.csv"):  # the driver let go of its lock
        pass
    deadline = time.monotonic() + 30  # and its workers are gone with it
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
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


def test_an_existing_csv_is_refused_before_a_cluster_starts(toy_reg, tmp_path: Path,
                                                            monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without --append or --overwrite, a CSV with rows where the run would write is
    refused in the plain run's one line before any worker is started (Slurm jobs may
    queue for long): in --out whatever the cluster, and in statistics/<model>/ where the
    model is known before the workers start (CPU workers on this machine: cpu). The file
    is left as it was; --append still goes on to start the cluster."""
    from harness import paths
    from harness.cluster import bench as cluster_bench
    from harness.cluster import connect, options

    def started(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(connect, "open_session", started)
    run = plain.bench(toy_reg, ["slowtoy"], sweep=["batch=1"], backend="numpy", budget=0.05,
                      out_dir=tmp_path / "out")
    list(run.rows)
    run.close()
    csv = tmp_path / "out" / "slowtoy.csv"
    before = csv.read_bytes()
    for where in ("local", "tcp://127.0.0.1:8786", "slurm"):
        cs = options.ClusterSpec(where)
        with pytest.raises(files.ResultFileError, match=re.escape(
                f"{csv} exists: --append adds to it, --overwrite replaces it")):
            cluster_bench.bench(toy_reg, ["slowtoy"], cluster=cs, sweep=["batch=2"],
                                backend="numpy", out_dir=tmp_path / "out")
    monkeypatch.setattr(paths, "statistics_dir", lambda: tmp_path / "statistics")
    (tmp_path / "statistics" / "cpu").mkdir(parents=True)
    (tmp_path / "statistics" / "cpu" / "slowtoy.csv").write_bytes(before)
    with pytest.raises(files.ResultFileError, match=re.escape("statistics/cpu/slowtoy.csv exists")):
        cluster_bench.bench(toy_reg, ["slowtoy"], cluster=options.ClusterSpec("local"),
                            sweep=["batch=2"], backend="numpy")
    assert csv.read_bytes() == before
    with pytest.raises(AssertionError, match="a cluster was started"):
        cluster_bench.bench(toy_reg, ["slowtoy"], cluster=options.ClusterSpec("local"),
                            sweep=["batch=2"], backend="numpy", out_dir=tmp_path / "out",
                            append=True)


def test_the_folders_known_before_the_cluster_starts(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Where the run's CSVs go, as far as it is known before any worker: this machine's
    GPU models by nvidia-smi (or cpu), --out itself where the cluster is taken to be of one
    model; a scheduler's or Slurm's models only once their workers are up."""
    from harness import paths
    from harness.cluster import bench as cluster_bench
    from harness.cluster.options import ClusterSpec

    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text("#!/bin/sh\ncat <<'END'\n0, GPU-a, NVIDIA H200\n1, GPU-b, NVIDIA H100 80GB "
                   "HBM3\nEND\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(paths, "statistics_dir", lambda: tmp_path / "st")
    out = tmp_path / "out"

    def known(where: str, backend: str = "auto", workers: int | None = None,
              out_dir: Path | None = None) -> list[Path]:
        return cluster_bench._known_folders(ClusterSpec(where, workers), backend, out_dir)

    assert known("local") == [tmp_path / "st" / "h100-80gb-hbm3", tmp_path / "st" / "h200"]
    assert known("local", out_dir=out) == [out / "h100-80gb-hbm3", out / "h200"]
    assert known("local", workers=1, out_dir=out) == [out]  # the first GPU alone: one model
    assert known("local", "numpy") == [tmp_path / "st" / "cpu"]
    assert known("tcp://h:1") == known("slurm") == []
    assert known("tcp://h:1", out_dir=out) == known("slurm", out_dir=out) == [out]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU shown: CPU workers, unless
    assert known("local") == [tmp_path / "st" / "cpu"]
    assert known("local", "pycuda") == []  # pycuda is asked for (they refuse to start)


def _stand_in_rows(reg, tmp_path: Path, monkeypatch, outcomes, idents, live=None):  # type: ignore[no-untyped-def]
    """The rows ``_rows`` writes (in per-model folders under ``tmp_path``) for a hand-out
    that yields ``outcomes(tasks)``, the workers at ``live`` addresses (default: those of
    ``idents``); no cluster needed."""
    from harness.cluster import bench as cluster_bench
    from harness.cluster.outputs import ClusterOutputs
    from harness.cluster.worker import Setup
    from harness.contract.timing import TimingConfig
    from harness.engine.jobs import plan
    from harness.engine.measure import BenchConfig

    jobs = plan([reg.stages["dynamic_spikes"]], ["batch=2,4", "in_f=8"], None, {}, ())
    monkeypatch.setattr(cluster_bench, "hand_out", lambda *a, **k: iter(outcomes(a[3])))
    out = ClusterOutputs(jobs, tmp_path, True)
    for i in idents.values():
        if i.calibration is not None:  # as the run keeps them at its start
            out.calibration(i.slug, i.calibration)
    cfg = BenchConfig("normal", 0, TimingConfig(budget_s=0.02), True)
    client = _Workers(list(idents) if live is None else live)
    return [m.row for m in cluster_bench._rows(client, Setup("numpy"), cfg, jobs, out, idents,
                                               2, reg)]


class _Workers:
    """Enough of a Dask client for a worker met late: the workers by address."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses

    def nthreads(self) -> dict[str, int]:
        return dict.fromkeys(self.addresses, 1)


def test_a_failed_row_names_only_the_gpu_that_ran_it(reg, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A point that got no result from a worker not known (an error with no result) has an
    empty gpu and no worker columns, not the first worker's GPU; one whose worker is known
    (it died there) names that worker's GPU, and is in its model's file."""
    from harness.cluster import driver
    from harness.cluster.worker import Identity

    h100 = Identity("a", "0", "tcp://a:1", "GPU-a", "pycuda", "h100", "NVIDIA H100")
    h200 = Identity("b", "1", "tcp://b:1", "GPU-b", "pycuda", "h200", "NVIDIA H200")

    def outcomes(tasks):  # type: ignore[no-untyped-def]
        return [driver.Outcome(tasks[0], None, "OSError: its result could not be read"),
                driver.Outcome(tasks[1], None, "the worker running it died 3 time(s)", 3,
                               h200.address)]

    unknown, died = _stand_in_rows(reg, tmp_path, monkeypatch, outcomes,
                                   {h100.address: h100, h200.address: h200})
    assert (unknown["status"], unknown["gpu"], unknown["backend"]) == ("failed", "", "pycuda")
    assert not any(unknown.get(c) for c in ("host", "gpu_uuid", "worker"))
    assert (died["gpu"], died["gpu_uuid"], died["host"]) == ("NVIDIA H200", "GPU-b", "b")
    first = read_rows(tmp_path / "h100" / "dynamic_spikes.csv")  # the first model's file
    assert [(r["gpu"], r["gpu_uuid"]) for r in first] == [("", "")]
    assert [r["gpu"] for r in read_rows(tmp_path / "h200" / "dynamic_spikes.csv")] == \
        ["NVIDIA H200"]


def test_a_replaced_workers_calibration_is_kept_beside_the_first(reg, tmp_path: Path,
                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The worker that replaces a dead one on the same GPU measures it again: its record
    goes beside the first, which the rows measured before refer to, not over it."""
    import dataclasses
    import json

    from harness.cluster import driver
    from harness.cluster.worker import Done, Identity

    first = Identity("a", "0", "tcp://a:1", "GPU-a", "numpy", "h200", "NVIDIA H200",
                     calibration={"gpu_uuid": "GPU-a", "host": "a", "gbps": 4000.0})
    again = dataclasses.replace(first, address="tcp://a:2",
                                calibration={"gpu_uuid": "GPU-a", "host": "a", "gbps": 3900.0})
    row = {"stage": "dynamic_spikes", "backend": "numpy", "variant": "default",
           "status": "ok", "median_us": 1.0}

    def outcomes(tasks):  # type: ignore[no-untyped-def]
        return [driver.Outcome(tasks[0], Done(first, [row])),
                driver.Outcome(tasks[1], Done(again, [row]), attempts=2)]

    got = _stand_in_rows(reg, tmp_path, monkeypatch, outcomes, {first.address: first},
                         live=[again.address])  # the first is dead
    assert len(got) == 2
    kept = tmp_path / "h200" / "calibration"
    assert sorted(p.name for p in kept.glob("*.json")) == ["GPU-a.2.json", "GPU-a.json"]
    assert json.loads((kept / "GPU-a.json").read_text())["gbps"] == 4000.0
    assert json.loads((kept / "GPU-a.2.json").read_text())["gbps"] == 3900.0


def test_restrict_is_read_before_a_cluster_starts(reg, tmp_path: Path,
                                                  monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """--restrict is read before any worker starts: the plan the cluster run makes names
    the build it leaves out, and one that leaves a stage nothing is one line, the cluster
    never started."""
    from harness.cluster import bench as cluster_bench
    from harness.cluster import connect, options
    from harness.errors import BadInput

    seen: list[list[str]] = []

    def started(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("a cluster was started")

    def planned(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(list(a[6]))  # the builds left out, filled by the plan
        raise AssertionError("planned")

    monkeypatch.setattr(connect, "open_session", started)
    kw = dict(cluster=options.ClusterSpec("local"), sweep=["batch=1"], backend="numpy",
              out_dir=tmp_path, defines=["BLOCK=64,128"])
    with pytest.raises(BadInput, match="leaves none of dynamic_spikes's 2 build"):
        cluster_bench.bench(reg, ["dynamic_spikes"], restrict=["BLOCK > 1024"], **kw)
    real = cluster_bench.plan
    monkeypatch.setattr(cluster_bench, "plan",
                        lambda *a: (real(*a), planned(*a)))
    with pytest.raises(AssertionError, match="planned"):
        cluster_bench.bench(reg, ["dynamic_spikes"], restrict=["BLOCK < 100"], **kw)
    assert seen == [["dynamic_spikes default[BLOCK=128]"]]


def test_a_retried_rows_reason_stays_within_its_limit_the_attempt_said() -> None:
    """The note of a point handed out again comes after a reason that may already be at
    its limit (a failed row's with notes on its time): the failure gives way, the notes and
    the attempt stay."""
    from harness.cluster.bench import _retried
    from harness.engine.measure import REASON_CHARS, _failed_reason
    from harness.results.rows import ungated_note

    why = _failed_reason("q: FAILED " + "e" * 600, [ungated_note(5, 20)], limit=REASON_CHARS)
    got = _retried({"status": "failed", "reason": why}, 2)["reason"]
    assert len(got) <= REASON_CHARS and got.startswith("q: FAILED")
    assert got.endswith(f"; {ungated_note(5, 20)}; measured on attempt 2: the worker that "
                        "ran it before died")
    assert _retried({"reason": ""}, 1) == {"reason": ""}


def test_the_sampling_options_reach_the_workers(toy_reg, session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A point measured on a worker is sampled as the driver was told."""
    from harness.engine.bench import Sampling

    got = sweep(toy_reg, session, "slowtoy", "batch=1,2", tmp_path,
                sampling=Sampling(max_noise_pct=1e-9, min_samples=7, max_samples=7))
    assert [int(r["samples"]) for r in got] == [7, 7], [r["reason"] for r in got]
