"""The tree sent to a GPU machine: the commit it was sent from and a digest of its sources.

The GPU machine has no git history, so a run there cannot ask git which commit it runs, nor
whether its files are that commit's. ``stamp`` (here, before the tree is sent) records the
commit and a digest of the sources that commit holds; on the GPU machine
:func:`sent_tree_differs` digests the sources it actually has, and where the two differ the
rows name ``<commit>-dirty`` (:func:`harness.results.provenance.git_sha`), never a commit
whose kernels did not run. The sources are the files that shape a result: the ``.py``,
``.cu`` and ``.cuh`` files under ``harness/``, ``plugins/`` and ``kernels/`` (symbolic
links and Python's caches aside).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from harness import paths
from harness.errors import BadInput
from harness.results import files as result_files

#: The folders whose sources shape a result, and the files of them that count.
SOURCE_DIRS = ("harness", "plugins", "kernels")
SOURCE_SUFFIXES = (".py", ".cu", ".cuh")
#: The file ``stamp`` writes at the project's root and gpu-check.sh reads on the GPU
#: machine: a ``HARNESS_GIT_SHA=...`` and a ``HARNESS_GIT_TREE=...`` line.
STAMP_FILE = ".harness-sent"


def _is_source(name: str) -> bool:
    rel = PurePosixPath(name)
    return (len(rel.parts) > 1 and rel.parts[0] in SOURCE_DIRS
            and rel.suffix in SOURCE_SUFFIXES and "__pycache__" not in rel.parts)


def _digest(files: Mapping[str, bytes]) -> str:
    """16 hex digits over (path, bytes), in path order."""
    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        h.update(name.encode("utf-8", "surrogateescape") + b"\0"
                 + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()[:16]


def _read(root: Path, names: list[str]) -> dict[str, bytes]:
    """The files' bytes as they are on disk (symbolic links left out: they travel as links,
    and git holds their targets, not the files they point to)."""
    out = {}
    for name in names:
        f = root / name
        try:
            if f.is_symlink() or not f.is_file():
                continue
            out[name] = f.read_bytes()
        except OSError as e:
            raise BadInput(f"cannot read {f}: {e.strerror or e}") from e
    return out


def disk_sources(root: Path) -> dict[str, bytes]:
    """Every source file below ``root`` as it is on disk: what a run there compiles and
    imports (on the GPU machine, the tree as it arrived)."""
    names = []
    for d in SOURCE_DIRS:
        for dirpath, _dirs, files in os.walk(root / d):
            for fn in files:
                name = (Path(dirpath) / fn).relative_to(root).as_posix()
                if _is_source(name):
                    names.append(name)
    return _read(root, names)


def tree_digest(root: Path) -> str:
    """The digest of the sources on disk below ``root``."""
    return _digest(disk_sources(root))


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=60,
                          check=True).stdout


def sent_sources(root: Path) -> dict[str, bytes]:
    """The source files of the checkout at ``root`` that travel with the tree (tracked, or
    untracked and not ignored), as they are on disk."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                  *SOURCE_DIRS).split(b"\0")
    names = sorted({os.fsdecode(n) for n in listed if n})
    return _read(root, [n for n in names if _is_source(n)])


def commit_sources(root: Path, rev: str) -> dict[str, bytes]:
    """The source files commit ``rev`` holds, each as a checkout would write it (git's
    line-ending rules and filters applied: ``cat-file --filters``)."""
    out = {}
    for entry in _git(root, "ls-tree", "-r", "-z", rev, "--", *SOURCE_DIRS).split(b"\0"):
        if not entry:
            continue
        meta, _, raw = entry.partition(b"\t")
        name = os.fsdecode(raw)
        if meta.split()[0] == b"120000" or meta.split()[1] != b"blob" or not _is_source(name):
            continue  # symbolic links and submodules are not sources
        # ./: the path from root (git's rev:path alone is from the repository's top).
        out[name] = _git(root, "cat-file", "--filters", f"{rev}:./{name}")
    return out


