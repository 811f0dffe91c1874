"""Opening a cluster: every GPU of this machine, a running Dask scheduler, or workers
submitted through Slurm (dask-jobqueue); and the rules its workers must keep.

Every cluster the harness starts has one worker process per GPU with one thread, so that a
GPU never times two points at once; a scheduler started elsewhere is checked for the same
(:func:`check_workers`). A local GPU worker sees one GPU only, pinned by its UUID in
``CUDA_VISIBLE_DEVICES`` (dask-cuda's ``LocalCUDACluster`` where it is installed does the
same by index). The schedulers started here fail a task at once when its worker dies
(``allowed-failures`` 0: the driver retries it, a bounded number of times) and give each
worker one task at a time (``worker-saturation`` 1.0: a worker's death takes only the
point it was running with it).

No wait for workers is without a limit (``ClusterSpec.limit_s``, $HARNESS_CLUSTER_WAIT_S),
and while a session is open Dask's own logging is held back (what became of the run is the
harness's one line). The options themselves are checked in :mod:`harness.cluster.options`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.cluster.options import (
    SLURM_KEYS,
    WAIT_ENV,
    ClusterSpec,
    ClusterUnavailable,
    require_dask,
)
from harness.errors import BadInput

#: Seconds to wait for a running scheduler to answer.
CONNECT_S = 30
#: Worker processes of a local cluster without a GPU (the NumPy references).
CPU_WORKERS = 2
#: What every local worker process loads first: it leaves Ctrl-C to the driver.
PRELOAD = "harness.cluster.preload"
#: Every local worker's settings: Dask's sampling profiler, which interrupts the thread
#: that times every 10 ms to read its stack, stays off.
WORKER_CONFIG = {"distributed.worker.profile.enabled": False}
#: The settings of every cluster started here (see the module's docstring).
CONFIG = {"distributed.scheduler.allowed-failures": 0,
          "distributed.scheduler.worker-saturation": 1.0,
          **WORKER_CONFIG}
#: The scheduler's own limit on a task no worker is left to run, as a multiple of the
#: driver's wait (:func:`config`).
BACKSTOP = 2
#: What a run says when its scheduler no longer answers.
LOST = ("lost the Dask scheduler (its process ended, or its host is out of reach): the run "
        "stops here; what it wrote so far is kept")


def config(cs: ClusterSpec) -> dict[str, Any]:
    """The settings of a cluster started here for ``cs``: CONFIG, and the scheduler's own
    limit on a task no worker is left to run, BACKSTOP times the driver's wait. The driver
    stops first (:func:`harness.cluster.driver.Patience`); a task the scheduler failed
    there would be a failed row, so its limit is only a backstop."""
    return {**CONFIG, "distributed.scheduler.no-workers-timeout": f"{BACKSTOP * cs.limit_s:g}s"}


def workers(client: Any) -> dict[str, int]:
    """The scheduler's workers now, by address, with their threads (asked directly:
    ``scheduler_info``'s table is a cache the client's timer refreshes, and it can come back
    empty). ClusterUnavailable (LOST, one line) where the scheduler does not answer: Dask's
    client raises OSError while it tries to reach it again, and, once it has given up and
    closed, an AttributeError of its own."""
    try:
        return dict(client.nthreads())
    except Exception:
        raise ClusterUnavailable(LOST) from None


@dataclass(frozen=True)
class Gpu:
    """A GPU of this machine as nvidia-smi lists it."""

    index: int
    uuid: str
    name: str


def local_gpus() -> list[Gpu]:
    """The GPUs of this machine that ``CUDA_VISIBLE_DEVICES`` leaves visible (all when it
    is unset), by nvidia-smi; none without it. No CUDA context is opened here."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    gpus = list(_smi_gpus(exe))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return gpus
    picked = []
    for v in (v.strip() for v in visible.split(",") if v.strip()):
        picked += [g for g in gpus if (str(g.index) == v if v.isdigit()
                                       else g.uuid.startswith(v))]
    return list(dict.fromkeys(picked))


#: nvidia-smi's answers by its path, the ones that listed a GPU (a failed or empty one is
#: asked again next time: in a long-lived process it may have been passing).
_SMI: dict[str, tuple[Gpu, ...]] = {}


