"""The result-file rules: one writer per file, whole rows, torn rows cut, no symlink out of
the folder, whole files replaced atomically."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from filelock import FileLock

from harness.errors import BadInput
from harness.results import files
from harness.results.files import ResultFileError

COLS = ("a", "b", "c")


def test_on_existing() -> None:
    assert files.on_existing(False, False) == files.REFUSE
    assert files.on_existing(True, False) == files.APPEND
    assert files.on_existing(False, True) == files.OVERWRITE
    with pytest.raises(BadInput, match="--append and --overwrite exclude each other"):
        files.on_existing(True, True)


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    first = files.RowFile(p, COLS)
    with pytest.raises(ResultFileError, match=f"^{p} is being written by another harness run"):
        files.RowFile(p, COLS, files.APPEND)
    first.write([1, 2, 3])
    first.close()
    with files.RowFile(p, COLS, files.APPEND) as second:  # free again
        second.write([4, 5, 6])
    assert p.read_bytes() == b"a,b,c\r\n1,2,3\r\n4,5,6\r\n"


def test_the_lock_of_another_process_is_seen(tmp_path: Path) -> None:
    """The lock is the OS's (flock): a holder that is not a RowFile counts too, and a
    writer's lock is released when it closes."""
    p = tmp_path / "r.csv"
    held = FileLock(files.lock_path(p.resolve()), timeout=0)
    held.acquire()
    try:
        with pytest.raises(ResultFileError, match="being written by another harness run"):
            files.RowFile(p, COLS)
        assert not p.exists()  # refused before the file was made
    finally:
        held.release()
    files.RowFile(p, COLS).close()
    assert held.acquire(timeout=0) and held.is_locked
    held.release()


