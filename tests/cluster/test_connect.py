"""The cluster options: checked in one line before any work (a bad --cluster, the extra
missing, options that need --cluster); the local GPUs as nvidia-smi lists them; the rules a
cluster's workers must keep (one thread each, one worker per GPU); Slurm's job script."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cluster import connect, options
from harness.errors import BadInput
from harness.front.cli import app
from tests.cluster.conftest import worker_settings

runner = CliRunner()


def only_line(res, text: str) -> None:  # type: ignore[no-untyped-def]
    """Exit 2, one line on stderr naming the problem, nothing else, no traceback."""
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and text in lines[0], lines
    assert res.stdout.strip() == "" and "Traceback" not in res.output


@pytest.mark.parametrize("args, text", [
    (["bench", "--cluster", "nowhere"], "bad --cluster 'nowhere'"),
    (["bench", "--cluster", "http://host:80"], "bad --cluster 'http://host:80'"),
    (["bench", "--cluster", "tcp://host"], "bad --cluster 'tcp://host'"),
    (["bench", "--cluster", "ucx://127.0.0.1:1"], "bad --cluster 'ucx://127.0.0.1:1'"),
    (["bench", "--cluster", "tls://127.0.0.1:1"], "bad --cluster 'tls://127.0.0.1:1'"),
    (["bench", "--cluster", "tcp://host:99999"], "bad --cluster 'tcp://host:99999'"),
    (["bench", "--cluster", "tcp://host:0"], "bad --cluster 'tcp://host:0'"),
    (["validate", "--cluster", "pbs"], "bad --cluster 'pbs'"),
    (["bench", "--workers", "2"], "give --cluster too"),
    (["validate", "--slurm", "queue=gpu"], "give --cluster too"),
    (["bench", "--cluster", "local", "--device", "1"], "--device picks one GPU"),
    (["bench", "--cluster", "local", "--slurm", "queue=gpu"], "--slurm sets up the jobs"),
    (["bench", "--cluster", "slurm", "--slurm", "partition=gpu"], "bad --slurm 'partition=gpu'"),
    (["bench", "--cluster", "slurm", "--slurm", "queue"], "bad --slurm 'queue'"),
    (["bench", "--cluster", "tcp://10.0.0.1:8786", "--workers", "2"],
     "a running scheduler has its own"),
])
def test_bad_cluster_options_are_one_line(args: list[str], text: str) -> None:
    only_line(runner.invoke(app, args), text)


@pytest.mark.parametrize("command", ["bench", "validate"])
def test_without_the_extra_the_option_says_how_to_install_it(monkeypatch, command) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    only_line(runner.invoke(app, [command, "--cluster", "local"]), options.INSTALL)
    assert options.INSTALL == ("cluster mode needs the cluster extra: pip install "
                               "'spike-harness[cluster]'")


def test_slurm_needs_dask_jobqueue(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)
    with pytest.raises(options.ClusterUnavailable, match="pip install 'spike-harness"):
        options.spec("slurm")
    assert options.spec("local").kind == "local"  # the rest of the extra is enough there


@pytest.fixture
def sbatch(monkeypatch):  # type: ignore[no-untyped-def]
    """Slurm's sbatch on PATH, as on a cluster's login node."""
    real = connect.shutil.which
    monkeypatch.setattr(connect.shutil, "which",
                        lambda name: "/usr/bin/sbatch" if name == "sbatch" else real(name))


def test_slurm_needs_sbatch_and_each_key_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without sbatch the jobs' workers would never come (the run waited forever): one
    line instead; a --slurm key given twice is bad input, not the last one winning."""
    real = connect.shutil.which
    monkeypatch.setattr(connect.shutil, "which",
                        lambda name: None if name == "sbatch" else real(name))
    with pytest.raises(options.ClusterUnavailable, match="sbatch not found on PATH"):
        options.spec("slurm")
    with pytest.raises(BadInput, match="--slurm queue given twice"):
        options.spec("slurm", slurm=["queue=a", "queue=b"])


