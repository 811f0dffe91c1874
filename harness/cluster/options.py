"""The cluster options of ``bench`` and ``validate`` (``--cluster``, ``--workers``,
``--retries``, ``--slurm``, and $HARNESS_CLUSTER_WAIT_S), checked before any work: each
mistake one line, and the cluster extra's presence too. Opening the cluster they describe
is :mod:`harness.cluster.connect`'s job.

No wait for workers is without a limit (:attr:`ClusterSpec.limit_s`).
"""

from __future__ import annotations

import math
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import BadInput, HarnessError

#: The one line a cluster option gives where the extra is not installed.
INSTALL = "cluster mode needs the cluster extra: pip install 'spike-harness[cluster]'"
#: A running scheduler's address: TCP (tls, ucx and websockets need settings or packages
#: the harness does not pass on), its port 1-65535.
_ADDRESS = re.compile(r"^tcp://[^\s/]+:(\d{1,5})$")
#: ``--slurm`` keys and their defaults (None: Slurm's own, or dask-jobqueue's).
SLURM_KEYS: dict[str, str | None] = {
    "queue": None, "account": None, "walltime": "01:00:00", "memory": "32GB",
    "gres": "gpu:1", "interface": None, "python": None,
}
#: Seconds a run waits, by default, while its cluster has no worker for it: for the first
#: one to join, and mid-run once every worker is gone (a lost host, a job past its
#: walltime); a Slurm cluster waits longer, for its first job to leave the queue. Past it
#: the run stops in one line, every row written so far kept. WAIT_ENV sets another wait
#: for a command (the library's callers may set ``ClusterSpec.wait_s`` instead).
WORKERS_S = 120
SLURM_S = 600
WAIT_ENV = "HARNESS_CLUSTER_WAIT_S"


class ClusterUnavailable(HarnessError):
    """No cluster to run on: the extra missing, a scheduler out of reach, no worker."""


@dataclass(frozen=True)
class ClusterSpec:
    """What ``--cluster``, ``--workers``, ``--retries`` and ``--slurm`` asked for."""

    #: ``local``, ``slurm``, or a scheduler's address (``tcp://HOST:PORT``).
    where: str
    #: Workers to start (local: default one per GPU; slurm: jobs, default 1).
    workers: int | None = None
    #: Times a point whose worker died is handed out again before it is a failed row.
    retries: int = 2
    #: ``--slurm KEY=VALUE`` settings.
    slurm: tuple[tuple[str, str], ...] = ()
    #: Seconds the run waits while it has no worker (None: the default, :attr:`limit_s`).
    wait_s: float | None = None

    @property
    def kind(self) -> str:
        """``local``, ``slurm`` or ``scheduler``."""
        return self.where if self.where in ("local", "slurm") else "scheduler"

    @property
    def limit_s(self) -> float:
        """Seconds the run waits while its cluster has no worker for it (for the first one,
        and mid-run once all are gone): ``wait_s``, else WORKERS_S (a Slurm cluster
        SLURM_S: its jobs may queue for a while first)."""
        if self.wait_s is not None:
            return self.wait_s
        return SLURM_S if self.kind == "slurm" else WORKERS_S


def spec(where: str, workers: int | None = None, retries: int = 2,
         slurm: Sequence[str] = (), wait_s: float | None = None) -> ClusterSpec:
    """The cluster options, checked (BadInput, one line); the extra's presence is checked
    here too, before any work (ClusterUnavailable). ``wait_s`` (None: $HARNESS_CLUSTER_WAIT_S
    where it is set, else the default) bounds the waits for a worker."""
    if wait_s is None:
        wait_s = wait_from_env()
    if wait_s is not None and not (math.isfinite(wait_s) and wait_s > 0):
        raise BadInput(f"a wait for the cluster's workers of {wait_s} s: a number of seconds "
                       "above 0")
    w = where.strip()
    m = _ADDRESS.match(w)
    if w not in ("local", "slurm") and not (m and 1 <= int(m.group(1)) <= 65535):
        raise BadInput(f"bad --cluster {where!r}: local (every GPU of this machine), slurm, "
                       "or a running scheduler's address, tcp://HOST:PORT")
    if workers is not None and workers < 1:
        raise BadInput(f"--workers {workers}: at least 1")
    if retries < 0:
        raise BadInput(f"--retries {retries}: at least 0")
    if workers is not None and w not in ("local", "slurm"):
        raise BadInput("--workers starts workers: a running scheduler has its own")
    pairs = []
    for item in slurm:
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in SLURM_KEYS or not value.strip():
            raise BadInput(f"bad --slurm {item!r}: KEY=VALUE with KEY one of "
                           f"{', '.join(SLURM_KEYS)}")
        pairs.append((key.strip(), value.strip()))
    if pairs and w != "slurm":
        raise BadInput("--slurm sets up the jobs of --cluster slurm")
    keys = [k for k, _ in pairs]
    if len(set(keys)) < len(keys):
        raise BadInput(f"--slurm {', '.join(sorted({k for k in keys if keys.count(k) > 1}))} "
                       "given twice")
    require_dask(w == "slurm")
    if w == "slurm" and shutil.which("sbatch") is None:  # its workers would never come
        raise ClusterUnavailable("--cluster slurm: sbatch not found on PATH (run it where "
                                 "Slurm's commands are)")
    return ClusterSpec(w, workers, retries, tuple(pairs), wait_s)


def wait_from_env() -> float | None:
    """The wait $HARNESS_CLUSTER_WAIT_S sets (None where it is unset or empty); BadInput,
    one line, for a value that is not a number of seconds above 0. A variable, not an
    option: a command's wait is the machine's concern (a queue's usual delay), seldom one
    run's."""
    raw = os.environ.get(WAIT_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise BadInput(f"{WAIT_ENV}={raw!r}: the seconds a cluster run waits for a worker, "
                       "a number above 0")
    return value


def require_dask(slurm: bool = False) -> None:
    """ClusterUnavailable (one line: how to install it) when the extra is missing."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401

        if slurm:
            import dask_jobqueue  # noqa: F401
    except ImportError:
        raise ClusterUnavailable(INSTALL) from None
