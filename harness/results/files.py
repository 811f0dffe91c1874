"""Result files that are never corrupted or silently lost: the rules every writer follows.

Every command that writes a result file (bench, profile, sanitize, calibrate, the ledger of
``validate --record``, report's plots and README) goes through here:

- **One writer per file at a time.** A lock (``filelock``: an OS lock, released by the
  kernel when its process dies, so a killed run leaves none behind) on a hidden
  ``.<name>.lock`` beside the file is held while the file is open; a second writer gets a
  one-line error naming the file, at once or, where it asks to ``wait`` (the ledger's
  appends, which hold the lock a moment), once that time has passed.
- **An existing file is replaced only on request**: what to do with one is ``REFUSE``
  (the default: one line saying how to ask), ``APPEND`` or ``OVERWRITE``.
- **Rows are written whole**: each is one ``write`` and ``fsync``; one that fails (a full
  disk) is cut back off, so the file ends on its last whole row, and one line says how many
  rows were kept. Before appending, a torn last row (a writer killed mid-write) is cut away
  and reported, and one whose every field is there but not its line end is refused (it
  may be whole); a file damaged before its last row, or of other columns, is refused
  (:mod:`harness.results.scan` reads what an existing file holds).
- **No symlink is followed out of the output folder.**
- **Whole files** (a plot, a calibration, a README) are replaced atomically: written to a
  temporary file beside them, synced, then renamed over them.

Errors are :class:`ResultFileError`: one line, exit status 2, raised before anything is
written where the problem can be known then.

Past 300 lines: the lock, the row writer and the atomic replace share the symlink rule
and the error wording, and each rule is tested against the others here.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from harness.errors import BadInput, HarnessError
from harness.results.scan import scan

#: What a writer does with a file that already holds something.
REFUSE, APPEND, OVERWRITE = "refuse", "append", "overwrite"


class ResultFileError(HarnessError):
    """A result file that cannot be written as asked; says what was kept."""


def on_existing(append: bool, overwrite: bool) -> str:
    """What ``--append`` / ``--overwrite`` ask for an existing file; BadInput for both."""
    if append and overwrite:
        raise BadInput("--append and --overwrite exclude each other: add to the file or "
                       "replace it")
    return APPEND if append else OVERWRITE if overwrite else REFUSE


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _reach(p: Path, test: Callable[[], bool]) -> bool:
    """``test()`` of ``p`` (its existence, its kind); one line where a folder above it may
    not be searched (the test raises there)."""
    try:
        return test()
    except OSError as exc:
        raise ResultFileError(f"cannot reach {p}: {_why(exc)}; nothing was written") from None


def _within(p: Path, root: Path) -> Path:
    """The real path of ``p``; ResultFileError when a symlink leads it out of ``root`` (or
    loops)."""
    try:
        real, base = p.resolve(), Path(root).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise ResultFileError(f"cannot follow {p}: {exc}") from None
    if not real.is_relative_to(base):
        raise ResultFileError(f"{p} is a symlink leading out of {root} (to {real}): not "
                              "following it; nothing was written")
    return real


def folder(path: Path, option: str = "", root: Path | None = None) -> Path:
    """``path`` as an output folder, created when missing; one line when it is a file or
    cannot be created (a read-only place), or, given ``root``, when a symlink leads it out
    of ``root``. ``option`` names it in the message (``--out``)."""
    p = Path(path)
    if root is not None:
        _within(p, root)
    if _reach(p, lambda: p.exists() and not p.is_dir()):
        raise ResultFileError(f"{option} {p} is a file: it takes a folder" if option else
                              f"{p} is a file, not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultFileError(f"cannot create the folder {p}: {_why(exc)}; nothing was "
                              "written") from None
    return p


def inside(path: Path, root: Path) -> Path:
    """The real path of ``path``; ResultFileError when a symlink leads it out of ``root``
    (or loops), or it is a folder."""
    p = Path(path)
    real = _within(p, root)
    if _reach(p, real.is_dir):
        raise ResultFileError(f"{p} is a folder, not a file")
    return real


def not_regular(p: Path) -> str | None:
    """Why ``p`` cannot be read as a results file (a folder, a pipe a read would wait on
    forever, a broken or looping link), or None for a regular file."""
    try:
        regular = stat.S_ISREG(p.stat().st_mode)
    except OSError as exc:
        return f"{p}: cannot be read ({exc.strerror or exc})"
    return None if regular else f"{p}: not a regular file, so not a results CSV"


def lock_path(real: Path) -> Path:
    """The lock file of a result file: hidden, beside it."""
    return real.with_name(f".{real.name}.lock")


def _lock(real: Path, shown: Path, wait: float = 0.0) -> FileLock:
    """Take the file's lock, waiting up to ``wait`` seconds for another run to release it
    (0: not at all); one line when another run still holds it."""
    lock = FileLock(lock_path(real), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        held = f" (still after {wait:g} s)" if wait else ""
        raise ResultFileError(f"{shown} is being written by another harness run{held}: wait "
                              "for it to finish, or write elsewhere") from None
    except OSError as exc:
        raise ResultFileError(f"cannot write in {real.parent}: {_why(exc)}; nothing was "
                              "written") from None
    return lock


@contextlib.contextmanager
def locked(path: Path, root: Path | None = None) -> Iterator[Path]:
    """Hold the lock of ``path`` (checked against ``root``, default its folder) and give
    its real path."""
    real = inside(path, root or folder(Path(path).parent))
    lock = _lock(real, Path(path))
    try:
        yield real
    finally:
        lock.release()


#: What a refused file's line offers, by the options of the command that writes it.
BENCH_CHOICES = "--append adds to it, --overwrite replaces it, or --out writes elsewhere"

#: ``os.write``, named so that a test can make the disk full.
_write = os.write


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _csv_line(values: Sequence[Any]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf).writerow(values)
    return buf.getvalue().encode("utf-8")


class RowFile:
    """A CSV result file open for whole rows, under its lock until :meth:`close`.

    ``existing`` says what to do with a file that holds something: ``REFUSE`` it, ``APPEND``
    to it (its header checked, a torn last row cut away and a whole one without its line
    end refused: ``repaired`` says what was mended) or
    ``OVERWRITE`` it (at the first row written: a writer closed without rows leaves it).
    ``root`` is the output folder no symlink may lead out of (default: the
    file's folder); ``wait``, the seconds to wait for another writer's lock (0: refuse at
    once). Every problem known before a row is written is raised here.
    """

    def __init__(self, path: Path, columns: Sequence[str], existing: str = REFUSE,
                 root: Path | None = None, choices: str = BENCH_CHOICES,
                 wait: float = 0.0) -> None:
        if existing not in (REFUSE, APPEND, OVERWRITE):
            raise ValueError(f"bad existing {existing!r}")
        self.path = Path(path)
        self.columns = tuple(columns)
        #: A line saying what was cut from the file before appending ('' when nothing).
        self.repaired = ""
        #: Whole rows in the file (0 while an OVERWRITE still keeps the old ones, until the
        #: first new row); ``written`` of them by this writer.
        self.rows = self.written = 0
        self._fd = -1
        self._end = 0
        self._replace = False  # an old file to cut before the first row (OVERWRITE)
        self._choices = choices
        real = inside(self.path, root or folder(self.path.parent))
        self._lock: FileLock | None = _lock(real, self.path, wait)
        try:
            try:
                self._fd = os.open(real, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
                                   | getattr(os, "O_NOFOLLOW", 0), 0o666)
            except OSError as exc:
                raise ResultFileError(f"cannot write {self.path}: {_why(exc)}; nothing was "
                                      "written") from None
            self._start(existing)
        except BaseException:
            self.close()
            raise

    def _start(self, existing: str) -> None:
        size = os.fstat(self._fd).st_size
        if size and existing == REFUSE and not scan(_read_all(self._fd), self.columns).empty:
            raise ResultFileError(f"{self.path} exists: {self._choices}")
        if size and existing == APPEND:
            s = scan(_read_all(self._fd), self.columns)
            if s.problem:
                raise ResultFileError(f"{self.path}{s.problem}")
            if s.end < size:
                os.ftruncate(self._fd, s.end)
                what = "a torn last row" if s.end else "a header cut short"
                self.repaired = (f"repaired {self.path}: cut {what} ({size - s.end} bytes, "
                                 "from a write cut short) before appending")
            self.rows, self._end = s.rows, s.end
            if s.line_end:  # a whole last line that lost its line end: given it back
                self._put(s.line_end, header=True)
                self.repaired = f"repaired {self.path}: ended its last line before appending"
        elif size:
            # OVERWRITE: the old rows stay until the first new row replaces them, so a run
            # stopped before this file's stage measured anything leaves them as they were.
            self._replace = True
            return
        if self._end == 0:
            self._put(_csv_line(self.columns), header=True)

    def _put(self, data: bytes, header: bool = False) -> None:
        """One write and an fsync; on failure the file is cut back to its last whole row. A
        row is counted as soon as the write lands, before the fsync: an interrupt during the
        fsync (raised as the call returns) leaves the row in the file, and counted; a
        failed fsync cuts the row away and uncounts it (where the cut fails too, the row
        stays, counted)."""
        start, counted = self._end, False
        try:
            n = _write(self._fd, data)
            if n != len(data):  # a short write: the device is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self._end = start + n
            if not header:
                self.rows += 1
                self.written += 1
                counted = True
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, start)
                state = "the file is whole"
                self._end = start
                if counted:  # cut away: no longer in the file
                    self.rows -= 1
                    self.written -= 1
            except OSError:  # left as it is: a whole row written stays counted
                state = "its last row may be torn (cut away by the next --append)"
            if header:
                raise ResultFileError(f"cannot write {self.path}: {_why(exc)}; nothing was "
                                      "written") from None
            raise ResultFileError(f"cannot write a row to {self.path}: {_why(exc)}; the "
                                  f"{self.written} row(s) this run wrote there are kept, "
                                  f"{state}") from None

    def write(self, values: Sequence[Any]) -> None:
        """Write one row (a value per column, formatted by :mod:`csv`) whole, now."""
        if len(values) != len(self.columns):
            raise ValueError(f"{len(values)} values for {len(self.columns)} columns")
        try:  # before anything is cut (--overwrite): a row that cannot be written cuts nothing
            line = _csv_line(values)
        except UnicodeEncodeError as exc:
            raise ResultFileError(f"cannot write a row to {self.path}: a value is not text "
                                  f"UTF-8 can hold ({exc.object[exc.start:exc.end]!r}); the "
                                  f"file is as it was") from None
        if self._replace:
            try:
                os.ftruncate(self._fd, 0)
            except OSError as exc:
                raise ResultFileError(f"cannot replace {self.path}: {_why(exc)}; its old "
                                      "rows are kept") from None
            self._replace = False
            try:
                self._put(_csv_line(self.columns), header=True)
            except ResultFileError as exc:
                raise ResultFileError(f"{exc}; its old rows were cut away first "
                                      "(--overwrite)") from None
        self._put(line)

    def close(self) -> None:
        """Close the file and release its lock (every row is already on disk)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __del__(self) -> None:  # a writer dropped unclosed still lets go of its lock
        # (no module-level helper here: at interpreter exit they may be gone)
        try:  # noqa: SIM105
            self.close()
        except Exception:
            pass

    def __enter__(self) -> RowFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _atomic(real: Path, data: bytes, shown: Path) -> None:
    """Write ``data`` to a temporary file beside ``real``, sync it, rename it over."""
    tmp = real.with_name(f".{real.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
                     | getattr(os, "O_NOFOLLOW", 0), 0o666)
        try:
            if real.exists():
                os.fchmod(fd, real.stat().st_mode & 0o7777)
            view = memoryview(data)
            while view:
                n = _write(fd, view)
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, real)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        kept = "it is unchanged" if real.exists() else "nothing was written"
        raise ResultFileError(f"cannot write {shown}: {_why(exc)}; {kept}") from None


def replace(path: Path, data: bytes, root: Path | None = None) -> Path:
    """Replace (or create) the whole file ``path`` atomically, under its lock; ``root``:
    the folder no symlink may lead out of (default the file's)."""
    with locked(path, root) as real:
        _atomic(real, data, Path(path))
    return Path(path)


def edit(path: Path, change: Callable[[str], str], root: Path | None = None) -> Path:
    """Rewrite the text file ``path`` through ``change`` under its lock, atomically (no
    other run's edit is lost between the read and the write). ``change`` sees the file's
    own line endings (no newline translation), so a CRLF file can stay CRLF."""
    with locked(path, root) as real:
        try:
            text = real.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise ResultFileError(f"no such file: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ResultFileError(f"cannot read {path}: {exc}") from None
        _atomic(real, change(text).encode("utf-8"), Path(path))
    return Path(path)
