"""Git repositories of the tests' own: a git command run in one, a folder committed whole
(an author given, no signing asked, whatever the machine's git config says), and a committed
one-kernel project made the harness's root."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness import paths


def git(root: Path, *args: str) -> str:
    """Run ``git -C root ARGS``; its standard output, stripped (a failure raises)."""
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "commit.gpgsign=false", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def commit_all(root: Path, message: str = "x") -> str:
    """Every file below ``root`` committed (a repository made first where there is none);
    the commit's full hash."""
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def one_kernel_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A checkout at ``root`` holding kernels/k.cu, committed, made the harness's project
    root (git looking no higher than ``root``'s parent); the commit's full hash."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))
    (root / "kernels").mkdir()
    (root / "kernels" / "k.cu").write_text("k\n")
    sha = commit_all(root)
    monkeypatch.setattr(paths, "project_root", lambda: root)
    return sha
