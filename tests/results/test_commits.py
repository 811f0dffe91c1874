"""The rows' commits against the history: found, missing, listed as untraced, stale entries,
and the trees that cannot answer (no history, a shallow clone)."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import paths
from harness.errors import BadInput
from harness.front.cli import app
from harness.results import commits
from tests.gitrepo import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git here")
ROOT = Path(__file__).parents[2]


def _repo(root: Path) -> list[str]:
    """A repository of two commits on main and one on a branch that is then deleted:
    returns [first, second, lost] full hashes."""
    git(root, "init", "-q", "-b", "main")
    shas = []
    for name in ("a", "b"):
        (root / name).write_text(name)
        git(root, "add", name)
        git(root, "commit", "-q", "-m", name)
        shas.append(git(root, "rev-parse", "HEAD"))
    git(root, "checkout", "-q", "-b", "side")
    (root / "c").write_text("c")
    git(root, "add", "c")
    git(root, "commit", "-q", "-m", "c")
    shas.append(git(root, "rev-parse", "HEAD"))
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-q", "-D", "side")
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    return shas


def _rows(path: Path, shas: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["stage", "median_us", "git_sha"])
        for s in shas:
            w.writerow(["x", "1.0", s])


def _untraced(path: Path, entries: list[tuple[str, str]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["git_sha", "reason"])
        w.writerows(entries)


def test_rows_commits_found_abbreviated_dirty_and_missing(tmp_path: Path) -> None:
    """A full hash, an abbreviated one and a ``-dirty`` one of history's commits are held;
    the deleted branch's commit and a mistyped one are missing, and the check fails on
    them; a run's logs are not result rows."""
    first, second, lost = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "gpu" / "stage.csv", [first, second[:7], second[:12] + "-dirty"])
    _rows(stats / "gpu" / "tuning" / "t.csv", [lost, "0123abc", "not-a-sha", first[:4]])
    _rows(stats / "gpu" / "logs" / "abc" / "copy.csv", ["deadbeef"])
    rep = commits.check([stats], stats / commits.UNTRACED_FILE, tmp_path)
    assert set(rep.named) == {first, second[:7], second[:12] + "-dirty", lost, "0123abc",
                              "not-a-sha", first[:4]}
    # Four digits are too few to trust (a mistyped short sha may match by chance).
    assert set(rep.missing) == {lost, "0123abc", "not-a-sha", first[:4]}
    assert rep.named[lost] == (stats / "gpu" / "tuning",)
    assert "4 commit(s)" in rep.failure and lost in rep.failure


def test_rows_without_a_commit_fail_and_files_without_the_column_are_listed(
        tmp_path: Path) -> None:
    """A row with an empty git_sha is traced to nothing: the check fails; a CSV with no
    git_sha column (an external tool's page) is listed, not judged; a file named directly
    must be a results CSV (the untraced list cannot vouch for itself)."""
    first, _, _ = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "s.csv", [first, "", ""])
    (stats / "page.csv").write_text("ID,Kernel Name\n1,k\n")
    rep = commits.check([stats], stats / commits.UNTRACED_FILE, tmp_path)
    assert rep.blank_rows == {stats / "s.csv": 2} and "2 row(s) with no git_sha" in rep.failure
    assert rep.unnamed_files == (stats / "page.csv",)
    _untraced(stats / commits.UNTRACED_FILE, [("abcdef1", "x")])
    for bad in (stats / commits.UNTRACED_FILE, tmp_path / "a"):
        with pytest.raises(BadInput, match="not a results CSV"):
            commits.check([bad], stats / commits.UNTRACED_FILE, tmp_path)


def test_a_results_csv_without_the_column_fails_the_check(tmp_path: Path) -> None:
    """Rows with the marks of the harness's (stage, backend, a time) in a file with no
    git_sha column are traced to nothing: the check fails on them; ncu's page does not."""
    first, _, _ = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "s.csv", [first])
    (stats / "page.csv").write_text("ID,Kernel Name\n1,k\n")
    rep = commits.check([stats], stats / commits.UNTRACED_FILE, tmp_path)
    assert rep.failure == ""
    (stats / "lost.csv").write_text("stage,backend,median_us\nx,pycuda,1.0\n")
    rep = commits.check([stats], stats / commits.UNTRACED_FILE, tmp_path)
    assert rep.unnamed_results == (stats / "lost.csv",)
    assert rep.failure == f"1 results CSV(s) with no git_sha column: {stats / 'lost.csv'}"


