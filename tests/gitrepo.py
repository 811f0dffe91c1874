"""Git repositories of the tests' own: a git command run in one, and a folder committed
whole (an author given, no signing asked, whatever the machine's git config says)."""

from __future__ import annotations

import subprocess
from pathlib import Path


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