def _smi_gpus(exe: str) -> tuple[Gpu, ...]:
    """Every GPU ``exe`` (an nvidia-smi) lists, asked once a process where it lists any: a
    run checks its folders before it starts its workers, and both need the list."""
    if exe in _SMI:
        return _SMI[exe]
    try:
        done = subprocess.run([exe, "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    gpus = []
    for line in done.stdout.splitlines():
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) == 3 and parts[0].isdigit():
            gpus.append(Gpu(int(parts[0]), parts[1], parts[2]))
    if gpus and done.returncode == 0:  # a failed run's partial list is not kept
        _SMI[exe] = tuple(gpus)
    return tuple(gpus)


@dataclass
class Session:
    """A Dask client on a cluster, closed (the cluster too, where it was started here) by
    :meth:`close`."""

    client: Any
    cluster: Any | None
    #: The cluster in a few words, for the run's note.
    what: str
    #: Workers the session waits for before the first point.
    expected: int = 1
    #: Whether the local workers were given a GPU each (else: the NumPy references).
    gpus: bool = False
    closed: bool = field(default=False, repr=False)
    #: Dask's logging held back while the session is open (:func:`_quiet`).
    quiet: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, repr=False)

    def close(self) -> None:
        """Close the client, and the cluster it started (again: nothing); then Dask's
        logging is as it was (closing a client whose scheduler is lost logs too)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()
        self.quiet.close()


def open_session(cs: ClusterSpec, backend: str = "auto") -> Session:
    """Start or reach the cluster ``cs`` names and wait for its first workers. ``backend``
    numpy starts local workers without a GPU (``--workers``, default 2)."""
    require_dask(cs.kind == "slurm")
    import dask

    quiet = _quiet()
    try:
        with dask.config.set(config(cs)):
            if cs.kind == "local":
                s = _local(cs, backend)
            elif cs.kind == "slurm":
                s = _slurm(cs)
            else:
                s = _scheduler(cs)
    except BaseException:
        quiet.close()
        raise
    s.quiet = quiet
    try:
        s.client.wait_for_workers(s.expected, timeout=cs.limit_s)
    except TimeoutError:  # a Slurm cluster's close cancels its jobs, queued ones too
        s.close()
        raise ClusterUnavailable(_none_joined(cs, s.what)) from None
    except OSError:  # the scheduler lost while it was waited on (Dask's reconnection)
        s.close()
        raise ClusterUnavailable(LOST) from None
    except BaseException:
        s.close()
        raise
    return s


def _none_joined(cs: ClusterSpec, what: str) -> str:
    """The one line of a cluster whose first worker did not come within its wait."""
    longer = f"{WAIT_ENV}=SECONDS waits longer"
    if cs.kind == "slurm":
        return (f"{what}: no job started within {cs.limit_s:g} s (still queued? squeue says; "
                f"its jobs are cancelled; {longer})")
    if cs.kind == "scheduler":
        return (f"{what}: no worker joined within {cs.limit_s:g} s (start them with: dask "
                "worker ADDRESS --nthreads 1, one per GPU, each with its GPU in "
                f"CUDA_VISIBLE_DEVICES; {longer})")
    return f"{what}: its workers had not all started within {cs.limit_s:g} s ({longer})"


#: The loggers of Dask's logging configuration (its client's and comms', tornado's event
#: loop's, bokeh's).
DASK_LOGGERS = ("distributed", "tornado", "bokeh")


def _quiet() -> contextlib.ExitStack:
    """Dask's own log lines held back until the session closes: a lost scheduler's
    reconnection tracebacks, a lost worker's warnings. What became of the run is the
    harness's one line, and what became of a point its row's reason. Its loggers are set
    to CRITICAL (each one with a level of its own: ``distributed.client`` has one), so that
    nothing reaches any handler, Dask's own on stderr or one an embedding program set up;
    a local cluster's ``silence_logs`` does as much for its handlers. Closing the stack
    puts the levels back."""
    names = {n for n in logging.Logger.manager.loggerDict if n.split(".")[0] in DASK_LOGGERS}
    stack = contextlib.ExitStack()
    for name in sorted({*DASK_LOGGERS, *names}):
        log = logging.getLogger(name)
        if name in DASK_LOGGERS or log.level != logging.NOTSET:  # the rest inherit
            stack.callback(log.setLevel, log.level)
            log.setLevel(logging.CRITICAL)
    return stack


def _nanny(env: Mapping[str, str], name: int) -> dict[str, Any]:
    """A local worker's spec: one thread, its GPU in ``env``, Dask's own logs silenced
    (what a point or a worker became is in the rows and the reasons)."""
    from distributed import Nanny

    return {"cls": Nanny, "options": {
        "nthreads": 1, "host": "127.0.0.1", "memory_limit": 0, "name": name,
        "silence_logs": logging.CRITICAL, "dashboard": False, "env": dict(env),
        "config": dict(WORKER_CONFIG),  # for the restarted processes too
        "preload": [PRELOAD]}}


def _local(cs: ClusterSpec, backend: str) -> Session:
    from distributed import Client, Scheduler, SpecCluster

    gpus = [] if backend == "numpy" else local_gpus()
    if gpus:
        if cs.workers is not None and cs.workers > len(gpus):
            raise BadInput(f"--workers {cs.workers}: this machine shows {len(gpus)} GPU(s), "
                           "and a GPU times one point at a time")
        gpus = gpus[:cs.workers or len(gpus)]
        if (cuda := _local_cuda(gpus)) is not None:
            return cuda
        workers = {i: _nanny({"CUDA_VISIBLE_DEVICES": g.uuid}, i) for i, g in enumerate(gpus)}
        what = f"local cluster of {len(gpus)} GPU worker(s)"
    else:  # no GPU is shown to them: two workers never share one nvidia-smi did not list
        n = cs.workers or CPU_WORKERS
        if cs.workers is not None and n > (cores := os.cpu_count() or 1):
            raise BadInput(f"--workers {n}: CPU workers time the NumPy references, a core "
                           f"each, and this machine has {cores}")
        workers = {i: _nanny({"CUDA_VISIBLE_DEVICES": ""}, i) for i in range(n)}
        what = f"local cluster of {n} CPU worker(s)" + \
            ("" if backend == "numpy" else " (nvidia-smi lists no GPU here)")
    # No dashboard, and its HTTP server (health checks) on a free port, not 8787.
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "port": 0,
                                               "dashboard": False,
                                               "dashboard_address": "127.0.0.1:0"}}
    cluster = _nanny_cluster(SpecCluster)(scheduler=scheduler, workers=workers,
                                          silence_logs=logging.CRITICAL)
    try:
        client = Client(cluster)
    except BaseException:
        cluster.close()
        raise
    return Session(client, cluster, what, len(workers), bool(gpus))


def _nanny_cluster(spec_cluster: Any) -> Any:
    """SpecCluster that leaves a dead worker to its nanny, which starts it again.
    SpecCluster closes, for good, the nanny of a worker that is not back within
    ``distributed.deploy.lost-worker-timeout`` (15 s) of a removal, a rule for batch jobs;
    on a loaded machine two workers restarting at once can take that long, and with every
    nanny closed the sweep's points wait for a worker that never comes."""
    from distributed.deploy.cluster import Cluster

    class NannyCluster(spec_cluster):  # type: ignore[misc, valid-type]
        def _update_worker_status(self, op: str, msg: Any) -> None:
            Cluster._update_worker_status(self, op, msg)  # not SpecCluster's close

    return NannyCluster