@pytest.mark.parametrize("kind", ["folder", "broken link", "looping link", "pipe"])
def test_a_csv_that_is_no_regular_file_is_bad_input(tmp_path: Path, kind: str) -> None:
    """A ``*.csv`` entry that is a folder, a link to nothing or to itself, or a pipe (whose
    read would wait forever) is one line, never a traceback, a hang or no rows."""
    import os

    first, _, _ = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "s.csv", [first])
    odd = stats / "sub" / "odd.csv"
    odd.parent.mkdir()
    if kind == "folder":
        odd.mkdir()
    elif kind == "broken link":
        odd.symlink_to(tmp_path / "nothing")
    elif kind == "looping link":
        odd.symlink_to(odd)
    else:
        os.mkfifo(odd)
    with pytest.raises(BadInput, match=re.escape(f"{odd}: ")):
        commits.check([stats], stats / commits.UNTRACED_FILE, tmp_path)


def test_a_folder_that_cannot_be_listed_is_said_not_read_as_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the walk cannot list (its mode, as any user but root meets it: the listing
    is refused here by a stand-in, since root lists any folder) is one line naming it, not
    a folder of no rows that lets --check pass."""
    import os

    first, _, _ = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "closed" / "s.csv", [first])
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "closed":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(BadInput, match=r"cannot read the folder .*closed: Permission denied"):
        commits.check([stats], stats / commits.UNTRACED_FILE, tmp_path)


def test_listed_commits_pass_and_stale_entries_fail(tmp_path: Path) -> None:
    """A missing commit listed with its reason passes; an entry the history holds, or that
    no row names, is stale and fails the check."""
    first, _, lost = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "s.csv", [first, lost])
    listed = stats / commits.UNTRACED_FILE
    _untraced(listed, [(lost, "the branch did not survive")])
    rep = commits.check([stats], listed, tmp_path)
    assert rep.failure == "" and not rep.missing
    assert rep.untraced == (commits.UntracedCommit(lost, "the branch did not survive"),)
    _untraced(listed, [(lost, "gone"), (first, "wrongly listed"), ("abcdef1", "no row")])
    rep = commits.check([stats], listed, tmp_path)
    assert [c.git_sha for c in rep.stale] == [first, "abcdef1"]
    assert "2 stale" in rep.failure
    # A narrower check judges the list against every row under its folder: the lost
    # commit's entry is not stale for a folder whose rows do not name it.
    _untraced(listed, [(lost, "gone")])
    _rows(stats / "other" / "o.csv", [first])
    rep = commits.check([stats / "other"], listed, tmp_path)
    assert rep.failure == "" and rep.stale == ()


@pytest.mark.parametrize("text, message", [
    ("sha,why\nabc,x\n", "columns must be git_sha,reason"),
    ("git_sha,reason\nabc1234,\n", "needs a git_sha and a reason"),
    ("git_sha,reason\nabc1234,x\nabc1234,y\n", "abc1234 listed twice"),
    ("git_sha,reason\nabc1234,\xff\n", "not a readable CSV"),
])
def test_a_malformed_list_is_bad_input(tmp_path: Path, text: str, message: str) -> None:
    _repo(tmp_path)
    listed = tmp_path / commits.UNTRACED_FILE
    listed.write_bytes(text.encode("latin-1"))
    with pytest.raises(BadInput, match=message):
        commits.check([tmp_path], listed, tmp_path)


def test_no_history_and_a_shallow_clone_cannot_answer(tmp_path: Path) -> None:
    """A tree without git, or a shallow clone (its history cut short: every older commit
    would read as missing), is bad input, never a pass."""
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(BadInput, match="no git history"):
        commits.history(bare)
    src = tmp_path / "src"
    src.mkdir()
    _repo(src)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{src}", str(shallow)],
                   check=True, capture_output=True)
    with pytest.raises(BadInput, match="shallow clone"):
        commits.history(shallow)


def test_the_cli_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`harness commits --check` exits 1 naming the missing commit, 0 once it is listed; a
    folder that is not there is one line and exit 2."""
    first, _, lost = _repo(tmp_path)
    stats = tmp_path / "statistics"
    _rows(stats / "s.csv", [first, lost])
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    monkeypatch.setattr(paths, "statistics_dir", lambda: stats)
    runner = CliRunner()
    res = runner.invoke(app, ["commits", "--check"])
    assert res.exit_code == 1 and lost in res.output, res.output
    _untraced(stats / commits.UNTRACED_FILE, [(lost, "the branch did not survive")])
    res = runner.invoke(app, ["commits", "--check"])
    assert res.exit_code == 0 and "1 listed as untraced, 0 missing" in res.stdout, res.output
    res = runner.invoke(app, ["commits", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "no such results folder" in res.stderr


def test_this_repository_s_rows_name_commits_it_holds_or_lists() -> None:
    """The project's own statistics: every row's commit is in this clone's history or in
    the untraced list, with no stale entry (skipped where the checkout has no history)."""
    try:
        commits.history(ROOT)
    except BadInput as e:
        pytest.skip(f"this checkout cannot answer: {e}")
    stats = ROOT / "statistics"
    rep = commits.check([stats], stats / commits.UNTRACED_FILE, ROOT)
    assert rep.failure == "", rep.failure
