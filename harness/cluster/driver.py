"""The driver's loop: tasks handed out to the workers with back-pressure, results taken as
they come, a task whose worker died handed out again a bounded number of times.

At most ``window`` tasks are out at once (twice the workers the scheduler has, asked again
each time: one running on each, one ready behind it), so the driver never queues a whole
sweep on the scheduler and an interrupted run has little to cancel. A task whose worker died
while running it (a crashed process, a lost node: Dask's ``KilledWorker``) is handed out
again, up to ``retries`` more times; then it is an outcome with the reason and no result.
Any other error a task raises is its outcome at once (a worker's own problem, not a death).
When the loop is left, by the end, an error or Ctrl-C, every task still out is cancelled.

No wait here is without a limit (:class:`Patience`): while nothing lands the driver asks
the scheduler for its workers about once a second, and once the cluster has had no worker
for the run's wait (``ClusterSpec.limit_s``: every worker lost, a Slurm job past its
walltime) the run stops in one line, ClusterUnavailable; so does a run whose scheduler no
longer answers (``connect.LOST``). A point that merely runs long is waited for: time with a
worker there never counts.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.cluster.connect import LOST, check_workers, workers
from harness.cluster.options import WAIT_ENV, WORKERS_S, ClusterUnavailable
from harness.cluster.worker import Done, Identity, hello
from harness.errors import HarnessError


@dataclass(frozen=True)
class Outcome:
    """What became of one task: its result, or why it has none."""

    task: Any
    done: Done | None
    #: Why the task has no result ('' when it has one).
    error: str = ""
    #: Times it was handed out.
    attempts: int = 1
    #: Address of the last worker that died running it ('' when none did; also when a
    #: later attempt raised an error: the worker that raised it is not known).
    died_on: str = ""


#: Seconds between two looks at what has landed while nothing has, and between two
#: questions to the scheduler about its workers meanwhile.
POLL_S = 0.02
LOOK_S = 1.0


def _run_token() -> str:
    """A token of one greeting or one hand-out, in each of its task keys, so that no two
    runs on a client share a key. Dask answers a key it already holds with the task it has
    (the client's ``submit`` returns that future; the scheduler keeps that task, with the
    worker it was pinned to): a future of an earlier run still alive (a failed greeting's
    sits in a reference cycle with its error's traceback until the garbage collector
    comes) would stand in for this run's task, and one pinned to a worker that has since
    died waits for it until the scheduler's own limit (``connect.BACKSTOP``)."""
    return uuid.uuid4().hex[:12]


class Patience:
    """A wait on the cluster with a limit on the time it goes without what it needs.

    :meth:`until` returns once ``ready()``; meanwhile, about every LOOK_S, the scheduler is
    asked for its workers, and once ``needs(workers)`` has been false for ``limit_s`` in a
    row the wait ends in ClusterUnavailable (``why``, one line). Time with what it needs
    never counts, however long a point takes; the count carries over from one wait to the
    next (a run left without workers does not get ``limit_s`` anew for each point it
    hands out). A scheduler that does not answer is ClusterUnavailable at once
    (``connect.LOST``)."""

    def __init__(self, client: Any, limit_s: float) -> None:
        self.client = client
        self.limit_s = limit_s
        #: Since when ``needs`` has been false (None: it held at the last look).
        self.since: float | None = None
        self.looked = -LOOK_S

    def until(self, ready: Callable[[], bool], needs: Callable[[Mapping[str, int]], bool],
              why: str) -> None:
        """Wait (polling every POLL_S: Dask's own as_completed polls too) until
        ``ready()``, within the limit on going without ``needs``."""
        while not ready():
            now = time.monotonic()
            if now - self.looked >= LOOK_S:
                self.looked = now
                if needs(workers(self.client)):
                    self.since = None
                elif self.since is None:
                    self.since = now
                elif now - self.since >= self.limit_s:
                    raise ClusterUnavailable(why)
            time.sleep(POLL_S)


def _no_worker(limit_s: float) -> str:
    """The one line of a run whose cluster has had no worker for its wait."""
    return (f"the cluster has had no worker for {limit_s:g} s (every worker lost, or none "
            f"joined): the run stops here; what it wrote so far is kept ({WAIT_ENV}=SECONDS "
            "waits longer)")


def _landed(finished: Any, patience: Patience) -> Iterator[Any]:
    """The futures of ``finished`` (an as_completed) as they land, until none is left out;
    while none has landed, within the run's limit on having no worker."""
    why = _no_worker(patience.limit_s)
    while True:
        patience.until(lambda: finished.has_ready() or finished.is_empty(), bool, why)
        try:
            yield next(finished)
        except StopIteration:
            return


