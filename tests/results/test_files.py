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


def test_a_read_only_place_is_one_line(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real_open = os.open

    def refuse(path, flags, *a):  # type: ignore[no-untyped-def]
        if str(path).endswith("r.csv"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real_open(path, flags, *a)

    monkeypatch.setattr(os, "open", refuse)
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
