"""Result files through the CLI: never corrupted, never silently lost.

Real processes where it matters: two ``harness bench`` runs started together on one
output, fifty SIGTERMs at random moments, a full disk (a 4 KiB tmpfs) and a read-only bind
mount. The last two need a private mount namespace (``unshare -rm``, as CI's root has):
chmod is no barrier to root, so without one the read-only case uses sysfs, which refuses
new files to root too.
"""

from __future__ import annotations

import concurrent.futures
import csv
import errno
import io
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock
from typer.testing import CliRunner

from harness.front.cli import app
from harness.results import files
from harness.results import rows as results

runner = CliRunner()
#: A quick numpy sweep: 2 variants x batch 1..256, 18 rows in about half a second.
QUICK = ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep", "batch=1..256",
         "--sweep", "in_f=8", "--variant", "all", "--budget", "0.01"]
#: The same to batch 4096: 26 rows, more than 4 KiB.
LONGER = [*QUICK[:5], "batch=1..4096", *QUICK[6:]]


def harness(*args: str) -> list[str]:
    """The command line of a ``harness`` child process."""
    return [sys.executable, "-m", "harness", *args]


def whole(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV that must be whole: the harness's header, every row of its field
    count, the file ending on a line end."""
    data = path.read_bytes()
    assert data.endswith(b"\r\n"), data[-80:]
    table = list(csv.reader(io.StringIO(data.decode("utf-8"), newline=""), strict=True))
    assert tuple(table[0]) == results.COLUMNS
    assert all(len(r) == len(results.COLUMNS) for r in table[1:]), path
    return [dict(zip(results.COLUMNS, r, strict=True)) for r in table[1:]]


def error_line(res, text: str, code: int = 2) -> None:  # type: ignore[no-untyped-def]
    """The command failed with ``code`` and one ``error:`` line holding ``text``."""
    assert res.exit_code == code, res.output
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and text in errors[0], res.stderr
    assert "Traceback" not in res.output


def bench(out: Path, *extra: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [*QUICK, "--out", str(out), *extra])


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """A folder holding one finished quick sweep."""
    res = bench(tmp_path)
    assert res.exit_code == 0, res.output
    assert len(whole(tmp_path / "dynamic_spikes.csv")) == 18
    return tmp_path


def test_an_existing_csv_is_replaced_only_on_request(sweep: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    p = sweep / "dynamic_spikes.csv"
    before = p.read_bytes()
    from harness.engine import bench as benches

    def never(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("measured before refusing")

    with monkeypatch.context() as m:
        m.setattr(benches, "measure", never)
        error_line(bench(sweep), f"{p} exists: --append adds to it, --overwrite replaces it, "
                   "or --out writes elsewhere")
        error_line(bench(sweep, "--append", "--overwrite"),
                   "--append and --overwrite exclude each other")
    assert p.read_bytes() == before
    assert bench(sweep, "--overwrite").exit_code == 0
    assert len(whole(p)) == 18 and p.read_bytes() != before  # replaced, not added to
    assert bench(sweep, "--append").exit_code == 0
    assert len(whole(p)) == 36


def test_a_torn_last_row_is_cut_then_appended_to(sweep: Path) -> None:
    p = sweep / "dynamic_spikes.csv"
    data = p.read_bytes()
    # A whole row saved without its line end (and a write cut inside an unquoted last cell
    # looks the same): every field there, no line end. Refused, the file as it was.
    assert data.endswith(b"\r\n")
    p.write_bytes(data[:-2])
    res = bench(sweep, "--append")
    assert res.exit_code == 2 and "its last row has every field but no line end" in res.output
    assert p.read_bytes() == data[:-2]
    last = data.rstrip(b"\r\n").rindex(b"\n") + 1
    p.write_bytes(data[:last + 30])  # a write cut short: the last row torn, fields missing
    res = bench(sweep, "--append")
    assert res.exit_code == 0, res.output
    assert f"warning: repaired {p}: cut a torn last row (" in res.stderr
    rows = whole(p)
    assert len(rows) == 17 + 18 and rows[16]["batch"] == "128" and rows[17]["batch"] == "1"


def test_out_on_a_file_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("x")
    error_line(bench(f), f"--out {f} is a file: it takes a folder")
    assert f.read_text() == "x"


def test_out_where_no_folder_can_be_made_is_one_line() -> None:
    error_line(bench(Path("/proc/harness-out")), "cannot create the folder /proc/harness-out: "
               "No such file or directory; nothing was written")


def test_no_symlink_is_followed_out_of_the_folder(tmp_path: Path) -> None:
    out, away = tmp_path / "out", tmp_path / "away.csv"
    out.mkdir()
    away.write_text("precious\n")
    (out / "dynamic_spikes.csv").symlink_to(away)
    error_line(bench(out, "--overwrite"), f"{out}/dynamic_spikes.csv is a symlink leading out "
               f"of {out}")
    assert away.read_text() == "precious\n"


def _sysfs_refuses() -> bool:
    """Whether /sys/kernel refuses a new file (sysfs does, to root too)."""
    try:
        os.close(os.open("/sys/kernel/.harness-probe", os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        return Path("/sys/kernel").is_dir()
    os.unlink("/sys/kernel/.harness-probe")
    return False


@pytest.mark.skipif(not _sysfs_refuses(), reason="no sysfs folder that refuses new files")
def test_a_folder_that_refuses_files_is_one_line() -> None:
    """chmod does not stop root (CI's user); sysfs refuses new files to root too."""
    error_line(bench(Path("/sys/kernel")), "cannot write in /sys/kernel: ")


def _namespaced(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``script`` (sh, ``$1``... = ``args``) as root of a private mount namespace."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True, check=False).returncode:
        pytest.skip("no private mount namespace (unshare -rm) here")
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_read_only_file_system_is_one_line(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    res = _namespaced('ro=$1; shift; mount --bind "$ro" "$ro" && '
                      'mount -o remount,bind,ro "$ro" && exec "$@"',
                      str(ro), *harness(*QUICK, "--out", str(ro)))
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines()[-1] == (f"error: cannot write in {ro}: Read-only file "
                                           "system; nothing was written")


def test_a_full_disk_keeps_every_whole_row(tmp_path: Path) -> None:
    """A real full disk: a 4 KiB tmpfs holds the header and about ten rows; the row that
    does not fit is cut back off and the one line says how many were kept."""
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    res = _namespaced('disk=$1; kept=$2; shift 2; '
                      'mount -t tmpfs -o size=4k tmpfs "$disk" || exit 99; '
                      '"$@"; rc=$?; cp "$disk/dynamic_spikes.csv" "$kept/"; exit $rc',
                      str(disk), str(kept), *harness(*LONGER, "--out", str(disk)))
    assert res.returncode == 2, res.stderr
    last = res.stderr.splitlines()[-1]
    m = re.fullmatch(rf"error: cannot write a row to {disk}/dynamic_spikes.csv: No space left "
                     r"on device; the (\d+) row\(s\) this run wrote there are kept, the file "
                     "is whole", last)
    assert m, last
    rows = whole(kept / "dynamic_spikes.csv")
    assert len(rows) == int(m.group(1)) > 3


def test_a_full_disk_mid_sweep_in_process(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same with the disk full after three rows (the writer's write made to fail)."""
    calls = 0
    real = os.write

    def filling(fd: int, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls > 4:  # the header and three rows fit
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(files, "_write", filling)
    error_line(bench(tmp_path), "No space left on device; the 3 row(s) this run wrote there "
               "are kept, the file is whole")
    assert len(whole(tmp_path / "dynamic_spikes.csv")) == 3


def test_a_held_lock_is_one_line_naming_the_file(tmp_path: Path) -> None:
    p = tmp_path / "dynamic_spikes.csv"
    with FileLock(files.lock_path(p), timeout=0):
        error_line(bench(tmp_path, "--append"),
                   f"{p} is being written by another harness run")
    assert not p.exists()


def test_two_runs_started_together(tmp_path: Path) -> None:
    """One gets the lock error, the other's CSV is whole (its sweep takes ~3 s, so the
    two overlap)."""
    cmd = harness("bench", "dynamic_spikes", "--backend", "numpy", "--sweep",
                  "batch=16..1024", "--sweep", "in_f=512", "--budget", "0.5", "--out",
                  str(tmp_path))
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append((proc.returncode, out, err))
    assert sorted(code for code, _, _ in done) == [0, 2], done
    _, _, lost = next(d for d in done if d[0] == 2)
    p = tmp_path / "dynamic_spikes.csv"
    assert lost.splitlines()[-1] == (f"error: {p} is being written by another harness run: "
                                     "wait for it to finish, or write elsewhere")
    rows = whole(p)
    assert [r["batch"] for r in rows] == ["16", "32", "64", "128", "256", "512", "1024"]


def _first_row(path: Path, size: int, child: subprocess.Popen[str]) -> None:
    """Wait until the child has written its first row (the file grew past ``size``)."""
    while child.poll() is None and (not path.exists() or path.stat().st_size <= size):
        time.sleep(0.002)


#: The sweep the SIGTERM test interrupts: 22 rows, about a second with the start-up.
SIGNALLED = ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep", "batch=1..1024",
             "--sweep", "in_f=64", "--variant", "all", "--budget", "0.03"]
ROWS_A_RUN = 22


def _sigterms(folder: Path, n: int, seed: int, length: float, span: float) -> int:
    """``n`` children appending to ``folder``'s CSV, each sent SIGTERM at a random moment:
    every other one at any moment of a run's ``length``, the rest at one inside the sweep
    (within the first 80 % of the ``span`` from a run's first row to its end). After each
    the CSV is whole and holds every row the child said it finished (one more at most:
    written, then stopped before it was counted). Returns how many were stopped
    mid-sweep."""
    rng = random.Random(seed)
    p = folder / "dynamic_spikes.csv"
    cmd = harness(*SIGNALLED, "--out", str(folder), "--append")
    have = mid_sweep = 0
    for i in range(n):
        size = p.stat().st_size if p.exists() else 0
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        if i % 2:
            _first_row(p, size, child)
            time.sleep(rng.uniform(0.0, 0.8 * span))
        else:
            time.sleep(rng.uniform(0.0, length))
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
        rows = whole(p) if p.exists() else []
        added = len(rows) - have
        if child.returncode == 143:
            # (the progress bar may leave no newline before the line)
            m = re.search(r"interrupted: (\d+) finished row\(s\) kept in ", err)
            if m:  # stopped mid-sweep
                finished = int(m.group(1))
                assert finished <= added <= finished + 1, (finished, added, err)
                mid_sweep += 0 < finished < ROWS_A_RUN
            else:  # stopped before the sweep began or after it ended
                assert "interrupted (SIGTERM): stopped; every file written so far is " \
                    "whole" in err and added in (0, ROWS_A_RUN), (added, err)
        elif child.returncode == 0:  # the sweep finished before the signal
            assert added == ROWS_A_RUN and f"wrote {ROWS_A_RUN} row(s)" in out
        else:  # killed before the command started (still importing: nothing touched) or
            # after it ended (every row written): the default action, a status of 143 too
            assert child.returncode == -signal.SIGTERM and added in (0, ROWS_A_RUN), \
                (child.returncode, added, err)
        assert "Traceback" not in err, err
        have = len(rows)
    return mid_sweep


def test_fifty_sigterms_keep_every_finished_row(tmp_path: Path) -> None:
    """Fifty children, in two lanes of 25 run side by side (each lane appending to its own
    CSV, so that the test keeps under a minute on two cores)."""
    # A run timed as the lanes will run it: the whole run, and the sweep from its first row
    # (on a loaded machine the start-up can be most of it: the mid-sweep signals aim at the
    # sweep's own span).
    timed = tmp_path / "timed"
    started = time.monotonic()
    child = subprocess.Popen(harness(*SIGNALLED, "--out", str(timed)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _first_row(timed / "dynamic_spikes.csv", 0, child)
    first = time.monotonic()
    assert child.wait(timeout=120) == 0
    length, span = time.monotonic() - started, time.monotonic() - first
    lanes = [tmp_path / "a", tmp_path / "b"]
    with concurrent.futures.ThreadPoolExecutor(len(lanes)) as pool:
        stopped = list(pool.map(lambda ab: _sigterms(ab[1], 25, ab[0], length, span),
                                enumerate(lanes)))
    assert sum(stopped) >= 10, stopped  # the signals did land mid-sweep


def test_validate_record_takes_the_ledger_before_the_gpu(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.results import ledger

    book = tmp_path / "ledger.csv"
    monkeypatch.setattr(ledger, "default_path", lambda: book)
    monkeypatch.setattr(ledger, "APPEND_WAIT", 0.05)  # what an append waits for another's
    with FileLock(files.lock_path(book), timeout=0):
        error_line(runner.invoke(app, ["validate", "dynamic_spikes", "--record"]),
                   f"{book} is being written by another harness run (still after 0.05 s)")


@pytest.mark.parametrize("failed", [False, True])
def test_rows_left_out_of_the_ledger_are_one_line(monkeypatch, failed: bool) -> None:  # type: ignore[no-untyped-def]
    """A validation whose ledger appends failed draws its table and ends with one line
    naming the rows left out, exit status 2; where a case failed too, that failure ends it
    (exit 1) and the rows left out are still said, as a warning."""
    from harness.engine import validate
    from harness.engine.validate import CaseResult, ValidationReport, ValidationSummary

    case = CaseResult("dynamic_spikes", "default", "normal", 0, {}, (),
                      ("wrong",) if failed else ())
    summary = ValidationSummary("dynamic_spikes", "default", "abc", ["normal"], [case])
    left = "ledger.csv is being written by another harness run; not recorded: x [y]"
    rep = ValidationReport([summary], Path("ledger.csv"), "", 0, "", left)
    monkeypatch.setattr(validate, "validate_targets", lambda *a, **k: rep)
    res = runner.invoke(app, ["validate", "dynamic_spikes", "--record"])
    if failed:
        assert res.exit_code == 1 and f"warning: {left}" in res.stderr.replace("\n", " ")
    else:
        error_line(res, left)


def test_sanitize_keeps_an_existing_summary(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.tools import sanitize as tool

    monkeypatch.setattr(tool, "find", lambda: "compute-sanitizer")
    monkeypatch.setattr(tool, "run", lambda t, st, v, family, device: tool.Outcome(
        st.name, v.name, t, 8, 0, 0, 0, ""))
    summary = tmp_path / "sanitizer.csv"
    args = ["sanitize", "dynamic_spikes", "--tool", "memcheck", "--out", str(summary)]
    assert runner.invoke(app, args).exit_code == 0
    before = summary.read_bytes()
    error_line(runner.invoke(app, args), f"{summary} exists: --append adds to it")
    assert summary.read_bytes() == before
    assert runner.invoke(app, [*args, "--append"]).exit_code == 0
    assert len(results.read_rows(summary)) == 4  # two variants, twice
    assert runner.invoke(app, [*args, "--overwrite"]).exit_code == 0
    assert len(results.read_rows(summary)) == 2
    error_line(runner.invoke(app, [*args[:-1], str(tmp_path)]), "is a folder, not a file")


def test_report_checks_the_readme_before_drawing(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    folder = tmp_path / "results"
    folder.mkdir()
    error_line(runner.invoke(app, ["report", str(folder), "--readme",
                                   str(tmp_path / "README.md")]), "no such README")
    assert not (folder / "plots").exists()