def test_good_specs(sbatch) -> None:  # type: ignore[no-untyped-def]
    s = options.spec(" tcp://gpu-node:8786 ")
    assert (s.where, s.kind, s.retries, s.workers) == ("tcp://gpu-node:8786", "scheduler", 2,
                                                       None)
    s = options.spec("slurm", 4, 0, ["queue=gpu", "walltime=00:30:00"])
    assert s.kind == "slurm" and s.workers == 4 and s.retries == 0
    assert dict(s.slurm) == {"queue": "gpu", "walltime": "00:30:00"}
    with pytest.raises(BadInput, match="--retries -1"):
        options.spec("local", retries=-1)


def _fake_smi(tmp_path: Path, monkeypatch, text: str) -> None:  # type: ignore[no-untyped-def]
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat <<'END'\n{text}END\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_local_gpus_follow_cuda_visible_devices(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _fake_smi(tmp_path, monkeypatch, "0, GPU-aaaa, NVIDIA H200\n1, GPU-bbbb, NVIDIA H200\n"
                                     "2, GPU-cccc, NVIDIA H100 80GB HBM3\n")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [g.uuid for g in connect.local_gpus()] == ["GPU-aaaa", "GPU-bbbb", "GPU-cccc"]
    assert connect.local_gpus()[2].name == "NVIDIA H100 80GB HBM3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    assert [g.index for g in connect.local_gpus()] == [2, 0]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-bb")
    assert [g.index for g in connect.local_gpus()] == [1]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert connect.local_gpus() == []


def test_more_local_workers_than_gpus_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _fake_smi(tmp_path, monkeypatch, "0, GPU-aaaa, NVIDIA H200\n")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    with pytest.raises(BadInput, match="shows 1 GPU"):
        connect.open_session(options.spec("local", workers=2))


