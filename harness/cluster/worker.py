"""What runs inside a worker process: its backend, built once, and the one-point tasks.

The first task a worker process runs builds its state (:class:`State`): the plugins found,
the backend opened (on a GPU worker its one CUDA context, through ``engine.devices``, on
the one thread the worker runs tasks on), the peers, and the device's copy bandwidth
measured once (the peak its rows' ``% of peak`` refers to). Every later task reuses it.
A task takes one point and returns its rows (the peers' and ours, made by the engine's own
per-point code, :func:`harness.engine.bench.run`) or one validation unit's cases; a worker
never writes a file: the driver writes what it returns.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.contract import registry
from harness.contract.backend import Backend
from harness.contract.stage import Variant
from harness.contract.timing import TimingConfig
from harness.engine import bench, calibrate, devices
from harness.engine.jobs import Job
from harness.engine.measure import BenchConfig
from harness.engine.validate import CaseResult, target_hash, validate
from harness.errors import HarnessError
from harness.results.provenance import RunMeta


@dataclass(frozen=True)
class Setup:
    """What every worker of a run builds its state from (the same for all its tasks)."""

    #: ``auto``, ``pycuda`` or ``numpy`` (``--backend``).
    backend: str = "auto"
    #: ``--peers``: none, all, or names.
    peers: str = "none"
    #: The named peers of the run's stages (``engine.devices.named_peers``).
    named: tuple[str, ...] = ()
    #: The driver's command line: the ``command`` column of every row.
    command: str = ""
    #: Import only the built-in plugins (the driver's ``--no-external-plugins``).
    no_external: bool = False
    #: Measure the GPU's copy bandwidth once when the worker starts.
    calibrate: bool = True


@dataclass(frozen=True)
class Identity:
    """Where a worker runs: the columns its rows get, and its GPU's calibration."""

    host: str
    worker: str
    #: The worker's address (the scheduler's name for it).
    address: str
    gpu_uuid: str
    #: The backend's name (``pycuda``, ``numpy``) and the GPU's folder name under
    #: statistics/ (``cpu`` for the NumPy references).
    backend: str
    slug: str
    gpu: str
    #: Why the GPU is not used ('' when it is).
    note: str = ""
    #: The copy-bandwidth record measured on this worker's GPU (None without one).
    calibration: dict[str, Any] | None = None
    #: The peers it times beside its backend (their backend names).
    peers: tuple[str, ...] = ()
    #: The GPU's ``DeviceInfo`` (what a ledger row records; None without a GPU).
    device: Any = None
    #: The GPU's PCI bus id: it tells two GPUs apart where the UUID is unknown.
    pci_bus: str = ""

    def columns(self) -> dict[str, str]:
        """The columns a cluster row adds: where it was measured."""
        return {"host": self.host, "gpu_uuid": self.gpu_uuid, "worker": self.worker}


@dataclass
class State:
    """A worker's run state, built by its first task."""

    reg: registry.Registry
    runner: Backend
    peers: list[Backend]
    meta: RunMeta
    ident: Identity
    #: The thread it was built on: the one thread of a worker, the one its tasks run on
    #: (one point at a time on its GPU).
    thread: int = field(default_factory=threading.get_ident)

    def job(self, target: str, variant: Variant, point: Mapping[str, Any]) -> Job:
        """The driver's job, rebuilt from the plugins found here."""
        t = self.reg.pipelines.get(target) or self.reg.stages.get(target)
        if t is None:
            raise HarnessError(f"worker {self.ident.worker} on {self.ident.host} has no "
                               f"stage {target!r}: its plugins differ from the driver's")
        return Job(t, variant, dict(point))


#: The state of this process, for the run it serves (one at a time).
_STATES: dict[Setup, State] = {}
#: Held while a state is looked up or built: two tasks that start together on a worker of
#: several threads (refused, but possibly after a task has started) build one state, not
#: two contexts timing at once.
_BUILDING = threading.Lock()


def state(setup: Setup) -> State:
    """This worker process's state for ``setup``, built by the first call (a worker that
    outlives a run, on a scheduler of its own, lets the last run's state go)."""
    with _BUILDING:
        st = _STATES.get(setup)
        if st is None:
            _STATES.clear()
            st = _STATES[setup] = _build(setup)
    if st.thread != threading.get_ident():
        raise HarnessError("a worker task ran on another thread than the worker's first: "
                           "start workers with one thread (one point at a time on a GPU)")
    return st


def _build(setup: Setup) -> State:
    # Set or cleared for each run's state: a worker that outlives a run (on a scheduler of
    # its own) takes the next run's choice, not the last one's.
    if setup.no_external:
        os.environ[registry.NO_EXTERNAL_ENV] = "1"
    else:
        os.environ.pop(registry.NO_EXTERNAL_ENV, None)
    reg = registry.discover()
    chosen = devices.choose(setup.backend, 0)  # the one GPU this worker sees
    peers = devices.peers(chosen, setup.peers, setup.named)
    meta = dataclasses.replace(chosen.meta, command=setup.command)
    record = None
    uuid = bus = ""
    try:
        if chosen.on_gpu:
            uuid, bus = _gpu_ids(chosen.runner)
            if setup.calibrate:
                record = _calibrate(chosen.runner, uuid)
                meta = dataclasses.replace(meta, peak_gbps=record["gbps"])
    finally:  # off the thread between tasks (see _current), a failed build's too
        if chosen.on_gpu:
            chosen.runner.device.suspend()  # type: ignore[attr-defined]
    ident = Identity(socket.gethostname(), *_worker(), uuid, chosen.runner.backend,
                     chosen.slug, meta.gpu, chosen.note, record,
                     tuple(p.backend for p in peers),
                     chosen.runner.device.info if chosen.on_gpu else None,  # type: ignore[attr-defined]
                     bus)
    return State(reg, chosen.runner, peers, meta, ident)


