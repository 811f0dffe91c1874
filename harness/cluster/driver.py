"""The driver's loop: tasks handed out to the workers with back-pressure, results taken as
they come, a task whose worker died handed out again a bounded number of times.

At most ``window`` tasks are out at once (twice the workers the scheduler has, asked again
each time: one running on each, one ready behind it), so the driver never queues a whole
sweep on the scheduler and an interrupted run has little to cancel. A task whose worker died
while running it (a crashed process, a lost node: Dask's ``KilledWorker``) is handed out
again, up to ``retries`` more times; then it is an outcome with the reason and no result.
Any other error a task raises is its outcome at once (a worker's own problem, not a death).
When the loop is left, by the end, an error or Ctrl-C, every task still out is cancelled.
"""

from __future__ import annotations

import concurrent.futures
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from harness.cluster.connect import ClusterUnavailable, check_workers
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
    #: Address of the last worker that died running it ('' when none did).
    died_on: str = ""


def hand_out(client: Any, fn: Callable[..., Done], args: tuple[Any, ...],
             tasks: Sequence[Any], retries: int,
             window: Callable[[], int]) -> Iterator[Outcome]:
    """Run ``fn(*args, task)`` for every task (each has an ``index``) on the cluster and
    yield each outcome as it lands (in the order they finish). ``window()``: how many tasks
    may be out at once, asked each time the run tops them up (:func:`per_worker`: two a
    live worker, so that workers that join later get points too)."""
    from distributed import KilledWorker, as_completed

    queue = deque(tasks)
    attempts: Counter[int] = Counter()
    died: dict[int, str] = {}
    live: dict[str, tuple[Any, Any]] = {}
    finished = as_completed()

    def submit(task: Any) -> None:
        attempts[task.index] += 1
        f = client.submit(fn, *args, task, pure=False,
                          key=f"{fn.__name__}-{task.index}-{attempts[task.index]}")
        live[f.key] = (f, task)
        finished.add(f)

    try:
        top = max(1, window())  # asked once a fill
        while queue and len(live) < top:
            submit(queue.popleft())
        for f in finished:
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
            except concurrent.futures.CancelledError:
                raise ClusterUnavailable("the cluster cancelled the run's tasks (the "
                                         "scheduler was lost?)") from None
            except Exception as exc:
                out = Outcome(task, None, f"{type(exc).__name__}: {exc}", n,
                              died.get(task.index, ""))
            finally:
                f.release()
            top = max(1, window()) if queue else 0
            while queue and len(live) < top:
                submit(queue.popleft())
            yield out
    finally:
        if live:
            client.cancel([f for f, _ in live.values()], force=True)


def per_worker(client: Any, each: int = 2) -> Callable[[], int]:
    """A hand-out window of ``each`` tasks a worker the scheduler has now (at least one
    worker's): one running and one ready on each, as the cluster grows or shrinks."""
    def size() -> int:
        return each * max(1, len(client.nthreads()))
    return size


def greet(client: Any, setup: Any) -> dict[str, Identity]:
    """Build every worker's state now (a task pinned to each: its backend opened, its GPU
    calibrated) and check that the cluster times honestly (:func:`check_workers`); the
    workers by address. A worker's error (no GPU where pycuda is asked for, an unknown
    peer) is raised here, as it is, before any point is handed out."""
    addresses = list(client.nthreads())
    futures = [client.submit(hello, setup, key=f"hello-{i}", workers=[a],
                             allow_other_workers=False, pure=False)
               for i, a in enumerate(addresses)]
    try:
        idents = [f.result() for f in futures]
    except HarnessError:  # the worker's own one line (no GPU, an unknown peer)
        client.cancel(futures, force=True)
        raise
    except Exception as exc:  # a worker that died starting (KilledWorker), or lost
        client.cancel(futures, force=True)
        raise ClusterUnavailable(f"a worker failed while it started ({type(exc).__name__}: "
                                 f"{exc}); its log says why (a plugin that ends the "
                                 "process, a broken GPU)") from None
    except BaseException:
        client.cancel(futures, force=True)
        raise
    out = {i.address or a: i for a, i in zip(addresses, idents, strict=True)}
    check_workers(client, {a: (i.host, i.gpu_uuid or i.pci_bus) for a, i in out.items()})
    return out


def check_joined(client: Any, idents: dict[str, Identity], new: Identity) -> None:
    """A worker met for the first time in a point's result (one that joined after the
    start, or a dead one's replacement): added to ``idents``, then the live workers checked
    again as at the start (:func:`check_workers`: one thread each, no two on one GPU).
    ClusterUnavailable (one line) where they fail: the run stops and the late worker's rows
    are not written. A late worker is checked only when its first point comes back (Dask
    may hand it a point as soon as it joins): start every worker before the run."""
    idents[new.address] = new
    live = set(client.nthreads()) | {new.address}
    check_workers(client, {a: (i.host, i.gpu_uuid or i.pci_bus) for a, i in idents.items()
                           if a in live})