def _why(e: Exception) -> str:
    """git's first line of complaint, where it said one."""
    err = getattr(e, "stderr", None) or b""
    line = (err.decode("utf-8", "replace") if isinstance(err, bytes) else str(err)).strip()
    return f" ({line.splitlines()[0]})" if line else ""


def _checked_commit_sources(root: Path, rev: str) -> dict[str, bytes]:
    try:
        return commit_sources(root, rev)
    except (OSError, subprocess.SubprocessError) as e:
        raise BadInput(f"{root} at {rev!r}: not a commit git can read{_why(e)}") from e


def commit_digest(root: Path, rev: str = "HEAD") -> str:
    """The digest of the sources commit ``rev`` holds. One line (BadInput) where ``root``
    is not a git checkout or ``rev`` names no commit."""
    return _digest(_checked_commit_sources(root, rev))


@dataclass(frozen=True)
class Stamp:
    """What a tree sent to a GPU machine names: its commit, the digest of the commit's
    sources, and the sources that would travel but differ from the commit's (added,
    changed or removed: rows measured from that tree name ``<sha>-dirty``)."""

    sha: str
    tree: str
    changed: tuple[str, ...] = field(default=())

    @property
    def dirty(self) -> bool:
        """Whether the tree that would travel is not the commit's."""
        return bool(self.changed)

    def text(self) -> str:
        """The stamp file's lines."""
        return f"HARNESS_GIT_SHA={self.sha}\nHARNESS_GIT_TREE={self.tree}\n"


def stamp(root: Path) -> Stamp:
    """The stamp of the checkout at ``root``: HEAD's full commit, its sources' digest, and
    the sources that would travel but are not HEAD's."""
    try:
        sha = _git(root, "rev-parse", "--verify", "HEAD^{commit}").decode().strip()
        sent = sent_sources(root)
    except (OSError, subprocess.SubprocessError) as e:
        raise BadInput(f"{root}: not a git checkout with a commit{_why(e)}") from e
    held = _checked_commit_sources(root, sha)
    changed = tuple(sorted(n for n in sent.keys() | held.keys() if sent.get(n) != held.get(n)))
    return Stamp(sha, _digest(held), changed)


def _is_stamp(text: str) -> bool:
    """Whether ``text`` is a stamp file's: lines of ``HARNESS_GIT_SHA=`` and
    ``HARNESS_GIT_TREE=`` only (what :meth:`Stamp.text` writes)."""
    lines = text.splitlines()
    return 0 < len(lines) <= 2 and all(
        ln.startswith(("HARNESS_GIT_SHA=", "HARNESS_GIT_TREE=")) for ln in lines)


def write_stamp(root: Path, dest: Path | None = None) -> tuple[Stamp, Path]:
    """Stamp the checkout at ``root`` and write the stamp file (``dest``, default
    ``root / STAMP_FILE``), which gpu-check.sh reads on the GPU machine: created, or
    replaced whole where it is a stamp already; any other file (a results CSV given by
    mistake), a folder or a symbolic link is refused in one line and left as it was."""
    path = dest if dest is not None else root / STAMP_FILE
    if not path.parent.is_dir():
        raise BadInput(f"cannot write {path}: no such folder {path.parent}")
    if path.is_symlink():
        raise BadInput(f"{path} is a symbolic link: the stamp is not written through one")
    if path.exists():
        try:
            old = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput(f"{path} exists and cannot be read as a stamp: not overwritten "
                           f"({getattr(e, 'strerror', None) or type(e).__name__})") from None
        if not _is_stamp(old):
            raise BadInput(f"{path} exists and is not a stamp file: not overwritten (the "
                           "stamp replaces only its own file)")
    st = stamp(root)
    try:
        result_files.replace(path, st.text().encode())
    except result_files.ResultFileError as e:
        raise BadInput(str(e)) from None
    return st, path


def sent_tree_differs() -> bool:
    """Whether ``HARNESS_GIT_TREE`` is given and the sources here are not the ones it
    names: the tree changed after it was stamped, or was never the stamped commit's."""
    want = os.environ.get("HARNESS_GIT_TREE")
    return bool(want) and tree_digest(paths.project_root()) != want
