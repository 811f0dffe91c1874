"""Finding an external tool and running it as a child process, with one-line errors."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from harness.errors import HarnessError


def executable(name: str, missing: str) -> str:
    """The path of executable ``name``; HarnessError ``"<name> <missing>"`` when absent."""
    exe = shutil.which(name)
    if exe is None:
        raise HarnessError(f"{name} {missing}")
    return exe


def run(cmd: Sequence[str], what: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` to the end, its output captured as text; a one-line HarnessError naming
    ``what`` when it cannot start or outlasts ``timeout_s`` (a failing exit status is the
    caller's to judge: a sanitizer's report is still worth reading)."""
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout_s,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"{what} did not finish in {timeout_s:.0f} s") from exc
    except OSError as exc:
        raise HarnessError(f"{what} could not be started: {exc}") from exc
