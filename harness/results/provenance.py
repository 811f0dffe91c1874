"""Provenance recorded beside every result: git commit, time, command line, the GPU."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from harness import paths
from harness.errors import BadInput

#: The folders whose sources shape a result (the harness, the plugins, the kernels), and
#: the files of them that count: what a sent tree's digest covers.
SOURCE_DIRS = ("harness", "plugins", "kernels")
SOURCE_SUFFIXES = (".py", ".cu", ".cuh")
#: The file ``stamp`` writes at the project's root and gpu-check.sh reads on the GPU
#: machine: ``HARNESS_GIT_SHA=...`` and ``HARNESS_GIT_TREE=...`` lines (shell syntax).
STAMP_FILE = ".harness-sent"


def sent_sha() -> str | None:
    """The commit ``HARNESS_GIT_SHA`` names, or None where it is unset: on the GPU machine
    the tree arrives without history, so the script that starts the run passes the commit
    it was sent from."""
    return os.environ.get("HARNESS_GIT_SHA") or None


def _is_source(rel: PurePosixPath) -> bool:
    return (rel.parts[0] in SOURCE_DIRS and rel.suffix in SOURCE_SUFFIXES
            and "__pycache__" not in rel.parts)


def _digest(files: Iterable[tuple[str, bytes]]) -> str:
    """16 hex digits over (path, bytes) pairs, in path order."""
    h = hashlib.sha256()
    for rel, data in sorted(files):
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()[:16]


def tree_digest(root: Path) -> str:
    """The digest of the sources as they are on disk below ``root`` (SOURCE_DIRS, files
    ending in SOURCE_SUFFIXES; caches aside): what the GPU machine compares with the sent
    commit's."""
    files = []
    for d in SOURCE_DIRS:
        for f in (root / d).rglob("*"):
            rel = PurePosixPath(f.relative_to(root).as_posix())
            if f.is_file() and _is_source(rel):
                files.append((str(rel), f.read_bytes()))
    return _digest(files)


def _git_out(root: Path, *args: str, text: bool = True) -> Any:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=text,
                          timeout=60, check=True).stdout


def commit_digest(root: Path, rev: str = "HEAD") -> str:
    """The same digest over the sources a commit holds (read from git, not the disk).
    Raises BadInput where ``root`` is not a git checkout or ``rev`` names no commit."""
    try:
        names = _git_out(root, "ls-tree", "-r", "--name-only", "-z", rev, "--",
                         *SOURCE_DIRS).split("\0")
        keep = [n for n in names if n and _is_source(PurePosixPath(n))]
        return _digest((n, _git_out(root, "show", f"{rev}:{n}", text=False)) for n in keep)
    except (OSError, subprocess.SubprocessError) as e:
        raise BadInput(f"{root} at {rev!r}: not a commit git can read") from e


@dataclass(frozen=True)
class Stamp:
    """What a tree sent to the GPU machine names: its commit, that commit's source digest,
    and whether the sources on disk differ from it (their rows then name ``<sha>-dirty``)."""

    sha: str
    tree: str
    dirty: bool

    def text(self) -> str:
        """The stamp file's lines."""
        return f"HARNESS_GIT_SHA={self.sha}\nHARNESS_GIT_TREE={self.tree}\n"


def stamp(root: Path) -> Stamp:
    """The stamp of the checkout at ``root``: HEAD's full commit and its sources' digest,
    and whether the sources on disk (what would travel) differ from it."""
    try:
        sha = _git_out(root, "rev-parse", "--verify", "HEAD^{commit}").strip()
    except (OSError, subprocess.SubprocessError) as e:
        raise BadInput(f"{root}: not a git checkout with a commit") from e
    tree = commit_digest(root, sha)
    return Stamp(sha, tree, tree_digest(root) != tree)


def write_stamp(root: Path, dest: Path | None = None) -> tuple[Stamp, Path]:
    """Stamp the checkout at ``root`` and write the stamp file (``dest``, default
    ``root / STAMP_FILE``), which gpu-check.sh reads on the GPU machine."""
    st = stamp(root)
    path = dest if dest is not None else root / STAMP_FILE
    try:
        path.write_text(st.text())
    except OSError as e:
        raise BadInput(f"cannot write {path}: {e.strerror or e}") from e
    return st, path


def sent_tree_differs() -> bool:
    """Whether ``HARNESS_GIT_TREE`` is given and the sources here are not the ones it
    names: the tree changed after it was stamped (or was never the stamped commit's)."""
    want = os.environ.get("HARNESS_GIT_TREE")
    return bool(want) and tree_digest(paths.project_root()) != want


def git_sha() -> str:
    """The commit the harness runs from (``-dirty`` when tracked files changed);
    :func:`sent_sha` overrides it, ``-dirty`` added where the sources here are not those
    of the sent commit (``HARNESS_GIT_TREE``)."""
    if env := sent_sha():
        if sent_tree_differs() and not env.endswith("-dirty"):
            return env + "-dirty"
        return env
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