def test_rows_are_whole_and_counted(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    with files.RowFile(p, COLS) as w:
        w.write(["x", 'say "hi"', "two\nlines"])
        with pytest.raises(ValueError, match="2 values for 3 columns"):
            w.write([1, 2])
    with files.RowFile(p, COLS, files.APPEND) as w:
        assert (w.rows, w.written) == (1, 0)
        w.write([1, 2, 3])
        assert (w.rows, w.written) == (2, 1)


def test_overwrite_replaces_at_the_first_row(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    with files.RowFile(p, COLS) as w:
        w.write([1, 2, 3])
    old = p.read_bytes()
    with files.RowFile(p, COLS, files.OVERWRITE):
        pass  # a run stopped before this stage measured anything
    assert p.read_bytes() == old
    with files.RowFile(p, COLS, files.OVERWRITE) as w:
        assert p.read_bytes() == old
        w.write([4, 5, 6])
        assert (w.rows, w.written) == (1, 1)
        w.write([7, 8, 9])
    assert p.read_bytes() == b"a,b,c\r\n4,5,6\r\n7,8,9\r\n"


def test_no_symlink_out_of_the_folder(tmp_path: Path) -> None:
    out, away = tmp_path / "out", tmp_path / "away"
    out.mkdir()
    away.mkdir()
    (away / "r.csv").write_text("precious\n")
    (out / "r.csv").symlink_to(away / "r.csv")
    with pytest.raises(ResultFileError, match=r"r.csv is a symlink leading out of .*out"):
        files.RowFile(out / "r.csv", COLS, files.OVERWRITE)
    assert (away / "r.csv").read_text() == "precious\n"
    with pytest.raises(ResultFileError, match="symlink leading out of"):
        files.replace(out / "r.csv", b"x")
    (out / "inner.csv").symlink_to(out / "target.csv")  # within the folder: followed
    with files.RowFile(out / "inner.csv", COLS) as w:
        w.write([1, 2, 3])
    assert (out / "target.csv").read_bytes() == b"a,b,c\r\n1,2,3\r\n"
    (out / "loop.csv").symlink_to(out / "loop.csv")
    with pytest.raises(ResultFileError, match="cannot follow"):
        files.RowFile(out / "loop.csv", COLS)


def test_folder(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(ResultFileError, match=f"^--out {f} is a file: it takes a folder$"):
        files.folder(f, "--out")
    with pytest.raises(ResultFileError, match=r"cannot create the folder .*: Not a directory"):
        files.folder(f / "sub")
    assert files.folder(tmp_path / "a" / "b").is_dir()
    with pytest.raises(ResultFileError, match="is a folder, not a file"):
        files.RowFile(tmp_path / "a", COLS)


def _refuse_open(monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    """os.open fails as on a read-only file system for paths ending in ``name``."""
    real_open = os.open

    def refuse(path, flags, *a):  # type: ignore[no-untyped-def]
        if str(path).endswith(name):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real_open(path, flags, *a)

    monkeypatch.setattr(os, "open", refuse)


def test_a_read_only_place_is_one_line(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _refuse_open(monkeypatch, "r.csv")
    with pytest.raises(ResultFileError, match=r"cannot write .*r\.csv: Read-only file system; "
                       "nothing was written"):
        files.RowFile(tmp_path / "r.csv", COLS)


def test_a_full_disk_at_the_header_writes_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(files, "_write", lambda fd, data: 3)  # a short write: full
    with pytest.raises(ResultFileError, match="No space left on device; nothing was written"):
        files.RowFile(tmp_path / "r.csv", COLS)
    assert (tmp_path / "r.csv").read_bytes() == b""  # empty: the next run starts it afresh
    monkeypatch.undo()
    with files.RowFile(tmp_path / "r.csv", COLS) as w:
        w.write([1, 2, 3])


def test_replace_is_atomic_and_keeps_the_mode(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "c.json"
    files.replace(p, b"one")
    os.chmod(p, 0o640)
    files.replace(p, b"two")
    assert p.read_bytes() == b"two" and p.stat().st_mode & 0o777 == 0o640

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write", full)
    with pytest.raises(ResultFileError, match="No space left on device; it is unchanged"):
        files.replace(p, b"three")
    assert p.read_bytes() == b"two"
    assert sorted(f.name for f in tmp_path.iterdir()) == [".c.json.lock", "c.json"]  # no temp


def test_edit_reads_and_writes_under_the_lock(tmp_path: Path) -> None:
    p = tmp_path / "README.md"
    with pytest.raises(ResultFileError, match="no such file"):
        files.edit(p, str.upper)
    p.write_text("abc")
    held = FileLock(files.lock_path(p.resolve()), timeout=0)
    with held, pytest.raises(ResultFileError, match="being written by another harness run"):
        files.edit(p, str.upper)
    files.edit(p, str.upper)
    assert p.read_text() == "ABC"


def test_a_row_is_counted_as_it_lands_before_its_fsync(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C during a row's fsync (raised as the call returns): the row is in the file and
    counted, so an interrupted run's count matches its file; an fsync that fails cuts the
    row away and uncounts it."""
    import os

    p = tmp_path / "r.csv"
    real = os.fsync
    with files.RowFile(p, COLS) as w:
        w.write([1, 2, 3])

        def interrupted(fd: int) -> None:
            real(fd)
            raise KeyboardInterrupt

        monkeypatch.setattr(files.os, "fsync", interrupted)
        with pytest.raises(KeyboardInterrupt):
            w.write([4, 5, 6])
        assert (w.rows, w.written) == (2, 2)

        def failed(fd: int) -> None:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(files.os, "fsync", failed)
        with pytest.raises(files.ResultFileError, match=r"the 2 row\(s\) this run wrote "
                                                        r"there are kept, the file is whole"):
            w.write([7, 8, 9])
        assert (w.rows, w.written) == (2, 2)
        monkeypatch.setattr(files.os, "fsync", real)
        w.write([10, 11, 12])
        # The fsync and the cut both fail: the whole row stays in the file, counted.
        def cut_fails(fd: int, size: int) -> None:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(files.os, "fsync", failed)
        monkeypatch.setattr(files.os, "ftruncate", cut_fails)
        with pytest.raises(files.ResultFileError, match=r"the 4 row\(s\) this run wrote "
                                                        r"there are kept, its last row may "
                                                        r"be torn"):
            w.write([13, 14, 15])
        assert (w.rows, w.written) == (4, 4)
    assert p.read_bytes() == b"a,b,c\r\n1,2,3\r\n4,5,6\r\n10,11,12\r\n13,14,15\r\n"


def test_append_cuts_a_torn_last_row_and_says_how_many_bytes(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_bytes(b"a,b,c\r\n1,2,3\r\n4,5")
    with files.RowFile(p, COLS, files.APPEND) as w:
        assert w.repaired == (f"repaired {p}: cut a torn last row (3 bytes, from a write cut "
                              "short) before appending")
        assert (w.rows, w.written) == (1, 0)
        w.write([7, 8, 9])
    assert p.read_bytes() == b"a,b,c\r\n1,2,3\r\n7,8,9\r\n"
    with files.RowFile(p, COLS, files.APPEND) as w:  # whole: nothing cut
        assert w.repaired == "" and w.rows == 2
    assert p.read_bytes() == b"a,b,c\r\n1,2,3\r\n7,8,9\r\n"


def test_refuse_keeps_a_file_with_rows_and_takes_one_without(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_bytes(b"a,b,c\r\n1,2,3\r\n")
    with pytest.raises(ResultFileError, match=f"^{p} exists: --append adds to it, --overwrite "
                                              "replaces it, or --out writes elsewhere$"):
        files.RowFile(p, COLS)
    assert p.read_bytes() == b"a,b,c\r\n1,2,3\r\n"
    q = tmp_path / "q.csv"
    q.write_bytes(b"a,b,c\r\n")  # a header alone: nothing to lose
    with files.RowFile(q, COLS) as w:
        w.write([1, 2, 3])
    assert q.read_bytes() == b"a,b,c\r\n1,2,3\r\n"


def test_a_refused_lock_is_said_at_once(tmp_path: Path) -> None:
    """The lock is taken now, no waiting: a second writer hears of the first at once."""
    import time

    p = tmp_path / "r.csv"
    with files.RowFile(p, COLS):
        t = time.monotonic()
        with pytest.raises(ResultFileError, match="being written by another harness run"):
            files.RowFile(p, COLS, files.APPEND)
        assert time.monotonic() - t < 0.5


def test_an_overwrite_whose_header_fails_counts_no_row(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "r.csv"
    with files.RowFile(p, COLS) as w:
        w.write([1, 2, 3])
    w = files.RowFile(p, COLS, files.OVERWRITE)
    monkeypatch.setattr(files, "_write", lambda fd, data: 0)  # full at the header
    with pytest.raises(ResultFileError, match="its old rows were cut away first"):
        w.write([4, 5, 6])
    assert (w.rows, w.written) == (0, 0)
    w.close()


def test_a_writer_closes_its_own_file_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """close() twice, or after a failed open, closes no other descriptor (never stdin's 0)."""
    closed: list[int] = []
    real = os.close

    def spy(fd: int) -> None:
        closed.append(fd)
        if fd != 0:  # a wrong close of stdin is recorded, not done
            real(fd)

    w = files.RowFile(tmp_path / "r.csv", COLS)
    fd = w._fd
    monkeypatch.setattr(os, "close", spy)
    w.close()
    w.close()
    assert closed.count(fd) == 1 and 0 not in closed
    _refuse_open(monkeypatch, "s.csv")
    closed.clear()
    with pytest.raises(ResultFileError, match="Read-only file system"):
        files.RowFile(tmp_path / "s.csv", COLS)
    assert 0 not in closed


def test_new_files_take_the_usual_mode_and_replace_keeps_any(tmp_path: Path) -> None:
    """A new result file is created as any file (0o666 less the umask); a replaced one keeps
    its mode whole, execute bits included."""
    umask = os.umask(0)
    os.umask(umask)
    with files.RowFile(tmp_path / "r.csv", COLS):
        pass
    assert (tmp_path / "r.csv").stat().st_mode & 0o7777 == 0o666 & ~umask
    p = files.replace(tmp_path / "run.sh", b"#!/bin/sh\n")
    assert p == tmp_path / "run.sh" and p.stat().st_mode & 0o7777 == 0o666 & ~umask
    os.chmod(p, 0o755)
    files.replace(p, b"#!/bin/sh\necho\n")
    assert p.stat().st_mode & 0o7777 == 0o755
    assert files.edit(p, str.upper) == p and p.read_text() == "#!/BIN/SH\nECHO\n"


def test_a_write_that_lands_nothing_is_a_full_disk(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """os.write returning 0 (nothing written) is a full device, not a retry forever."""
    calls = []

    def nothing(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) > 1:
            raise RuntimeError("written again after nothing landed")
        return 0

    monkeypatch.setattr(files, "_write", nothing)
    with pytest.raises(ResultFileError, match="No space left on device; nothing was written"):
        files.replace(tmp_path / "c.json", b"{}")


def test_a_bad_existing_and_a_damaged_file_to_append_to_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bad existing 'keep'"):
        files.RowFile(tmp_path / "r.csv", COLS, "keep")
    p = tmp_path / "o.csv"
    p.write_bytes(b"x,y\r\n1,2\r\n")
    with pytest.raises(ResultFileError, match=r"o\.csv has other columns than this harness "
                                              "writes"):
        files.RowFile(p, COLS, files.APPEND)
    assert p.read_bytes() == b"x,y\r\n1,2\r\n"


def test_a_refused_open_lets_go_of_the_lock_at_once(tmp_path: Path) -> None:
    """Refused (the file exists): the lock is released before the error is raised, not when
    the half-made writer is freed (the error may be held up the stack a while)."""
    p = tmp_path / "r.csv"
    p.write_bytes(b"a,b,c\r\n1,2,3\r\n")
    with pytest.raises(ResultFileError, match="exists") as held:
        files.RowFile(p, COLS)
    lock = FileLock(files.lock_path(p.resolve()), timeout=0)
    lock.acquire()
    lock.release()
    assert held.value is not None


def test_every_row_after_a_failed_one_is_cut_back_to_its_start(tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                 monkeypatch) -> None:
    """A row cut away (its fsync failed) moves the end back: a later failure cuts to the
    last whole row, not past it."""
    p = tmp_path / "r.csv"
    real = os.fsync
    fail = [False]

    def fsync(fd: int) -> None:
        if fail[0]:
            raise OSError(5, "Input/output error")
        real(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    with files.RowFile(p, COLS) as w:
        w.write([1, 2, 3])
        fail[0] = True
        with pytest.raises(ResultFileError, match="the file is whole"):
            w.write(["long", "row", "x" * 40])
        fail[0] = False
        w.write([4, 5, 6])
        fail[0] = True
        with pytest.raises(ResultFileError, match="the file is whole"):
            w.write([7, 8, 9])
    assert p.read_bytes() == b"a,b,c\r\n1,2,3\r\n4,5,6\r\n"


def test_a_replaced_file_is_synced_written_in_pieces_and_leaves_no_descriptor(
        tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Short writes (a byte at a time) are carried on; the data is synced before the
    rename; nothing stays open."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("no /proc/self/fd here")
    synced: list[int] = []
    real_sync = os.fsync
    monkeypatch.setattr(files, "_write", lambda fd, data: os.write(fd, bytes(data[:1])))
    monkeypatch.setattr(files.os, "fsync", lambda fd: (synced.append(fd), real_sync(fd)))
    before = len(list(fds.iterdir()))
    p = files.replace(tmp_path / "c.json", b'{"gbps": 1}')
    assert p.read_bytes() == b'{"gbps": 1}' and len(synced) == 1
    assert len(list(fds.iterdir())) == before


def test_a_row_that_cannot_be_encoded_cuts_nothing_it_would_replace(tmp_path: Path) -> None:
    """--overwrite cuts the old rows at the first new one: a row UTF-8 cannot hold is found
    before the cut, one line, and the old rows stay."""
    p = tmp_path / "s.csv"
    first = files.RowFile(p, ("a", "b"))
    first.write(("1", "2"))
    first.close()
    before = p.read_bytes()
    w = files.RowFile(p, ("a", "b"), files.OVERWRITE)
    try:
        with pytest.raises(ResultFileError, match=r"a value is not text UTF-8 can hold "
                                                        r"\('\\udcff'\); the file is as it was"):
            w.write(("1", "n_\udcff"))
    finally:
        w.close()
    assert p.read_bytes() == before


def test_an_output_folder_that_cannot_be_reached_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder above --out that may not be searched: Path.exists raises there, and that is
    one line, not a traceback."""

    def denied(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "exists", denied)
    with pytest.raises(ResultFileError, match=r"cannot reach .*sub: Permission denied; "
                                              r"nothing was written"):
        files.folder(tmp_path / "sub")
    monkeypatch.undo()
    monkeypatch.setattr(Path, "is_dir", denied)
    with pytest.raises(ResultFileError, match=r"cannot reach .*s.csv: Permission denied"):
        files.inside(tmp_path / "s.csv", tmp_path)
