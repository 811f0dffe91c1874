"""A real local Dask cluster of two CPU worker processes (the NumPy backend), shared by the
cluster tests, and the toy stages they run, in a $HARNESS_PLUGIN_PATH folder the workers
inherit: ``slowtoy`` sleeps in its reference (a point takes a tenth of a second or more),
``crashtoy`` kills its worker process the first time it runs batch 2, ``doomtoy`` every
time it runs batch 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from harness.cluster import bench, connect, options
from harness.contract import registry

TOYS = '''
import os
import time
from pathlib import Path

import numpy as np
from harness.api import Axis, Exact, Stage


def _died(name, p):
    """Count a death in the test's folder; True when this point must die now."""
    folder = Path(os.environ["CLUSTER_TEST_DIR"])
    if name == "crashtoy" and (p["batch"] != 2 or (folder / "crashed").exists()):
        return False
    if name == "doomtoy" and p["batch"] != 1:
        return False
    with (folder / ("crashed" if name == "crashtoy" else "doomed")).open("a") as f:
        f.write(f"{{os.getpid()}}\\n")
    return True


def _reference(i, p, v):
    if "{name}" != "slowtoy" and _died("{name}", p):
        os._exit(3)
    time.sleep(0.01 if "{name}" == "slowtoy" else 0.0)
    return {{"y": i["x"] * 2}}


STAGE = Stage(
    name="{name}", entry_points=("{name}",), families=("normal",),
    axes=(Axis("batch", 4),),
    make_inputs=lambda rng, fam, p: {{"x": rng.standard_normal(p["batch"]).astype(np.float32)}},
    outputs=lambda p: {{"y": ((p["batch"],), np.dtype(np.float32))}},
    reference=_reference, enqueue=lambda launch, b, p, v: None,
    bytes_moved=lambda p: 8 * p["batch"], flops=lambda p: p["batch"],
    tolerances={{"y": Exact("toy")}}, cases=({{"batch": 1}},),
)
'''


@pytest.fixture(scope="package")
def toys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The toy plugins' folder, on $HARNESS_PLUGIN_PATH for the driver and its workers."""
    d = tmp_path_factory.mktemp("toys")
    for name in ("slowtoy", "crashtoy", "doomtoy"):
        (d / f"{name}.py").write_text(textwrap.dedent(TOYS.format(name=name)))
        (d / f"{name}.cu").write_text(f'extern "C" __global__ void {name}(float* y) {{}}\n')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(registry.PATH_ENV, str(d))
        mp.setenv(registry.NO_EXTERNAL_ENV, "0")
        mp.setenv("CLUSTER_TEST_DIR", str(d))
        yield d


@pytest.fixture(scope="package")
def session(toys: Path) -> Iterator[connect.Session]:
    """Two local CPU worker processes, shared by the tests of this folder."""
    s = connect.open_session(options.spec("local", workers=2), backend="numpy")
    yield s
    s.close()


@pytest.fixture(scope="package")
def toy_reg(toys: Path) -> registry.Registry:
    r = registry.discover(entry_points=False)
    assert {"slowtoy", "crashtoy", "doomtoy"} <= set(r.stages), r.problems
    return r



def sweep(reg, session, stage: str, points: str, out: Path, retries: int = 2,  # type: ignore[no-untyped-def]
          **kw) -> list[dict]:  # type: ignore[type-arg]
    """The rows of a cluster sweep of ``stage`` on the shared session, drawn whole."""
    run = bench.bench(reg, [stage], cluster=options.spec("local", retries=retries),
                      sweep=[points], backend="numpy", budget=0.05, out_dir=out,
                      session=session, **kw)
    try:
        return [m.row for m in run.rows]
    finally:
        run.close()


def worker_settings() -> tuple[object, object, object]:
    """Runs in each worker: its profiler setting, its SIGINT handler, the GPUs it sees."""
    import os
    import signal

    import dask

    return (dask.config.get("distributed.worker.profile.enabled"),
            signal.getsignal(signal.SIGINT), os.environ.get("CUDA_VISIBLE_DEVICES"))


def until(done, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    """Poll ``done()`` every 0.1 s; the test fails, saying ``what``, past ``timeout``."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout} s")
        time.sleep(0.1)


def until_rows(proc, csv: Path, rows: int = 2) -> None:  # type: ignore[no-untyped-def]
    """Wait until the command running as ``proc`` has written ``rows`` rows to ``csv``
    (beside its header), still running: the moment a test stops it or its cluster."""
    until(lambda: proc.poll() is not None or
          (csv.exists() and csv.read_text().count("\n") >= rows + 1), f"no {rows} rows")
    assert proc.poll() is None, proc.communicate()


def stopped_sweep(cluster: Sequence[str], out: Path, cwd: Path,
                  stop: Callable[[subprocess.Popen[str]], None],
                  env: Mapping[str, str] | None = None) -> tuple[int, str, int]:
    """``harness bench slowtoy`` in a process of its own over 2000 points (far longer than
    a test lasts), ``cluster`` its cluster options; once two rows are written ``stop(proc)``
    (a signal to it, or the loss of its scheduler or workers): its exit status, its stderr
    and its process id (its process group's).
    A run still going a minute later is killed, and fails the test's own asserts."""
    points = ",".join(str(b) for b in range(1, 2001))
    cmd = [sys.executable, "-m", "harness", "bench", "slowtoy", *cluster, "--backend",
           "numpy", "--sweep", f"batch={points}", "--budget", "0.05", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=cwd,  # one line each:
                            env={**os.environ, "COLUMNS": "1000", **(env or {})})
    try:
        until_rows(proc, out / "slowtoy.csv")
        stop(proc)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stderr, proc.pid