@contextlib.contextmanager
def _current(st: State) -> Iterator[None]:
    """The worker's CUDA context current on this thread for one task, and off its stack
    again after it: Dask ends the task thread when the worker closes, and PyCUDA aborts a
    process whose thread ends with a context on its stack (a worker's last words were its
    abort message). The NumPy references have no context."""
    device = getattr(st.runner, "device", None)
    if device is None:
        yield
        return
    with device.current():
        yield


def _worker() -> tuple[str, str]:
    """This worker's name and address (a plain process outside Dask: its pid)."""
    try:
        from distributed import get_worker

        w = get_worker()
        return str(w.name), str(w.address)
    except (ImportError, ValueError):
        return str(os.getpid()), ""


def _gpu_ids(runner: Any) -> tuple[str, str]:
    """The UUID and PCI bus id of the GPU this worker's context is on ('' where unknown):
    the UUID from ``CUDA_VISIBLE_DEVICES`` where a local cluster pinned it by UUID, else
    from nvidia-smi by the device's PCI bus."""
    try:
        bus = str(runner.device.driver.Context.get_device().pci_bus_id())
    except Exception:  # a stand-in runner, or a driver without it
        bus = ""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if first.startswith(("GPU-", "MIG-")):
        return first, bus
    from harness.backends.pycuda.context import smi_query

    uuid = smi_query(bus, "uuid") if bus else ""  # type: ignore[arg-type]  # --id takes a bus
    return uuid, bus


def _calibrate(runner: Any, uuid: str) -> dict[str, Any]:
    """The GPU's copy bandwidth, measured as ``harness calibrate`` measures it, as a
    record for the driver to write."""
    t, gbps = runner.copy_bandwidth(calibrate.COPY_BYTES, TimingConfig(budget_s=3.0))
    return calibrate.record(runner.device.info, "copy", calibrate.COPY_BYTES, t, gbps,
                            gpu_uuid=uuid, host=socket.gethostname(),
                            note="measured by the cluster worker before its first point")


def hello(setup: Setup) -> Identity:
    """Build this worker's state (a task pinned to each worker before the sweep) and say
    where it runs."""
    return state(setup).ident


@dataclass(frozen=True)
class PointTask:
    """One point of a sweep: the driver's job by its parts, and its place in the plan."""

    index: int
    target: str
    variant: Variant
    point: dict[str, Any]


@dataclass(frozen=True)
class Done:
    """What a worker sends back: the rows (or cases) it made, and where it ran."""

    ident: Identity
    rows: list[dict[str, Any]] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    #: A validation unit's hash as this worker built it (its own plugins and kernels): what
    #: the driver's ledger row may name only where the driver's source hashes the same.
    kernel_hash: str = ""


class _Rows(bench.Outputs):
    """The engine's sweep loop writes into this: nothing, the rows go back to the driver."""

    def __init__(self) -> None:  # no files: a worker never writes one
        self.writers = {}

    def write(self, job: Job, row: dict[str, Any]) -> None:
        """Nothing: the row is yielded by the loop, and returned."""

    def close(self) -> None:
        """Nothing to close."""


#: The exit status of a worker whose CUDA context is poisoned.
POISONED = 70


def check_context(st: State) -> None:
    """End this process when its CUDA context is poisoned: after an error such as an
    illegal address every later CUDA call fails, so its next points would all be failed
    rows. The nanny starts a fresh worker on the same GPU, and the driver hands the point
    out again (the point that hit the error already has its failed row)."""
    drv = getattr(getattr(st.runner, "device", None), "driver", None)
    if drv is None:  # the NumPy references: no context
        return
    try:
        drv.Context.synchronize()
    except Exception:
        os._exit(POISONED)


def run_point(setup: Setup, cfg: BenchConfig, task: PointTask) -> Done:
    """Measure one point on this worker (on the peers first, then ours, with the speedup),
    the rows made as a plain sweep makes them."""
    st = state(setup)
    with _current(st):
        check_context(st)
        job = st.job(task.target, task.variant, task.point)
        # a lost context is the nanny's to mend (check_context): the point's rows go back
        got = bench.run([job], st.runner, cfg, st.meta, _Rows(), peers=st.peers,
                        stages=st.reg.stages, stop_when_lost=False)
        return Done(st.ident, [m.row for m in got])


@dataclass(frozen=True)
class ValidationTask:
    """One target variant's validation cases, as ``harness validate`` runs them."""

    index: int
    target: str
    variant: Variant
    families: tuple[str, ...]
    seeds: int
    seed: int
    overrides: dict[str, Any]


def run_validation(setup: Setup, task: ValidationTask) -> Done:
    """Every validation case of one target variant on this worker's backend."""
    st = state(setup)
    with _current(st):
        check_context(st)
        job = st.job(task.target, task.variant, {})
        cases = list(validate(job.target, task.variant, st.runner, task.families, task.seeds,
                              task.seed, task.overrides, st.reg.stages))
        return Done(st.ident, cases=cases,
                    kernel_hash=target_hash(job.target, task.variant, st.reg.stages))