def test_more_cpu_workers_than_cores_is_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A CPU worker times the NumPy references on a core of its own: more than the machine
    has is one line, before any worker starts (not a machine filled with processes)."""
    monkeypatch.setattr(connect.os, "cpu_count", lambda: 2)
    with pytest.raises(BadInput, match="--workers 64: CPU workers time the NumPy references, "
                                       "a core each, and this machine has 2"):
        connect.open_session(options.spec("local", workers=64), "numpy")


class _Client:
    def __init__(self, threads: dict[str, int]) -> None:
        self.threads = threads

    def nthreads(self) -> dict[str, int]:
        return dict(self.threads)


def test_a_worker_of_several_threads_is_refused() -> None:
    with pytest.raises(options.ClusterUnavailable, match="runs 4 threads"):
        connect.check_workers(_Client({"tcp://a:1": 1, "tcp://b:1": 4}), {})


def test_two_workers_on_one_gpu_are_refused() -> None:
    client = _Client({"tcp://a:1": 1, "tcp://a:2": 1, "tcp://b:1": 1})
    ok = {"tcp://a:1": ("a", "GPU-1"), "tcp://a:2": ("a", "GPU-2"), "tcp://b:1": ("b", "GPU-1")}
    connect.check_workers(client, ok)  # the same UUID on two hosts cannot be one GPU
    connect.check_workers(client, {a: ("a", "") for a in ok})  # CPU workers share no GPU
    with pytest.raises(options.ClusterUnavailable, match="share the GPU GPU-1 on a"):
        connect.check_workers(client, {**ok, "tcp://a:2": ("a", "GPU-1")})


def test_slurm_jobs_are_one_gpu_and_one_thread_each(sbatch) -> None:  # type: ignore[no-untyped-def]
    cs = options.spec("slurm", 3, slurm=["queue=gpu", "account=lab", "gres=gpu:h200:1",
                                          "memory=64GB", "walltime=00:20:00"])
    cluster = connect.slurm_cluster(cs)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert "#SBATCH -p gpu" in script and "#SBATCH -A lab" in script
    assert "#SBATCH --gres=gpu:h200:1" in script and "#SBATCH -t 00:20:00" in script
    assert "--nthreads 1" in script and "--nworkers" not in script and "--nanny" in script


def test_local_workers_leave_the_timing_thread_and_ctrl_c_alone(session) -> None:  # type: ignore[no-untyped-def]
    """No sampling profiler interrupting the thread that times, Ctrl-C left to the driver,
    no GPU shown to a CPU worker (two of them would share it), a task failed at once when
    its worker dies (the driver retries it); also in the workers started after a death."""
    got = session.client.run(worker_settings)
    assert len(got) == 2
    assert set(got.values()) == {(False, signal.SIG_IGN, "")}
    info = session.client.scheduler_info(n_workers=-1)["workers"]
    assert [w["nthreads"] for w in info.values()] == [1, 1]
    assert session.cluster.scheduler.allowed_failures == 0


def test_a_dead_worker_is_left_to_its_nanny() -> None:
    """SpecCluster closes, for good, the nanny of a worker not back within 15 s of a
    removal; the local cluster's removal only updates what it knows, so the nanny starts
    the worker again however long that takes (a loaded machine: the hang this mends)."""
    from distributed import SpecCluster

    from harness.cluster.connect import _nanny_cluster

    cls = _nanny_cluster(SpecCluster)
    assert issubclass(cls, SpecCluster)
    assert cls._update_worker_status is not SpecCluster._update_worker_status
    c = object.__new__(cls)
    c.scheduler_info = {"workers": {"tcp://w0": {"name": 0}, "tcp://w1": {"name": 1}}}
    c._update_worker_status("remove", "tcp://w0")  # SpecCluster's would need a running loop
    assert c.scheduler_info["workers"] == {"tcp://w1": {"name": 1}}


def test_the_wait_for_workers_has_a_limit_the_variable_sets(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A cluster run waits for a worker a bounded time: WORKERS_S by default (a Slurm
    cluster SLURM_S, for its queue), or what $HARNESS_CLUSTER_WAIT_S says; a value that is
    not a number of seconds above 0 is bad input, one line, before any work."""
    monkeypatch.delenv(options.WAIT_ENV, raising=False)
    assert options.spec("local").limit_s == options.WORKERS_S
    assert options.ClusterSpec("slurm").limit_s == options.SLURM_S > options.WORKERS_S
    monkeypatch.setenv(options.WAIT_ENV, "7.5")
    assert options.spec("tcp://h:1").limit_s == 7.5
    assert options.spec("local", wait_s=3).limit_s == 3  # the library's callers' own
    for bad in ("0", "-1", "soon", "inf", "nan"):
        monkeypatch.setenv(options.WAIT_ENV, bad)
        with pytest.raises(BadInput, match=f"HARNESS_CLUSTER_WAIT_S='{bad}': the seconds"):
            options.spec("local")
    only_line(runner.invoke(app, ["bench", "--cluster", "local"]),
              "HARNESS_CLUSTER_WAIT_S='nan'")
    with pytest.raises(BadInput, match="of 0 s: a number of seconds above 0"):
        options.spec("local", wait_s=0)


