"""launch_drift: a validated unit's launch code (its plugin, the domain modules it imports,
a pipeline's steps' plugins) at its validation's commit against the working tree's, on
repositories of the tests' own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.results import launch_drift
from harness.results.launch_drift import CHANGED, UNKNOWN
from tests.gitrepo import commit_all, git

PLUGIN = '''"""A plugin."""

from dom import grids
from dom.cases import CASES

BLOCK = 128  # the block


def grid(n: int) -> int:
    """Blocks for n values."""
    return grids.blocks(n, BLOCK) + len(CASES)
'''
GRIDS = '''"""Grids."""

from dom import util


def blocks(n: int, block: int) -> int:
    return util.cdiv(n, block)
'''


def test_normalized_ignores_docstrings_comments_and_layout() -> None:
    base = launch_drift.normalized(PLUGIN.encode())
    assert base is not None
    reworded = PLUGIN.replace('"""A plugin."""', '"""A plugin, described again."""') \
        .replace("# the block", "# a comment of another kind") \
        .replace('"""Blocks for n values."""', '"""How many blocks."""\n')
    assert launch_drift.normalized(reworded.encode()) == base
    # Code is a change: another constant, another expression.
    assert launch_drift.normalized(PLUGIN.replace("128", "256").encode()) != base
    assert launch_drift.normalized(PLUGIN.replace("+ len(CASES)", "").encode()) != base
    # A string that is not a body's first statement is code, and so is an f-string first.
    assert launch_drift.normalized(b'x = 1\n"a"\n') != launch_drift.normalized(b'x = 1\n"b"\n')
    assert launch_drift.normalized(b'f"{x}a"\n') != launch_drift.normalized(b'f"{x}b"\n')
    # A function that is only a docstring stays a function, unlike one that is gone.
    only_doc = launch_drift.normalized(b'def f():\n    """x"""\n')
    assert only_doc == launch_drift.normalized(b'def f():\n    """y"""\n')
    assert only_doc is not None and only_doc != launch_drift.normalized(b"")
    assert launch_drift.normalized(b"def f(:\n") is None


def _repo(tmp_path: Path, top: str = "") -> tuple[Path, Path, str]:
    """A checkout (at ``top`` inside the repository) with plugins/stage_a.py, plugins/pipe.py
    (a pipeline over stage_a) and the domain package dom (grids, cases, util)."""
    repo = tmp_path / "repo"
    root = repo / top if top else repo
    for rel, text in (("plugins/stage_a.py", PLUGIN), ("plugins/pipe.py", "STEPS = ('a',)\n"),
                      ("dom/__init__.py", ""), ("dom/grids.py", GRIDS),
                      ("dom/cases.py", "CASES = (1, 2)\n"),
                      ("dom/util.py", "def cdiv(a, b):\n    return -(-a // b)\n"),
                      ("dom/unused.py", "X = 1\n")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root, root / "plugins" / "stage_a.py", commit_all(repo)


def _drift(units, root: Path, **kw):  # type: ignore[no-untyped-def]
    sources = {"stage_a": str(root / "plugins" / "stage_a.py"),
               "pipe": str(root / "plugins" / "pipe.py")}
    return launch_drift.launch_drift(units, sources, root, steps={"pipe": ["stage_a"]},
                                     follow=("dom",), **kw)


def test_launch_files_follow_the_domain_imports(tmp_path: Path) -> None:
    root, plugin, _ = _repo(tmp_path)
    assert launch_drift.launch_files([plugin], root.resolve(), ("dom",)) == [
        "plugins/stage_a.py", "dom/cases.py", "dom/grids.py", "dom/util.py"]


@pytest.mark.parametrize("top", ["", "project"])
def test_a_code_change_after_the_validation_is_listed_a_docstring_is_not(
        tmp_path: Path, top: str) -> None:
    root, plugin, sha = _repo(tmp_path, top)
    units = [("stage_a", "default", {"git_sha": sha}),
             ("stage_a", "short", {"git_sha": sha[:7]}),
             ("pipe", "default", {"git_sha": sha})]
    assert _drift(units, root) == []
    plugin.write_text(PLUGIN.replace('"""A plugin."""', '"""Reworded."""'))
    (root / "dom" / "unused.py").write_text("X = 2\n")  # imported by no launch code
    assert _drift(units, root) == []
    # A domain module two imports away changes: every unit over it, the pipeline too.
    (root / "dom" / "util.py").write_text("def cdiv(a, b):\n    return a // b\n")
    got = _drift(units, root)
    assert [(d.stage, d.variant, d.state, d.files) for d in got] == [
        ("stage_a", "default", CHANGED, ("dom/util.py",)),
        ("stage_a", "short", CHANGED, ("dom/util.py",)),
        ("pipe", "default", CHANGED, ("dom/util.py",))]
    assert "dom/util.py changed since its validation at " + sha[:12] in got[0].describe()
    # A module the launch code did not import then counts as changed.
    (root / "dom" / "extra.py").write_text("Y = 1\n")
    plugin.write_text(PLUGIN.replace("from dom import grids", "from dom import extra, grids"))
    (d, *_) = _drift(units, root)
    assert d.files == ("plugins/stage_a.py", "dom/extra.py", "dom/util.py")
    # Committed later, the changes are still after the validation's commit; a validation at
    # the new commit covers them.
    commit_all(root if not top else root.parent, "later")
    assert [d.state for d in _drift(units, root)] == [CHANGED] * 3
    now = git(root, "rev-parse", "HEAD")
    assert _drift([("stage_a", "default", {"git_sha": now})], root) == []


def test_what_cannot_be_compared_says_why(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root, plugin, sha = _repo(tmp_path)
    (tmp_path / "elsewhere.py").write_text(PLUGIN)
    units = [("stage_a", "dirty", {"git_sha": sha + "-dirty"}),
             ("stage_a", "none", {"git_sha": ""}),
             ("stage_a", "gone", {"git_sha": "0" * 40}),
             ("stage_a", "option", {"git_sha": "--output=/tmp/x"}),
             ("outside", "default", {"git_sha": sha}),
             ("entry", "default", {"git_sha": sha}),
             ("nothing", "default", {"git_sha": sha})]
    sources = {"stage_a": str(plugin), "outside": str(tmp_path / "elsewhere.py"),
               "entry": "entry point pkg:STAGE"}
    got = {d.variant if d.stage == "stage_a" else d.stage: d.describe()
           for d in launch_drift.launch_drift(units, sources, root, follow=("dom",))}
    assert set(got) == {"dirty", "none", "gone", "option", "outside", "entry", "nothing"}
    assert all("not compared" in why for why in got.values())
    assert "ran a tree that was not its commit" in got["dirty"]
    assert "names no commit" in got["none"]
    assert "git has no such commit" in got["gone"]
    assert "'--output=/tmp/x' is not a commit hash" in got["option"]
    for k in ("outside", "entry", "nothing"):
        assert "not a file of this checkout" in got[k]
    # A launch file that cannot be read now, and no git at all: each says so.
    real = Path.read_bytes

    def unreadable(self: Path) -> bytes:
        if self.as_posix().endswith("dom/util.py"):
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", unreadable)
    (d,) = launch_drift.launch_drift([("stage_a", "default", {"git_sha": sha})], sources,
                                     root, follow=("dom",))
    assert d.state == UNKNOWN and "cannot read dom/util.py: Permission denied" in d.describe()
    monkeypatch.setattr(Path, "read_bytes", real)

    def no_git(*a, **k):  # type: ignore[no-untyped-def]
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(subprocess, "run", no_git)
    (d,) = launch_drift.launch_drift([("stage_a", "default", {"git_sha": sha})], sources,
                                     root, follow=("dom",))
    assert d.state == UNKNOWN and "git cannot be run: No such file or directory" in d.describe()
    monkeypatch.undo()
    # The plugin deleted from the working tree after its commit.
    plugin.unlink()
    (d,) = launch_drift.launch_drift([("stage_a", "default", {"git_sha": sha})], sources,
                                     root, follow=("dom",))
    assert d.state == UNKNOWN and "not a file of this checkout" in d.describe()
