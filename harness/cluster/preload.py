"""Loaded by every local worker process as it starts (Dask's ``preload``).

Ctrl-C at a terminal reaches the whole process group, the workers too; the driver is the
one that stops the run (its points cancelled, its rows kept, the workers closed), so a
worker ignores SIGINT rather than dying mid-point with a traceback of its own.
"""

from __future__ import annotations

import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (Dask calls this in its main thread)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
