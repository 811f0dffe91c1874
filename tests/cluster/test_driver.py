"""The driver's retries on the shared local cluster: a point whose worker is killed is
handed out again and measured, and past ``--retries`` it is a failed row saying why; the
nanny puts a fresh worker, with the same settings, in the dead one's place."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from harness.results.rows import read_rows
from tests.cluster.conftest import sweep, until, worker_settings


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


def test_a_greeting_still_held_does_not_stand_in_for_the_next(session) -> None:  # type: ignore[no-untyped-def]
    """An earlier greeting's future can outlive its run (a failed greeting's sits in a
    cycle with its error's traceback until the garbage collector comes: the CI hang after
    the unknown-peer test). Dask answers a key it still holds with the task it has, pinned
    to its worker: had this run's greetings the last run's keys, the one of a worker that
    died since would wait for it until the scheduler's backstop (240 s; 10 s here)."""
    from harness.cluster import driver
    from harness.cluster.worker import Setup

    client, scheduler = session.client, session.cluster.scheduler
    submit, held = client.submit, []

    def holding(*a, **k):  # type: ignore[no-untyped-def]
        held.append(submit(*a, **k))
        return held[-1]

    client.submit = holding
    try:
        first = driver.greet(client, Setup("numpy"))
    finally:
        del client.submit
    victim = list(first)[-1]
    with contextlib.suppress(Exception):  # it dies answering; its nanny starts another
        client.run(os._exit, 3, workers=[victim])
    until(lambda: victim not in (now := driver.workers(client)) and len(now) == 2,
          "no replacement for the killed worker")
    client.wait_for_workers(2, timeout=60)
    backstop = scheduler.no_workers_timeout
    scheduler.no_workers_timeout = 10
    try:
        again = driver.greet(client, Setup("numpy"))
    finally:
        scheduler.no_workers_timeout = backstop
        held.clear()
    assert victim not in again and set(again) == set(driver.workers(client))