def hand_out(client: Any, fn: Callable[..., Done], args: tuple[Any, ...],
             tasks: Sequence[Any], retries: int, window: Callable[[], int],
             wait_s: float = WORKERS_S) -> Iterator[Outcome]:
    """Run ``fn(*args, task)`` for every task (each has an ``index``) on the cluster and
    yield each outcome as it lands (in the order they finish). ``window()``: how many tasks
    may be out at once, asked each time the run tops them up (:func:`per_worker`: two a
    live worker, so that workers that join later get points too). ``wait_s``: how long the
    run waits while the cluster has no worker (:class:`Patience`) before it stops,
    ClusterUnavailable; so does a lost scheduler (its tasks cancelled, or no answer)."""
    from distributed import KilledWorker, as_completed
    from distributed.client import ClosedClientError

    queue = deque(tasks)
    run = _run_token()
    attempts: Counter[int] = Counter()
    died: dict[int, str] = {}
    live: dict[str, tuple[Any, Any]] = {}
    finished = as_completed()
    patience = Patience(client, wait_s)

    def submit(task: Any) -> None:
        attempts[task.index] += 1
        try:
            f = client.submit(fn, *args, task, pure=False,
                              key=f"{fn.__name__}-{run}-{task.index}-{attempts[task.index]}")
        except ClosedClientError:  # the client gave up on a lost scheduler
            raise ClusterUnavailable(LOST) from None
        live[f.key] = (f, task)
        finished.add(f)

    def fill() -> None:
        """Tasks handed out up to the window (asked once a fill, and only while any wait)."""
        top = max(1, window()) if queue else 0
        while queue and len(live) < top:
            submit(queue.popleft())

    try:
        fill()
        for f in _landed(finished, patience):
            _, task = live.pop(f.key)
            n = attempts[task.index]
            try:
                out = Outcome(task, f.result(), attempts=n, died_on=died.get(task.index, ""))
            except KilledWorker as exc:
                died[task.index] = str(getattr(exc.last_worker, "address", "") or "")
                if n <= retries:
                    submit(task)
                    continue
                out = Outcome(task, None, f"the worker running it died {n} time(s) (a "
                              "crashed process or a lost node); not handed out again",
                              n, died[task.index])
            except concurrent.futures.CancelledError:  # what a lost scheduler does to them
                raise ClusterUnavailable(LOST) from None
            except Exception as exc:
                if getattr(f, "status", "error") != "error":  # not the task's own error: its
                    raise ClusterUnavailable(LOST) from None  # result could not be fetched
                # Raised on a worker the future does not name (not the one it may have died
                # on before), so no worker is named.
                out = Outcome(task, None, f"{type(exc).__name__}: {exc}", n)
            finally:
                f.release()
            lost: ClusterUnavailable | None = None
            try:  # topped up before the outcome is handed on, so the workers stay busy...
                fill()
            except ClusterUnavailable as exc:  # ...but a lost scheduler loses no result
                lost = exc
            yield out
            if lost is not None:
                raise lost
    finally:
        if live:
            _cancel(client, [f for f, _ in live.values()])


def _cancel(client: Any, futures: Sequence[Any]) -> None:
    """Cancel the tasks still out. A lost scheduler's client may fail at it too: the error
    that ended the wait is the one said."""
    with contextlib.suppress(Exception):
        client.cancel(list(futures), force=True)


def per_worker(client: Any, each: int = 2) -> Callable[[], int]:
    """A hand-out window of ``each`` tasks a worker the scheduler has now (at least one
    worker's): one running and one ready on each, as the cluster grows or shrinks."""
    def size() -> int:
        return each * max(1, len(workers(client)))
    return size


def greet(client: Any, setup: Any, wait_s: float = WORKERS_S) -> dict[str, Identity]:
    """Build every worker's state now (a task pinned to each: its backend opened, its GPU
    calibrated) and check that the cluster times honestly (:func:`check_workers`); the
    workers by address. A worker's error (no GPU where pycuda is asked for, an unknown
    peer) is raised here, as it is, before any point is handed out. A worker that leaves
    before its greeting ran (its task, pinned to it, would wait for it forever) and is not
    back within ``wait_s`` is ClusterUnavailable, as no worker at all is."""
    addresses = list(workers(client))
    if not addresses:  # those waited for left before they were greeted
        raise ClusterUnavailable("the cluster's workers left before the run began (every "
                                 "worker lost): nothing was run")
    run = _run_token()
    futures = [client.submit(hello, setup, key=f"hello-{run}-{i}", workers=[a],
                             allow_other_workers=False, pure=False)
               for i, a in enumerate(addresses)]
    patience = Patience(client, wait_s)
    try:
        idents = []
        for a, f in zip(addresses, futures, strict=True):
            patience.until(f.done, lambda now, a=a: a in now,
                           f"worker {a} left before it was ready and is not back after "
                           f"{wait_s:g} s ({WAIT_ENV}=SECONDS waits longer)")
            idents.append(f.result())
    except BaseException as exc:
        _cancel(client, futures)
        if isinstance(exc, concurrent.futures.CancelledError):  # a lost scheduler's doing
            raise ClusterUnavailable(LOST) from None
        if isinstance(exc, Exception) and not isinstance(exc, HarnessError):
            # A worker that died starting (KilledWorker), or lost; a HarnessError is the
            # worker's own one line (no GPU, an unknown peer), or ours, and Ctrl-C is Ctrl-C.
            raise ClusterUnavailable(f"a worker failed while it started ({type(exc).__name__}"
                                     f": {exc}); its log says why (a plugin that ends the "
                                     "process, a broken GPU)") from None
        raise
    out = {i.address or a: i for a, i in zip(addresses, idents, strict=True)}
    check_workers(client, _gpus(out))
    return out


def _gpus(idents: Mapping[str, Identity]) -> dict[str, tuple[str, str]]:
    """What :func:`check_workers` checks of each worker: its host and its GPU (UUID, else
    PCI bus id)."""
    return {a: (i.host, i.gpu_uuid or i.pci_bus) for a, i in idents.items()}


def check_joined(client: Any, idents: dict[str, Identity], new: Identity) -> None:
    """A worker met for the first time in a point's result (one that joined after the
    start, or a dead one's replacement): added to ``idents``, then the live workers checked
    again as at the start (:func:`check_workers`: one thread each, no two on one GPU).
    ClusterUnavailable (one line) where they fail: the run stops and the late worker's rows
    are not written. A late worker is checked only when its first point comes back (Dask
    may hand it a point as soon as it joins): start every worker before the run."""
    idents[new.address] = new
    live = set(workers(client)) | {new.address}
    check_workers(client, _gpus({a: i for a, i in idents.items() if a in live}))
