"""A lost device context (a sticky CUDA error): how a failure shows one, and how a sweep
stops at it (:func:`harness.engine.bench.run`; ``harness validate`` stops the same way,
:func:`harness.engine.validate.summaries`). After an illegal memory access, say, every
later call of the process fails, each with a message about its own first call, so the run
stops where the failure says why, what it finished kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.engine.jobs import Job
from harness.errors import ContextLost

#: cuGetErrorString's text of the CUDA errors that leave the context unusable (sticky
#: errors: every later call of the process fails with them), as PyCUDA's and PyTorch's
#: messages carry it.
STICKY_ERRORS = ("an illegal memory access was encountered", "unspecified launch failure",
                 "misaligned address", "an illegal instruction was encountered",
                 "device-side assert triggered", "the launch timed out and was terminated",
                 "uncorrectable ECC error encountered", "hardware stack error",
                 "invalid program counter", "operation not supported on global/shared "
                 "address space")


def context_lost(reason: str) -> bool:
    """Whether a failed row's reason is a sticky CUDA error (:data:`STICKY_ERRORS`): the
    device context is gone, and no later job of the process can run."""
    return any(text in reason for text in STICKY_ERRORS)


def stop_if_lost(job: Job, row: Mapping[str, Any], left: str) -> None:
    """ContextLost where ``row`` failed on a sticky device error: every later launch of
    the process would fail too, each with a message about its own first call, so the sweep
    stops at the row that says why (its rows so far are written); ``left`` says what was
    left (:func:`unrun`)."""
    if row.get("status") == "failed" and context_lost(str(row.get("reason", ""))):
        raise ContextLost(
            f"stopped: the device's context was lost at {job.target.name} "
            f"[{job.variant.name}] {', '.join(f'{k}={v}' for k, v in job.point.items())} "
            f"({row['reason']}); {left}")


def unrun(left: int, note: str = "") -> str:
    """What a stopped sweep left: ``left`` jobs (``note`` in brackets after the count)."""
    if left <= 0:
        return "no job was left to run"
    return (f"{left} job(s) not run{f' ({note})' if note else ''}: run them again in a new "
            "process, without the build that lost it (--restrict, or a narrower sweep)")