def _local_cuda(gpus: Sequence[Gpu]) -> Session | None:
    """dask-cuda's LocalCUDACluster on these GPUs where it is installed (None otherwise)."""
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        return None
    from distributed import Client

    cluster = LocalCUDACluster(
        CUDA_VISIBLE_DEVICES=[g.index for g in gpus], threads_per_worker=1,
        memory_limit=0, dashboard_address=None, silence_logs=logging.CRITICAL,
        preload=[PRELOAD], config=dict(WORKER_CONFIG))
    try:
        client = Client(cluster)
    except BaseException:
        cluster.close()
        raise
    return Session(client, cluster, f"local CUDA cluster of {len(gpus)} GPU worker(s)",
                   len(gpus), True)


def slurm_cluster(cs: ClusterSpec) -> Any:
    """dask-jobqueue's SLURMCluster for ``cs``: each job one worker process of one thread
    on one GPU (``gres``, default ``gpu:1``; Slurm pins it in ``CUDA_VISIBLE_DEVICES``).
    No job is submitted yet."""
    from dask_jobqueue import SLURMCluster

    opts = {**SLURM_KEYS, **dict(cs.slurm)}
    kwargs = {k: opts[k] for k in ("queue", "account", "walltime", "memory", "interface")
              if opts[k] is not None}
    return SLURMCluster(
        cores=1, processes=1, python=opts["python"] or sys.executable,
        job_extra_directives=[f"--gres={opts['gres']}"],
        scheduler_options={"dashboard": False, "dashboard_address": ":0"}, **kwargs)


def _slurm(cs: ClusterSpec) -> Session:
    from distributed import Client

    cluster = slurm_cluster(cs)
    try:
        cluster.scale(jobs=cs.workers or 1)
        client = Client(cluster)
    except BaseException:
        cluster.close()
        raise
    return Session(client, cluster, f"Slurm cluster of {cs.workers or 1} job(s)", 1, True)


def _scheduler(cs: ClusterSpec) -> Session:
    from distributed import Client

    try:
        client = Client(cs.where, timeout=CONNECT_S)
    except (OSError, TimeoutError) as exc:
        raise ClusterUnavailable(f"cannot reach the Dask scheduler at {cs.where}: "
                                 f"{exc}") from None
    return Session(client, None, f"the scheduler at {cs.where}", 1, True)


def check_workers(client: Any, gpus: Mapping[str, tuple[str, str]]) -> None:
    """HarnessError (one line) unless every worker runs one thread and no two share a GPU
    (``gpus``: worker address -> (host, the GPU's UUID or PCI bus id, '' without a GPU)):
    a GPU times one point at a time."""
    for addr, threads in workers(client).items():  # asked directly, not a cache
        if threads != 1:
            raise ClusterUnavailable(
                f"worker {addr} runs {threads} threads: start each worker with "
                "--nthreads 1 (one point at a time on its GPU)")
    seen: dict[tuple[str, str], str] = {}
    for addr, (host, uuid) in gpus.items():
        if not uuid:
            continue
        if (host, uuid) in seen:
            raise ClusterUnavailable(
                f"workers {seen[(host, uuid)]} and {addr} share the GPU {uuid} on {host}: "
                "one worker per GPU (pin each with CUDA_VISIBLE_DEVICES)")
        seen[(host, uuid)] = addr
