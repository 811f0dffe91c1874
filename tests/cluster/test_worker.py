"""The worker side without a cluster: its state built once per setup, a poisoned CUDA
context ending the process (so that its nanny starts a fresh one), the identity columns."""

from __future__ import annotations

import contextlib
import types

import pytest

from harness.cluster import worker
from harness.engine.jobs import Job


class _Exit(Exception):
    pass


def _state(sync) -> worker.State:  # type: ignore[no-untyped-def]
    drv = types.SimpleNamespace(Context=types.SimpleNamespace(synchronize=sync))
    runner = types.SimpleNamespace(backend="pycuda", device=types.SimpleNamespace(driver=drv))
    ident = worker.Identity("h", "0", "tcp://h:1", "GPU-1", "pycuda", "h200", "NVIDIA H200")
    return worker.State(None, runner, [], None, ident)  # type: ignore[arg-type]


def test_a_poisoned_context_ends_the_worker_process(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    codes = []

    def exit_(code: int) -> None:
        codes.append(code)
        raise _Exit

    monkeypatch.setattr(worker.os, "_exit", exit_)
    worker.check_context(_state(lambda: None))  # a healthy context: nothing happens
    assert codes == []

    def sticky() -> None:
        raise RuntimeError("cuCtxSynchronize failed: an illegal memory access was encountered")

    with pytest.raises(_Exit):
        worker.check_context(_state(sticky))
    assert codes == [worker.POISONED]
    worker.check_context(worker.State(None, types.SimpleNamespace(backend="numpy"), [], None,  # type: ignore[arg-type]
                                      _state(sticky).ident))  # no context, nothing to check


def test_the_state_is_built_once_per_setup(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(worker, "_STATES", {})
    built = []
    real = worker._build

    def build(setup: worker.Setup) -> worker.State:
        built.append(setup)
        return real(setup)

    monkeypatch.setattr(worker, "_build", build)
    one = worker.Setup("numpy", command="harness bench")
    st = worker.state(one)
    assert worker.state(one) is st and built == [one]
    assert st.runner.backend == "numpy" and st.ident.slug == "cpu" and st.ident.gpu_uuid == ""
    assert st.meta.command == "harness bench" and st.ident.calibration is None
    assert st.ident.columns() == {"host": st.ident.host, "gpu_uuid": "", "worker": st.ident.worker}
    other = worker.Setup("numpy", command="harness bench --budget 1")
    worker.state(other)
    assert len(built) == 2 and list(worker._STATES) == [other]  # one run at a time
    v = reg.stages["dynamic_spikes"].variants[0]
    job = st.job("dynamic_spikes", v, {"batch": 2, "in_f": 8})
    assert isinstance(job, Job) and job.target is st.reg.stages["dynamic_spikes"]
    with pytest.raises(Exception, match="no stage 'nope'"):
        st.job("nope", v, {})


class _Context:
    """A stand-in device whose context stack on the task thread is counted."""

    def __init__(self, info=None) -> None:  # type: ignore[no-untyped-def]
        self.info = info
        self.depth = 1  # the context is pushed when the device opens, as Device does
        self.seen: list[int] = []

    def suspend(self) -> None:
        self.depth -= 1

    @contextlib.contextmanager
    def current(self):  # type: ignore[no-untyped-def]
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


def test_a_gpu_worker_holds_its_context_only_while_a_task_runs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """PyCUDA aborts a process whose thread ends with a context on its stack; Dask ends the
    task thread when a worker closes. So the stack is empty once the state is built and
    after every task, and holds the context while a task measures."""
    from harness.engine import devices
    from harness.results.provenance import RunMeta

    ctx = _Context()
    gpu = types.SimpleNamespace(backend="pycuda", device=ctx)
    chosen = devices.Chosen(gpu, RunMeta("NVIDIA H200", "580.1", "13.0", "abc", "argv",  # type: ignore[arg-type]
                                         3800.0), "h200")
    monkeypatch.setattr(devices, "choose", lambda backend, device: chosen)
    monkeypatch.setattr(worker, "_gpu_ids", lambda runner: ("GPU-1", ""))
    monkeypatch.setattr(worker, "check_context", lambda st: ctx.seen.append(ctx.depth))
    monkeypatch.setattr(worker.bench, "run", lambda *a, **k: ctx.seen.append(ctx.depth) or [])
    monkeypatch.setattr(worker, "validate", lambda *a, **k: ctx.seen.append(ctx.depth) or [])
    monkeypatch.setattr(worker, "target_hash", lambda *a: "h")
    monkeypatch.setattr(worker, "_STATES", {})
    setup = worker.Setup("auto", calibrate=False)
    st = worker.state(setup)
    assert ctx.depth == 0  # built, and off the thread
    st.reg = types.SimpleNamespace(pipelines={}, stages={"s": object()})  # type: ignore[assignment]
    v = worker.Variant("default")
    worker.run_point(setup, None, worker.PointTask(0, "s", v, {}))  # type: ignore[arg-type]
    worker.run_validation(setup, worker.ValidationTask(1, "s", v, ("normal",), 1, 0, {}))
    assert ctx.seen == [1, 1, 1, 1] and ctx.depth == 0


def test_a_gpu_worker_calibrates_once_and_names_its_gpu(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The GPU branch with a stand-in GPU: the copy bandwidth measured once, as the peak
    of the worker's rows and as the record the driver keeps; the UUID the local cluster
    pinned it by."""
    from harness.backends.pycuda.context import DeviceInfo
    from harness.contract.timing import Timing
    from harness.engine import devices
    from harness.results.provenance import RunMeta

    info = DeviceInfo(0, "NVIDIA H200", (9, 0), 132, 60 << 20, 141 << 30, "580.1", "13.0",
                      1980, 3201, 6144)
    copies = []

    class Gpu:
        backend = "pycuda"
        device = _Context(info)

        def copy_bandwidth(self, nbytes, cfg):  # type: ignore[no-untyped-def]
            copies.append(nbytes)
            return Timing(1100.0, 1090.0, 1110.0, 0.1, 40, True), 3900.0

    chosen = devices.Chosen(Gpu(), RunMeta("NVIDIA H200", "580.1", "13.0", "abc", "argv",  # type: ignore[arg-type]
                                           3800.0), "h200")
    monkeypatch.setattr(devices, "choose", lambda backend, device: chosen)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1234-abcd")
    monkeypatch.setattr(worker, "_STATES", {})
    st = worker.state(worker.Setup("auto", command="harness bench --cluster local"))
    assert worker.state(worker.Setup("auto", command="harness bench --cluster local")) is st
    assert copies == [2 << 30]  # once, 2 GiB each way as harness calibrate copies
    assert st.meta.peak_gbps == 3900.0 and st.meta.command == "harness bench --cluster local"
    rec = st.ident.calibration
    assert rec is not None and rec["gbps"] == 3900.0 and rec["gpu_uuid"] == "GPU-1234-abcd"
    assert rec["device"]["name"] == "NVIDIA H200" and rec["median_us"] == 1100.0
    assert rec["kind"] == "copy" and rec["bytes_each_way"] == 2 << 30  # harness calibrate's
    assert rec["method"].startswith("memcpy_dtod_async") and \
        rec["method"].endswith("measured by the cluster worker before its first point")
    assert (st.ident.gpu_uuid, st.ident.slug, st.ident.gpu, st.ident.device) == \
        ("GPU-1234-abcd", "h200", "NVIDIA H200", info)
    cold = worker._build(worker.Setup("auto", calibrate=False))  # validation: no copy
    assert copies == [2 << 30] and cold.ident.calibration is None
    assert cold.meta.peak_gbps == 3800.0  # the stored calibration, as a plain run has it


def test_each_runs_state_takes_its_own_external_plugins_choice(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A worker that outlives a run (on a scheduler of its own): a --no-external-plugins
    run's choice does not stay for the next run, which allows them."""
    from harness.contract import registry

    monkeypatch.setattr(worker, "_STATES", {})
    monkeypatch.delenv(registry.NO_EXTERNAL_ENV, raising=False)
    worker.state(worker.Setup("numpy", no_external=True))
    assert not registry.external_allowed()
    worker.state(worker.Setup("numpy", no_external=False))
    assert registry.external_allowed()


def test_a_worker_times_the_peers_of_every_build_on_the_declared_variant(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A --cluster task is one build, which times its peers itself (a point's builds may
    run on different workers, and a speedup is only ever against peers its process
    timed); the peers run the declared variant, as in a plain sweep."""
    from harness.engine.jobs import plan
    from tests.engine.test_bench import _Told
    from tests.engine.test_measure import FAST, META, FakeGpu

    peer = _Told("torch", 300.0)
    ident = worker.Identity("h", "0", "tcp://h:1", "", "pycuda", "h200", "NVIDIA H200")
    st = worker.State(reg, FakeGpu(), [peer], META, ident)  # type: ignore[arg-type]
    monkeypatch.setattr(worker, "state", lambda setup: st)
    monkeypatch.setattr(worker, "check_context", lambda st: None)
    job = plan([reg.stages["dynamic_spikes"]], ["batch=2", "in_f=64"],
               define_specs=["BLOCK=64,128"])[1]
    assert not job.times_peers  # a plain sweep's second build; the worker's times them
    done = worker.run_point(worker.Setup("auto"), FAST,
                            worker.PointTask(0, "dynamic_spikes", job.variant, job.point))
    assert [(r["backend"], r["variant"], r["status"]) for r in done.rows] == [
        ("torch", "default", "ok"), ("pycuda", "default[BLOCK=128]", "ok")]
    assert peer.told == ["default"] and done.rows[1]["speedup_vs_best_peer"] == 3.0
