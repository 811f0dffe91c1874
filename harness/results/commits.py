"""Which commits the result rows name, and whether this clone's history holds each of them.

Every row keeps the ``git_sha`` of the tree it was measured from (on the GPU machine the run
script passes it, since the tree arrives there without history). A row is only as traceable
as that commit: a branch that was measured and then lost takes with it the source its rows
describe, and a mistyped ``HARNESS_GIT_SHA`` names no commit at all. This module reads the
rows' commits under the folders it is given and asks git which of them HEAD's history holds.
A commit the history does not hold as written (an unmerged branch that did not survive, a
mistyped or tagged sha) is listed with the reason, and the real commit where known, in
``untraced_commits.csv`` beside the results; the list is checked too: a listed commit that
the history now holds, or that no row names any more, is a stale entry.
"""

from __future__ import annotations

import bisect
import csv
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import BadInput
from harness.results import files, resultcsv

#: The commits rows name that the history does not hold, each with why (columns git_sha,
#: reason), under the results folder.
UNTRACED_FILE = "untraced_commits.csv"
#: Folders whose CSVs are not result rows: a run's logs (what it printed and wrote there, and
#: copies of its scripts, kept beside its results as they came).
_SKIP_DIRS = frozenset({"logs"})

_DIRTY = "-dirty"
#: The shortest abbreviation taken for a commit (git's default), so that a mistyped short
#: sha does not pass by matching some commit's first digits by chance.
_MIN_SHA = 7


@dataclass(frozen=True)
class UntracedCommit:
    """A commit that rows name and the history does not hold as written, and why."""

    git_sha: str
    reason: str


@dataclass(frozen=True)
class CommitReport:
    """The rows' commits against the history."""

    #: Each commit the rows name (as written, ``-dirty`` kept), with the folders naming it.
    named: dict[str, tuple[Path, ...]]
    #: Commits the history does not hold and the list does not give: the check's failures.
    missing: tuple[str, ...]
    #: Listed commits that the rows name and the history does not hold (as expected).
    untraced: tuple[UntracedCommit, ...]
    #: Listed commits that no row under the list's folder names, or that the history holds:
    #: stale entries.
    stale: tuple[UntracedCommit, ...] = field(default=())
    #: CSVs with no git_sha column (not rows of this harness: ncu's raw pages, say).
    unnamed_files: tuple[Path, ...] = field(default=())
    #: Files holding rows with an empty git_sha, and how many: rows no commit traces.
    blank_rows: dict[Path, int] = field(default_factory=dict)
    #: Results CSVs (the rows' marks: stage, backend, a time) with no git_sha column.
    unnamed_results: tuple[Path, ...] = field(default=())

    @property
    def failure(self) -> str:
        """Why ``--check`` fails ('' when it passes)."""
        parts = []
        if self.missing:
            parts.append(f"{len(self.missing)} commit(s) named by result rows are not in this "
                         f"clone's history nor in {UNTRACED_FILE}: {', '.join(self.missing)}")
        if self.unnamed_results:
            parts.append(f"{len(self.unnamed_results)} results CSV(s) with no git_sha column: "
                         f"{', '.join(str(p) for p in self.unnamed_results)}")
        if self.blank_rows:
            parts.append(f"{sum(self.blank_rows.values())} row(s) with no git_sha in "
                         f"{', '.join(str(p) for p in self.blank_rows)}")
        if self.stale:
            parts.append(f"{len(self.stale)} stale entr(y/ies) in {UNTRACED_FILE} (in the history, "
                         f"or named by no row): {', '.join(s.git_sha for s in self.stale)}")
        return "; ".join(parts)


def _unlisted(err: OSError) -> None:
    raise BadInput(f"cannot read the folder {err.filename}: {err.strerror or err}; its rows "
                   "are not read as none")


def result_csvs(folders: Iterable[Path]) -> list[Path]:
    """Every CSV under ``folders`` but those in a run's logs and the untraced list itself (a
    file named directly must be a results CSV). A folder that cannot be listed, and a
    ``*.csv`` that is no regular file (a folder, a broken or looping link, a pipe that a
    read would wait on forever), are bad input: never read as no rows."""
    found: set[Path] = set()
    for folder in folders:
        if folder.is_file():
            if folder.suffix != ".csv" or folder.name == UNTRACED_FILE:
                raise BadInput(f"{folder}: not a results CSV")
            found.add(folder)
            continue
        if not folder.is_dir():
            raise BadInput(f"{folder}: no such results folder")
        for dirpath, dirnames, filenames in os.walk(folder, onerror=_unlisted):
            here = Path(dirpath)
            # a run's logs are not walked at all (an unreadable one is none of this check's)
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
            names = [*filenames, *(d for d in dirnames if d.endswith(".csv"))]
            for name in names:
                p = here / name
                if not name.endswith(".csv") or name == UNTRACED_FILE:
                    continue
                if (why := files.not_regular(p)) is not None:
                    raise BadInput(why)
                found.add(p)
    return sorted(found)