def test_slurm_jobs_that_never_start_end_the_wait(sbatch, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Jobs that stay queued no longer hold the run forever: past its wait the run stops
    in one line, and the cluster is closed (its jobs cancelled). No Slurm needed: the
    cluster is a stand-in whose first worker never comes."""
    closed = []

    class Client:
        def wait_for_workers(self, n: int, timeout: float | None = None) -> None:
            if timeout is None:
                raise AssertionError("the run waits for the first job without a limit")
            raise TimeoutError

        def close(self) -> None:
            closed.append("client")

    class Cluster:
        def close(self) -> None:
            closed.append("cluster")

    monkeypatch.setattr(connect, "_slurm", lambda cs: connect.Session(
        Client(), Cluster(), f"Slurm cluster of {cs.workers} job(s)"))
    with pytest.raises(options.ClusterUnavailable,
                       match=r"^Slurm cluster of 2 job\(s\): no job started within 5 s "
                             r"\(still queued\? squeue says; its jobs are cancelled; "
                             r"HARNESS_CLUSTER_WAIT_S=SECONDS waits longer\)$"):
        monkeypatch.setenv("HARNESS_CLUSTER_WAIT_S", "5")
        connect.open_session(options.spec("slurm", 2))
    assert closed == ["client", "cluster"]


def test_a_scheduler_lost_while_workers_are_awaited_is_one_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Dask's client raises OSError when its scheduler goes away during the first wait: the
    run's one line (LOST), the session closed, not a traceback."""
    closed = []

    class Client:
        def wait_for_workers(self, n: int, timeout: float | None = None) -> None:
            raise OSError("Timed out trying to connect to tcp://head:8786 after 30 s")

        def close(self) -> None:
            closed.append("client")

    monkeypatch.setattr(connect, "_scheduler", lambda cs: connect.Session(
        Client(), None, f"the Dask scheduler at {cs.where}"))
    with pytest.raises(options.ClusterUnavailable) as lost:
        connect.open_session(options.spec("tcp://head:8786"))
    assert str(lost.value) == connect.LOST and closed == ["client"]


def test_the_schedulers_own_limit_comes_after_the_drivers(session) -> None:  # type: ignore[no-untyped-def]
    """A cluster started here fails a task no worker is left to run only well after the
    driver has stopped the run (a task it failed first would be a failed row)."""
    cs = options.ClusterSpec("local", wait_s=30)
    assert connect.config(cs)["distributed.scheduler.no-workers-timeout"] == "60s"
    assert connect.config(cs)["distributed.scheduler.allowed-failures"] == 0
    assert session.cluster.scheduler.no_workers_timeout == \
        connect.BACKSTOP * options.spec("local").limit_s


def test_dasks_logging_is_held_back_while_a_session_is_open() -> None:
    """Dask's log lines (a lost scheduler's reconnection tracebacks, logged by its client)
    are not emitted while a session is open, and are as they were once it is closed."""
    import logging

    import distributed  # noqa: F401  (its logging is set up as it is imported)

    client, nanny = logging.getLogger("distributed.client"), logging.getLogger("distributed.nanny")
    old, nanny_was = client.level, nanny.getEffectiveLevel()  # (another session may be open)
    client.setLevel(logging.WARNING)
    try:
        s = connect.Session(object(), None, "a stand-in", quiet=connect._quiet())
        assert not client.isEnabledFor(logging.ERROR) and not nanny.isEnabledFor(logging.ERROR)
        assert not logging.getLogger("tornado.application").isEnabledFor(logging.ERROR)
        s.close()
        assert client.level == logging.WARNING and nanny.getEffectiveLevel() == nanny_was
    finally:
        client.setLevel(old)


def test_nvidia_smi_is_asked_once_a_process(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A run lists the GPUs for its folders and again to start its workers: nvidia-smi is
    run once, and CUDA_VISIBLE_DEVICES still applies at every ask."""
    calls = tmp_path / "calls"
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho x >> {calls}\ncat <<'END'\n0, GPU-a, NVIDIA H200\n"
                   "1, GPU-b, NVIDIA H200\nEND\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [g.uuid for g in connect.local_gpus()] == ["GPU-a", "GPU-b"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert [g.uuid for g in connect.local_gpus()] == ["GPU-b"]
    assert calls.read_text() == "x\n"


def test_an_nvidia_smi_that_lists_nothing_is_asked_again(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An empty or failed answer is not kept: the next ask runs nvidia-smi again, and a GPU
    it then lists is seen."""
    calls, listing = tmp_path / "calls", tmp_path / "listing"
    listing.write_text("")
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho x >> {calls}\ncat {listing}\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert connect.local_gpus() == []
    listing.write_text("0, GPU-a, NVIDIA H200\n")
    assert [g.uuid for g in connect.local_gpus()] == ["GPU-a"]
    assert connect.local_gpus()[0].name == "NVIDIA H200"
    assert calls.read_text() == "x\nx\n"


def test_a_failed_nvidia_smi_s_partial_list_is_not_kept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An nvidia-smi that lists a GPU and then fails is not believed for the rest of the
    process: its list is used this once, and the next ask runs it again."""
    calls = tmp_path / "calls"
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho x >> {calls}\necho '0, GPU-a, NVIDIA H200'\nexit 15\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [g.uuid for g in connect.local_gpus()] == ["GPU-a"]
    connect.local_gpus()
    assert calls.read_text() == "x\nx\n"
