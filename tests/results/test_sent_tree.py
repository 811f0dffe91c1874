"""The tree sent to a GPU machine: the digest of its sources, here and from git, and the
stamp that carries the commit and the digest there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.errors import BadInput
from harness.results import sent_tree
from tests.gitrepo import commit_all

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git here")


def _sources(root: Path) -> None:
    """A tiny project: one file in each source folder, and files the digest leaves out."""
    for rel, text in (("harness/a.py", "a = 1\n"), ("plugins/p.py", "p = 2\n"),
                      ("kernels/k.cu", "k\n"), ("kernels/common/h.cuh", "h\n"),
                      ("kernels/NOTES.md", "notes\n"), ("README.md", "readme\n")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _repo(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny project committed in a repository of its own (git looks no higher)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))
    _sources(root)
    commit_all(root)


def test_the_digest_covers_the_sources_and_nothing_else(tmp_path: Path) -> None:
    """A kernel, a header, a plugin or the harness changed, or a source added, moves the
    digest; notes, the README and Python's caches do not."""
    _sources(tmp_path)
    d = sent_tree.tree_digest(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{16}", d)
    (tmp_path / "kernels/NOTES.md").write_text("more notes\n")
    (tmp_path / "README.md").write_text("more\n")
    (tmp_path / "harness/__pycache__").mkdir()
    (tmp_path / "harness/__pycache__/a.py").write_text("cache\n")
    assert sent_tree.tree_digest(tmp_path) == d
    for rel in ("kernels/k.cu", "kernels/common/h.cuh", "plugins/p.py", "harness/a.py"):
        before = (tmp_path / rel).read_text()
        (tmp_path / rel).write_text(before + " ")
        assert sent_tree.tree_digest(tmp_path) != d, rel
        (tmp_path / rel).write_text(before)
    assert sent_tree.tree_digest(tmp_path) == d
    (tmp_path / "plugins/new.py").write_text("")
    assert sent_tree.tree_digest(tmp_path) != d


@needs_git
def test_a_stamp_is_the_commit_its_digest_and_what_differs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp's digest is the commit's sources read from git, the same as the clean
    tree's on disk; a changed kernel, or a new untracked source (it would travel), makes
    it dirty and is named; an ignored one (it would not travel) does not."""
    _repo(tmp_path, monkeypatch)
    st, path = sent_tree.write_stamp(tmp_path)
    assert path == tmp_path / sent_tree.STAMP_FILE
    assert re.fullmatch(r"[0-9a-f]{40}", st.sha) and not st.dirty
    assert st.tree == sent_tree.tree_digest(tmp_path) == sent_tree.commit_digest(tmp_path)
    assert path.read_text() == f"HARNESS_GIT_SHA={st.sha}\nHARNESS_GIT_TREE={st.tree}\n"
    (tmp_path / "kernels/k.cu").write_text("changed\n")
    (tmp_path / "plugins/new.py").write_text("new\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "plugins/build").mkdir()
    (tmp_path / "plugins/build/gen.py").write_text("generated\n")
    after = sent_tree.stamp(tmp_path)
    assert after.changed == ("kernels/k.cu", "plugins/new.py")
    assert after.tree == st.tree  # the commit's digest, not the disk's


@needs_git
def test_a_checkout_with_line_ending_rules_is_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit's sources are read as a checkout writes them (git's eol rules applied),
    so a fresh checkout of a repository that converts line endings is not dirty."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    src, clone = tmp_path / "src", tmp_path / "clone"
    src.mkdir()
    _repo(src, monkeypatch)
    (src / ".gitattributes").write_text("*.cu text eol=crlf\n")
    commit_all(src, "eol")
    subprocess.run(["git", "clone", "-q", str(src), str(clone)], check=True, capture_output=True)
    assert (clone / "kernels/k.cu").read_bytes() == b"k\r\n"
    st = sent_tree.stamp(clone)
    assert not st.dirty, st.changed
    assert st.tree == sent_tree.tree_digest(clone)


@needs_git
def test_symbolic_links_are_not_sources(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A link travels as a link and git holds its target's name: neither side counts it."""
    _repo(tmp_path, monkeypatch)
    os.symlink("k.cu", tmp_path / "kernels/link.cu")
    commit_all(tmp_path, "link")
    st = sent_tree.stamp(tmp_path)
    assert not st.dirty and st.tree == sent_tree.tree_digest(tmp_path)


def test_outside_a_checkout_and_an_unwritable_stamp_are_bad_input(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(BadInput, match="not a git checkout"):
        sent_tree.stamp(tmp_path)
    if shutil.which("git") is None:
        return
    repo = tmp_path / "repo"
    repo.mkdir()
    _repo(repo, monkeypatch)
    with pytest.raises(BadInput, match="cannot write"):
        sent_tree.write_stamp(repo, tmp_path / "no" / "such" / "f")
    with pytest.raises(BadInput, match="not a commit git can read"):
        sent_tree.commit_digest(repo, "no-such-rev")


@needs_git
def test_the_stamp_replaces_only_its_own_file(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``stamp --out`` given a results CSV by mistake refuses it and leaves it whole; so
    for a symbolic link (even to a stamp) and a folder; an earlier stamp is replaced."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _repo(repo, monkeypatch)
    csv = tmp_path / "gemm.csv"
    csv.write_text("stage,backend,median_us\ngemm,pycuda,1483\n")
    with pytest.raises(BadInput, match="exists and is not a stamp file: not overwritten"):
        sent_tree.write_stamp(repo, csv)
    assert csv.read_text() == "stage,backend,median_us\ngemm,pycuda,1483\n"
    st, path = sent_tree.write_stamp(repo)
    first = path.read_text()
    assert first == st.text()
    path.write_text("HARNESS_GIT_SHA=old\nHARNESS_GIT_TREE=old\n")
    assert sent_tree.write_stamp(repo)[1].read_text() == first
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(BadInput, match="is a symbolic link"):
        sent_tree.write_stamp(repo, link)
    with pytest.raises(BadInput, match="cannot be read as a stamp"):
        sent_tree.write_stamp(repo, tmp_path)


@needs_git
def test_a_project_inside_a_larger_repository_is_stamped_from_its_own_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sources are named from the project's root, whichever folder git's top is."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    proj = tmp_path / "proj"
    proj.mkdir()
    _sources(proj)
    commit_all(tmp_path)
    st = sent_tree.stamp(proj)
    assert not st.dirty and st.tree == sent_tree.tree_digest(proj)
