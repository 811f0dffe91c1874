"""Provenance recorded beside every result: git commit, time, command line, the GPU."""

from __future__ import annotations

import datetime as _dt
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from harness import paths
from harness.errors import BadInput
from harness.results import sent_tree


def sent_sha() -> str | None:
    """The commit ``HARNESS_GIT_SHA`` names, or None where it is unset: on the GPU machine
    the tree arrives without history, so the script that starts the run passes the commit
    it was sent from."""
    return os.environ.get("HARNESS_GIT_SHA") or None


def git_sha() -> str:
    """The commit the harness runs from (``-dirty`` when tracked files changed);
    :func:`sent_sha` overrides it, ``-dirty`` added where the sources here are not those
    of the sent commit (``HARNESS_GIT_TREE``)."""
    if env := sent_sha():
        try:
            differs = sent_tree.sent_tree_differs()
        except BadInput:  # a source unreadable here: not known to be the commit's
            differs = True
        return env + "-dirty" if differs and not env.endswith("-dirty") else env
    root = paths.project_root()
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha.strip() + ("-dirty" if dirty.strip() else "")


def now() -> str:
    """UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def command_line() -> str:
    """The command as typed (``harness ...``). An argument's bytes that are not UTF-8 (a
    path named in another encoding: Python holds them as lone surrogates, which no UTF-8
    file can) are written as ``\\xNN`` escapes."""
    argv = [os.fsencode(a).decode("utf-8", "backslashreplace") for a in sys.argv]
    if argv and argv[0].endswith(("__main__.py", "/harness")):
        argv[0] = "harness"
    return shlex.join(argv)


@dataclass(frozen=True)
class RunMeta:
    """The provenance of a run, written into every row it measures."""

    gpu: str = ""
    driver: str = ""
    cuda: str = ""
    git_sha: str = ""
    command: str = ""
    #: The calibrated copy bandwidth of the GPU (GB/s), what ``pct_peak`` refers to.
    peak_gbps: float | None = None

    def columns(self) -> dict[str, Any]:
        """The provenance columns of a row written now (stage and pipeline rows alike)."""
        return {"gpu": self.gpu, "driver": self.driver, "cuda": self.cuda,
                "git_sha": self.git_sha, "timestamp": now(), "command": self.command}