@dataclass(frozen=True)
class Named:
    """What the rows of some CSVs name."""

    #: Each ``git_sha``, with the folders (sorted) whose rows name it.
    commits: dict[str, tuple[Path, ...]]
    #: The CSVs with no git_sha column.
    unnamed_files: tuple[Path, ...]
    #: The CSVs holding rows with an empty git_sha, and how many.
    blank_rows: dict[Path, int]
    #: Of ``unnamed_files``, those with the marks of the harness's result rows (stage,
    #: backend and a time): rows no commit traces.
    unnamed_results: tuple[Path, ...] = ()


def named_commits(csvs: Iterable[Path]) -> Named:
    """Each ``git_sha`` the files' rows hold, the files without the column, and the rows
    with it empty; a file that is not readable CSV is bad input."""
    where: dict[str, set[Path]] = {}
    unnamed: list[Path] = []
    results: list[Path] = []
    blank: dict[Path, int] = {}
    for path in csvs:
        try:
            with path.open(newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                if "git_sha" not in (reader.fieldnames or ()):
                    unnamed.append(path)
                    if resultcsv.marked(set(reader.fieldnames or ())):
                        results.append(path)
                    continue
                for row in reader:
                    sha = (row.get("git_sha") or "").strip()
                    if sha:
                        where.setdefault(sha, set()).add(path.parent)
                    else:
                        blank[path] = blank.get(path, 0) + 1
        except (UnicodeDecodeError, csv.Error) as e:
            raise BadInput(f"{path}: not a readable CSV ({e})") from None
        except OSError as e:
            raise BadInput(f"{path}: cannot be read ({e.strerror or e})") from None
    return Named({sha: tuple(sorted(folders)) for sha, folders in sorted(where.items())},
                 tuple(unnamed), blank, tuple(results))


def history(root: Path) -> list[str]:
    """Every commit HEAD's history holds (full hashes, sorted). A tree without history,
    or a shallow clone (whose history stops short), cannot answer: bad input."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=60, check=True).stdout
        except (OSError, subprocess.SubprocessError) as e:
            raise BadInput(f"{root}: no git history to check the rows' commits against "
                           f"({type(e).__name__})") from None

    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        raise BadInput(f"{root}: a shallow clone holds only part of the history; fetch it "
                       "whole (git fetch --unshallow) to check the rows' commits")
    return sorted(git("rev-list", "HEAD").split())


def holds(commits: Sequence[str], sha: str) -> bool:
    """Whether the sorted full hashes ``commits`` hold ``sha`` (full or abbreviated,
    ``-dirty`` meaning its commit plus changes: the commit is what must be there)."""
    sha = sha.lower().removesuffix(_DIRTY)
    if len(sha) < _MIN_SHA or any(c not in "0123456789abcdef" for c in sha):
        return False
    i = bisect.bisect_left(commits, sha)
    return i < len(commits) and commits[i].startswith(sha)


def read_untraced(path: Path) -> list[UntracedCommit]:
    """The untraced list (none where the file is absent); a malformed one is bad input."""
    if not path.exists():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if list(reader.fieldnames or ()) != ["git_sha", "reason"]:
                raise BadInput(f"{path}: its columns must be git_sha,reason")
            listed = [UntracedCommit((r["git_sha"] or "").strip(), (r["reason"] or "").strip())
                      for r in reader]
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}: not a readable CSV ({e})") from None
    seen: set[str] = set()
    for c in listed:
        if not c.git_sha or not c.reason:
            raise BadInput(f"{path}: every entry needs a git_sha and a reason")
        if c.git_sha in seen:
            raise BadInput(f"{path}: {c.git_sha} listed twice")
        seen.add(c.git_sha)
    return listed


def check(folders: Sequence[Path], untraced_path: Path, root: Path) -> CommitReport:
    """The commits the rows under ``folders`` name, against ``root``'s history and the
    untraced list at ``untraced_path``. An entry of the list is stale where the history
    holds it, or where no row under the list's own folder names it (whichever folders are
    checked, so a narrower check judges the list as the whole one does)."""
    files = result_csvs(folders)
    named = named_commits(files)
    commits = history(root)
    listed = {c.git_sha: c for c in read_untraced(untraced_path)}
    everywhere: dict[str, tuple[Path, ...]] = {}
    if listed:
        # The rows under the list's folder; read again only where the folders checked hold
        # other files than those (the default check reads every file once).
        whole = result_csvs([untraced_path.parent])
        everywhere = named.commits if whole == files else named_commits(whole).commits
    gone = [sha for sha in named.commits if not holds(commits, sha)]
    return CommitReport(
        named=named.commits,
        missing=tuple(sha for sha in gone if sha not in listed),
        untraced=tuple(listed[sha] for sha in gone if sha in listed),
        stale=tuple(c for sha, c in listed.items()
                    if sha not in everywhere or holds(commits, sha)),
        unnamed_files=named.unnamed_files, blank_rows=named.blank_rows,
        unnamed_results=named.unnamed_results)
