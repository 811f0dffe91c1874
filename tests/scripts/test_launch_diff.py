"""``scripts/launch-diff.py``: a copy of the project's code committed in a repository of the
test's own; the same launches against its HEAD, a changed small-path rule found and named, a
bad revision refused with exit status 2."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import paths
from tests.gitrepo import commit_all

ROOT = paths.project_root()


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(root / "scripts" / "launch-diff.py"), *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """harness/, plugins/, kernels/ and scripts/ of this checkout, committed elsewhere."""
    root = tmp_path_factory.mktemp("launch-diff") / "project"
    for part in ("harness", "plugins", "kernels", "scripts"):
        shutil.copytree(ROOT / part, root / part,
                        ignore=shutil.ignore_patterns("__pycache__", "NOTES.md"))
    commit_all(root)
    return root


def test_the_same_tree_launches_the_same(copy: Path) -> None:
    out = _run(copy, "HEAD", "--stage", "int_gemm")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("the same launches at ")
    assert int(out.stdout.split()[4]) > 50  # the cases, sanitizer shapes and sweep points


def test_a_changed_launch_rule_is_found_and_named(copy: Path) -> None:
    rules = copy / "harness" / "spikes" / "gemm_paths.py"
    text = rules.read_text()
    assert "SMALL_TILES = 1800\n" in text
    rules.write_text(text.replace("SMALL_TILES = 1800\n", "SMALL_TILES = 1700\n"))
    try:
        out = _run(copy, "HEAD", "--stage", "int_gemm")
    finally:
        rules.write_text(text)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "recorded points differ from HEAD" in out.stdout
    # a point whose split of K moved, before and after
    assert "- int_gemm [wide] batch=9 " in out.stdout and "int_gemm_small (28, 8, 1)" in out.stdout
    assert "+ int_gemm [wide] batch=9 " in out.stdout and "int_gemm_small (28, 7, 1)" in out.stdout


def test_a_revision_that_is_none_is_bad_input(copy: Path) -> None:
    out = _run(copy, "no-such-revision")
    assert out.returncode == 2
    assert out.stderr.strip() == "no-such-revision: no such revision in this repository"
