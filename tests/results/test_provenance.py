"""Provenance: the commit, the time, the command, and the columns every row carries."""

from __future__ import annotations

import os
import re

import pytest

from harness.results import provenance
from tests.gitrepo import git


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
    git(tmp_path, "init", "-q")
    assert provenance.git_sha() == "unknown"  # a repository without a commit
    (tmp_path / "f.txt").write_text("a\n")
    git(tmp_path, "add", "f.txt")
    git(tmp_path, "commit", "-q", "-m", "x")
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



def test_a_sent_commit_is_dirty_where_the_sources_here_differ(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With HARNESS_GIT_TREE given, the sha as given where the sources here are the sent
    commit's, ``<sha>-dirty`` where they are not (never ``-dirty-dirty``); without it, the
    sha as given."""
    from harness import paths
    from harness.results import sent_tree

    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.cu").write_text("k\n")
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    monkeypatch.setenv("HARNESS_GIT_SHA", "ab" * 20)
    monkeypatch.setenv("HARNESS_GIT_TREE", sent_tree.tree_digest(tmp_path))
    assert provenance.git_sha() == "ab" * 20
    (tmp_path / "kernels" / "k.cu").write_text("changed\n")
    assert provenance.git_sha() == f"{'ab' * 20}-dirty"
    monkeypatch.setenv("HARNESS_GIT_SHA", "cd" * 20 + "-dirty")
    assert provenance.git_sha() == "cd" * 20 + "-dirty"
    monkeypatch.delenv("HARNESS_GIT_TREE")
    monkeypatch.setenv("HARNESS_GIT_SHA", "ab" * 20)
    assert provenance.git_sha() == "ab" * 20


def test_a_source_unreadable_here_makes_a_sent_commit_dirty(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Row provenance never stops a run: a tree that cannot be digested is not known to be
    the commit's, so its rows say ``-dirty``."""
    from harness import paths
    from harness.errors import BadInput
    from harness.results import sent_tree

    def unreadable(root):  # type: ignore[no-untyped-def]
        raise BadInput("cannot read")

    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    monkeypatch.setattr(sent_tree, "tree_digest", unreadable)
    monkeypatch.setenv("HARNESS_GIT_SHA", "ab" * 20)
    monkeypatch.setenv("HARNESS_GIT_TREE", "0123456789abcdef")
    assert provenance.git_sha() == f"{'ab' * 20}-dirty"