def test_no_two_runs_share_a_task_key(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every greeting and every hand-out keys its tasks anew: Dask's client answers a key it
    still holds with that future, and its scheduler keeps a known task's worker
    restrictions, so a key shared with an earlier run could get that run's task."""
    import collections

    import distributed

    from harness.cluster import driver
    from harness.cluster.worker import Identity, Setup

    here = Identity("h", "0", "tcp://a:1", "", "numpy", "cpu", "cpu")
    keys: list[str] = []

    class Greeted(_Client):
        def submit(self, *a, **k) -> _Future:  # type: ignore[no-untyped-def]
            keys.append(k["key"])
            return _Future(value=here)

    class Points(_HandOutClient):
        def submit(self, fn, *a, key: str, pure: bool) -> _Landed:  # type: ignore[no-untyped-def]
            keys.append(key)
            return super().submit(fn, *a, key=key, pure=pure)

    monkeypatch.setattr(distributed, "as_completed", _AsCompleted)
    Task = collections.namedtuple("Task", "index")
    points = Points(99, lambda i: i)
    for _ in range(2):
        driver.greet(Greeted({"tcp://a:1": 1}), Setup("numpy"))
        list(driver.hand_out(points, lambda *a: None, (), [Task(0), Task(1)], 0, lambda: 2))
    assert len(keys) == 6 and len(set(keys)) == 6, keys



class _Future:
    def __init__(self, exc: BaseException | None = None, value: object = None) -> None:
        self.exc, self.value = exc, value

    def done(self) -> bool:
        return True

    def result(self) -> object:
        if self.exc is not None:
            raise self.exc
        return self.value


class _Client:
    """Enough of a Dask client: workers by address with their thread counts, and hello
    tasks whose futures raise ``exc``."""

    def __init__(self, threads: dict[str, int], exc: BaseException | None = None) -> None:
        self.threads, self.exc, self.cancelled = threads, exc, 0

    def nthreads(self) -> dict[str, int]:
        return dict(self.threads)

    def submit(self, *a, **k) -> _Future:  # type: ignore[no-untyped-def]
        return _Future(self.exc)

    def cancel(self, futures, force: bool = False) -> None:  # type: ignore[no-untyped-def]
        self.cancelled += len(futures)


def test_a_worker_that_dies_while_it_starts_is_one_line() -> None:
    """Dask's KilledWorker (or any error but the worker's own one line) from the greeting
    is ClusterUnavailable, not a traceback; the other greetings are cancelled."""
    from harness.cluster import driver
    from harness.cluster.options import ClusterUnavailable
    from harness.cluster.worker import Setup
    from harness.errors import GpuUnavailable

    client = _Client({"tcp://a:1": 1, "tcp://b:1": 1}, RuntimeError("KilledWorker: hello-0"))
    with pytest.raises(ClusterUnavailable, match=r"a worker failed while it started "
                                                 r"\(RuntimeError: KilledWorker"):
        driver.greet(client, Setup("numpy"))
    assert client.cancelled == 2
    own = _Client({"tcp://a:1": 1}, GpuUnavailable("no CUDA device is visible"))
    with pytest.raises(GpuUnavailable, match="no CUDA device"):  # said as the worker said it
        driver.greet(own, Setup("numpy"))


def test_a_worker_met_late_is_checked_as_those_at_the_start() -> None:
    """A worker first met in a point's result (joined later, or a dead one's replacement)
    must keep the rules: one thread, and no live worker on its GPU; a dead worker's GPU is
    its replacement's."""
    from harness.cluster import driver
    from harness.cluster.options import ClusterUnavailable
    from harness.cluster.worker import Identity

    def ident(addr: str, uuid: str) -> Identity:
        return Identity("h", addr[-1], addr, uuid, "pycuda", "h200", "NVIDIA H200")

    first = ident("tcp://h:1", "GPU-a")
    idents = {first.address: first}
    # the first worker died; its replacement on the same GPU is fine
    driver.check_joined(_Client({"tcp://h:2": 1}), idents, ident("tcp://h:2", "GPU-a"))
    assert set(idents) == {"tcp://h:1", "tcp://h:2"}
    with pytest.raises(ClusterUnavailable, match="share the GPU GPU-a"):
        driver.check_joined(_Client({"tcp://h:2": 1, "tcp://h:3": 1}), idents,
                            ident("tcp://h:3", "GPU-a"))
    with pytest.raises(ClusterUnavailable, match="runs 2 threads"):
        driver.check_joined(_Client({"tcp://h:2": 1, "tcp://h:4": 2}), idents,
                            ident("tcp://h:4", "GPU-b"))


def test_the_hand_out_window_follows_the_workers_there_are_now() -> None:
    """Two points a worker the scheduler has at the time asked (workers that join later
    get points too); one worker's two while none is there."""
    from harness.cluster import driver

    client = _Client({"tcp://a:1": 1})
    size = driver.per_worker(client)
    assert size() == 2
    client.threads.update({"tcp://b:1": 1, "tcp://c:1": 1, "tcp://d:1": 1})
    assert size() == 8
    client.threads.clear()
    assert size() == 2


class _Never:
    """A task that never lands (its worker left before it ran it)."""

    def done(self) -> bool:
        return False

    def result(self) -> object:
        raise AssertionError("the run waited on a task that never lands")


def test_a_wait_without_workers_ends_past_its_limit(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A wait with no worker on the cluster ends in one line once the limit has passed;
    with a worker there time never counts (a long point is waited for); a scheduler that
    no longer answers (Dask's client, closed, raises an AttributeError of its own) is one
    line at once."""
    from harness.cluster import connect, driver
    from harness.cluster.options import ClusterUnavailable

    monkeypatch.setattr(driver, "LOOK_S", 0.02)
    start = time.monotonic()
    with pytest.raises(ClusterUnavailable, match=r"^nobody$"):
        driver.Patience(_Client({}), 0.2).until(lambda: False, bool, "nobody")
    assert 0.2 <= time.monotonic() - start < 10
    polls = iter(range(1000))
    driver.Patience(_Client({"tcp://a:1": 1}), 0.01).until(lambda: next(polls) == 30, bool,
                                                            "nobody")  # 0.6 s, no error

    class Gone(_Client):
        def nthreads(self) -> dict[str, int]:
            raise AttributeError("'NoneType' object has no attribute 'ncores'")

    with pytest.raises(ClusterUnavailable, match=r"^lost the Dask scheduler"):
        driver.Patience(Gone({}), 60).until(lambda: False, bool, "nobody")
    with pytest.raises(ClusterUnavailable, match=r"^lost the Dask scheduler"):
        driver.per_worker(Gone({}))()
    assert connect.LOST.endswith("the run stops here; what it wrote so far is kept")


def test_a_worker_that_leaves_before_its_greeting_ends_the_wait(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A greeting is pinned to its worker: one whose worker left would wait for it forever.
    Past the limit the run stops in one line, its greetings cancelled; a cluster whose
    workers all left before the greeting is one line at once."""
    from harness.cluster import driver
    from harness.cluster.options import ClusterUnavailable
    from harness.cluster.worker import Identity, Setup

    monkeypatch.setattr(driver, "LOOK_S", 0.02)
    here = Identity("h", "0", "tcp://a:1", "", "numpy", "cpu", "cpu")

    class Leaving(_Client):
        def nthreads(self) -> dict[str, int]:  # both at the greeting, then b is gone
            now = dict(self.threads)
            self.threads.pop("tcp://b:1", None)
            return now

        def submit(self, *a, **k) -> object:  # type: ignore[no-untyped-def]
            return _Future(value=here) if k["workers"] == ["tcp://a:1"] else _Never()

    client = Leaving({"tcp://a:1": 1, "tcp://b:1": 1})
    with pytest.raises(ClusterUnavailable, match=r"^worker tcp://b:1 left before it was ready "
                                                 r"and is not back after 0.2 s"):
        driver.greet(client, Setup("numpy"), 0.2)
    assert client.cancelled == 2
    with pytest.raises(ClusterUnavailable, match="workers left before the run began"):
        driver.greet(_Client({}), Setup("numpy"))


class _Landed:
    """A landed future: its key, its result (or the error it raises), let go of."""

    def __init__(self, key: str, value: object = None, exc: BaseException | None = None):
        self.key, self.value, self.exc = key, value, exc

    def result(self) -> object:
        if self.exc is not None:
            raise self.exc
        return self.value

    def release(self) -> None:
        pass


class _AsCompleted:
    """distributed.as_completed over futures that have all landed, in the order added."""

    def __init__(self) -> None:
        import collections

        self.q: collections.deque[_Landed] = collections.deque()

    def add(self, f: _Landed) -> None:
        self.q.append(f)

    def has_ready(self) -> bool:
        return bool(self.q)

    def is_empty(self) -> bool:
        return not self.q

    def __next__(self) -> _Landed:
        if not self.q:
            raise StopIteration
        return self.q.popleft()


class _HandOutClient:
    """A client whose scheduler answers ``answers`` questions about its workers, then is
    lost; its tasks land at once with ``result(task index)``."""

    def __init__(self, answers: int, result) -> None:  # type: ignore[no-untyped-def]
        self.answers, self.result, self.submitted = answers, result, 0

    def nthreads(self) -> dict[str, int]:
        self.answers -= 1
        if self.answers < 0:
            raise OSError("scheduler gone")
        return {"tcp://a:1": 1}

    def submit(self, fn, *a, key: str, pure: bool) -> _Landed:  # type: ignore[no-untyped-def]
        self.submitted += 1
        index = a[-1].index
        try:
            return _Landed(key, self.result(index))
        except Exception as exc:  # the task's error, raised when its result is asked for
            return _Landed(key, exc=exc)

    def cancel(self, futures, force: bool = False) -> None:  # type: ignore[no-untyped-def]
        pass


def test_a_result_that_landed_is_handed_on_when_the_scheduler_is_lost(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scheduler lost while the run tops its tasks up after a result landed: that
    result is still yielded (its rows written), then the run stops in one line."""
    import collections

    import distributed

    from harness.cluster import driver
    from harness.cluster.connect import LOST
    from harness.cluster.options import ClusterUnavailable

    monkeypatch.setattr(distributed, "as_completed", _AsCompleted)
    Task = collections.namedtuple("Task", "index")
    client = _HandOutClient(1, lambda i: f"done {i}")
    got = []
    with pytest.raises(ClusterUnavailable) as lost:
        for out in driver.hand_out(client, lambda *a: None, (), [Task(i) for i in range(5)],
                                   0, driver.per_worker(client)):
            got.append(out.done)
    assert got == ["done 0"] and str(lost.value) == LOST


def test_an_error_after_a_death_names_no_worker(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A point that died on one worker and then raised on another: its outcome names no
    worker (the one that raised is not known), not the one it died on."""
    import collections

    import distributed

    from harness.cluster import driver

    monkeypatch.setattr(distributed, "as_completed", _AsCompleted)
    Task = collections.namedtuple("Task", "index")
    calls = collections.Counter()

    def result(i: int) -> str:
        calls[i] += 1
        if calls[i] == 1:
            raise distributed.KilledWorker("task", _Dead(), 0)
        raise ValueError("a wrong answer")

    client = _HandOutClient(99, result)
    (out,) = driver.hand_out(client, lambda *a: None, (), [Task(0)], 1,
                             driver.per_worker(client))
    assert out.done is None and out.attempts == 2 and "ValueError" in out.error
    assert out.died_on == ""


class _Dead:
    address = "tcp://dead:1"


def test_a_result_that_cannot_be_fetched_is_no_failed_row(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A finished task whose result the client cannot fetch (the scheduler out of reach)
    is not the task's error: no failed row, the run's one line."""
    import collections

    import distributed

    from harness.cluster import driver
    from harness.cluster.connect import LOST
    from harness.cluster.options import ClusterUnavailable

    class Unfetched(_Landed):
        status = "finished"

    class Client(_HandOutClient):
        def submit(self, fn, *a, key: str, pure: bool) -> _Landed:  # type: ignore[no-untyped-def]
            return Unfetched(key, exc=OSError("Timed out trying to connect"))

    monkeypatch.setattr(distributed, "as_completed", _AsCompleted)
    Task = collections.namedtuple("Task", "index")
    client = Client(99, None)
    with pytest.raises(ClusterUnavailable) as lost:
        list(driver.hand_out(client, lambda *a: None, (), [Task(0)], 0,
                             driver.per_worker(client)))
    assert str(lost.value) == LOST


def test_a_closed_client_is_the_lost_scheduler(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Topping up on a client that closed itself (it gave up on its scheduler): the result
    that landed is handed on, then the run's one line, not Dask's ClosedClientError."""
    import collections

    import distributed
    from distributed.client import ClosedClientError

    from harness.cluster import driver
    from harness.cluster.connect import LOST
    from harness.cluster.options import ClusterUnavailable

    class Client(_HandOutClient):
        def submit(self, fn, *a, key: str, pure: bool) -> _Landed:  # type: ignore[no-untyped-def]
            if self.submitted:
                raise ClosedClientError("the client was closed")
            return super().submit(fn, *a, key=key, pure=pure)

    monkeypatch.setattr(distributed, "as_completed", _AsCompleted)
    Task = collections.namedtuple("Task", "index")
    client = Client(99, lambda i: f"done {i}")
    got = []
    with pytest.raises(ClusterUnavailable) as lost:
        for out in driver.hand_out(client, lambda *a: None, (), [Task(0), Task(1)], 0,
                                   lambda: 1):
            got.append(out.done)
    assert got == ["done 0"] and str(lost.value) == LOST
