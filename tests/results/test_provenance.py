"""Provenance: the commit, the time, the command, and the columns every row carries."""

from __future__ import annotations

import os
import re

import pytest

from harness.results import provenance


def test_git_sha_can_be_given(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_GIT_SHA", "0123456789ab")
    assert provenance.git_sha() == "0123456789ab"


def test_run_meta_columns() -> None:
    m = provenance.RunMeta(gpu="G", driver="d", cuda="c", git_sha="s", command="harness x",
                           peak_gbps=1.0)
    cols = m.columns()
    assert {k: cols[k] for k in ("gpu", "driver", "cuda", "git_sha", "command")} == {
        "gpu": "G", "driver": "d", "cuda": "c", "git_sha": "s", "command": "harness x"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", cols["timestamp"])
    assert "peak_gbps" not in cols  # a stage row's own column, not provenance


def _git(root, *args: str) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def test_git_sha_is_the_short_commit_dirty_when_a_tracked_file_changed(
        tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Twelve hex digits of HEAD, ``-dirty`` when a tracked file changed (an untracked one
    does not count); no repository (or no git) is ``unknown``."""
    import shutil

    import pytest

    from harness import paths

    if shutil.which("git") is None:
        pytest.skip("no git here")
    monkeypatch.delenv("HARNESS_GIT_SHA", raising=False)
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    assert provenance.git_sha() == "unknown"  # no repository yet
    _git(tmp_path, "init", "-q")
    assert provenance.git_sha() == "unknown"  # a repository without a commit
    (tmp_path / "f.txt").write_text("a\n")
    _git(tmp_path, "add", "f.txt")
    _git(tmp_path, "commit", "-q", "-m", "x")
    clean = provenance.git_sha()
    assert re.fullmatch(r"[0-9a-f]{12}", clean), clean
    (tmp_path / "new.txt").write_text("untracked\n")
    assert provenance.git_sha() == clean
    (tmp_path / "f.txt").write_text("b\n")
    assert provenance.git_sha() == f"{clean}-dirty"


def test_the_command_line_reads_as_typed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The entry point (a path ending /harness, or ``python -m harness``'s __main__.py)
    reads ``harness``; anything else is kept; each word quoted as a shell needs it."""
    monkeypatch.setattr("sys.argv", ["/venv/bin/harness", "bench", "s", "--define", "A=1 2"])
    assert provenance.command_line() == "harness bench s --define 'A=1 2'"
    monkeypatch.setattr("sys.argv", ["/x/harness/__main__.py", "report"])
    assert provenance.command_line() == "harness report"
    monkeypatch.setattr("sys.argv", ["pytest", "-q"])
    assert provenance.command_line() == "pytest -q"
    monkeypatch.setattr("sys.argv", [])
    assert provenance.command_line() == ""


def test_an_argument_not_in_utf8_is_written_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder named in another encoding reaches Python as lone surrogates, which no UTF-8
    CSV can hold: the command cell escapes those bytes instead of failing the row."""
    monkeypatch.setattr(provenance.sys, "argv",
                        ["/x/bin/harness", "bench", "--out", os.fsdecode(b"/tmp/n_\xff")])
    line = provenance.command_line()
    assert line == "harness bench --out '/tmp/n_\\xff'"
    line.encode("utf-8")


def _sources(root, kernel: str = "k\n") -> None:  # type: ignore[no-untyped-def]
    """A tiny project: one file in each source folder, and files the digest leaves out."""
    for rel, text in (("harness/a.py", "a = 1\n"), ("plugins/p.py", "p = 2\n"),
                      ("kernels/k.cu", kernel), ("kernels/common/h.cuh", "h\n"),
                      ("kernels/NOTES.md", "notes\n"), ("README.md", "readme\n")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_tree_digest_covers_the_sources_and_nothing_else(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A kernel, a header, a plugin or the harness changed moves the digest; notes, the
    README and Python's caches do not."""
    _sources(tmp_path)
    d = provenance.tree_digest(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{16}", d)
    (tmp_path / "kernels/NOTES.md").write_text("more notes\n")
    (tmp_path / "README.md").write_text("more\n")
    (tmp_path / "harness/__pycache__").mkdir()
    (tmp_path / "harness/__pycache__/a.py").write_text("cache\n")
    assert provenance.tree_digest(tmp_path) == d
    for rel in ("kernels/k.cu", "kernels/common/h.cuh", "plugins/p.py", "harness/a.py"):
        before = (tmp_path / rel).read_text()
        (tmp_path / rel).write_text(before + " ")
        assert provenance.tree_digest(tmp_path) != d, rel
        (tmp_path / rel).write_text(before)
    (tmp_path / "plugins/new.py").write_text("")  # a new source file counts too
    assert provenance.tree_digest(tmp_path) != d


def test_a_stamp_is_the_commit_and_its_sources_and_says_dirty(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The stamp's digest is the commit's sources read from git, equal to the tree's on disk
    when nothing changed; a changed kernel makes it dirty, and rows run from that tree
    under the stamp name ``<sha>-dirty``, while the stamped tree's rows name the sha."""
    import shutil

    from harness import paths
    from harness.errors import BadInput

    if shutil.which("git") is None:
        pytest.skip("no git here")
    with pytest.raises(BadInput, match="not a git checkout"):
        provenance.stamp(tmp_path)
    _sources(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "x")
    st, path = provenance.write_stamp(tmp_path)
    assert path == tmp_path / provenance.STAMP_FILE
    assert re.fullmatch(r"[0-9a-f]{40}", st.sha) and not st.dirty
    assert st.tree == provenance.tree_digest(tmp_path)
    assert path.read_text() == f"HARNESS_GIT_SHA={st.sha}\nHARNESS_GIT_TREE={st.tree}\n"
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    monkeypatch.setenv("HARNESS_GIT_SHA", st.sha)
    monkeypatch.setenv("HARNESS_GIT_TREE", st.tree)
    assert provenance.git_sha() == st.sha
    (tmp_path / "kernels/k.cu").write_text("changed after the stamp\n")
    assert provenance.git_sha() == f"{st.sha}-dirty"
    assert provenance.stamp(tmp_path).dirty
    assert provenance.stamp(tmp_path).tree == st.tree  # the commit's, not the disk's
    monkeypatch.delenv("HARNESS_GIT_TREE")  # no digest given: the sha as given
    assert provenance.git_sha() == st.sha


def test_a_stamp_that_cannot_be_written_is_bad_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from harness.errors import BadInput

    if shutil.which("git") is None:
        pytest.skip("no git here")
    _sources(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "x")
    with pytest.raises(BadInput, match="cannot write"):
        provenance.write_stamp(tmp_path, tmp_path / "no" / "such" / "dir" / "f")
