"""launch_drift: a validated unit's plugin module at its validation's commit against the
working tree's, on repositories of the tests' own."""

from __future__ import annotations

from pathlib import Path

from harness.results import launch_drift
from harness.results.launch_drift import CHANGED, UNKNOWN
from tests.gitrepo import commit_all, git

PLUGIN = '''"""A plugin."""

BLOCK = 128  # the block


def grid(n: int) -> int:
    """Blocks for n values."""
    return -(-n // BLOCK)
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
    assert launch_drift.normalized(PLUGIN.replace("-(-n // BLOCK)", "n // BLOCK").encode()) \
        != base
    # A function that is only a docstring stays a function.
    assert launch_drift.normalized(b'def f():\n    """x"""\n') == \
        launch_drift.normalized(b'def f():\n    """y"""\n')
    assert launch_drift.normalized(b"def f(:\n") is None


def _repo(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "repo"
    (root / "plugins").mkdir(parents=True)
    plugin = root / "plugins" / "stage_a.py"
    plugin.write_text(PLUGIN)
    return root, plugin, commit_all(root)


def test_a_code_change_after_the_validation_is_listed_a_docstring_is_not(tmp_path: Path) -> None:
    root, plugin, sha = _repo(tmp_path)
    units = [("stage_a", "default", {"git_sha": sha}),
             ("stage_a", "short", {"git_sha": sha[:7]})]
    sources = {"stage_a": str(plugin)}
    assert launch_drift.launch_drift(units, sources, root) == []
    plugin.write_text(PLUGIN.replace('"""A plugin."""', '"""Reworded."""'))
    assert launch_drift.launch_drift(units, sources, root) == []
    plugin.write_text(PLUGIN.replace("128", "256"))
    got = launch_drift.launch_drift(units, sources, root)
    assert [(d.variant, d.state, d.path) for d in got] == [
        ("default", CHANGED, "plugins/stage_a.py"), ("short", CHANGED, "plugins/stage_a.py")]
    assert "has changed since its validation at " + sha[:12] in got[0].describe()
    # Committed later, the change is still after the validation's commit.
    commit_all(root, "later")
    assert [d.state for d in launch_drift.launch_drift(units, sources, root)] == [CHANGED] * 2
    # A validation at the new commit covers it.
    now = git(root, "rev-parse", "HEAD")
    assert launch_drift.launch_drift([("stage_a", "default", {"git_sha": now})], sources,
                                     root) == []


def test_what_cannot_be_compared_says_why(tmp_path: Path) -> None:
    root, plugin, sha = _repo(tmp_path)
    sources = {"stage_a": str(plugin), "outside": str(tmp_path / "elsewhere.py"),
               "entry": "entry point pkg:STAGE"}
    (tmp_path / "elsewhere.py").write_text(PLUGIN)
    units = [("stage_a", "dirty", {"git_sha": sha + "-dirty"}),
             ("stage_a", "none", {"git_sha": ""}),
             ("stage_a", "gone", {"git_sha": "0" * 40}),
             ("outside", "default", {"git_sha": sha}),
             ("entry", "default", {"git_sha": sha})]
    got = {d.variant if d.stage == "stage_a" else d.stage: d
           for d in launch_drift.launch_drift(units, sources, root)}
    assert {k: d.state for k, d in got.items()} == dict.fromkeys(
        ("dirty", "none", "gone", "outside", "entry"), UNKNOWN)
    assert "ran a tree that was not its commit" in got["dirty"].describe()
    assert "names no commit" in got["none"].describe()
    assert "git has no such commit or file" in got["gone"].describe()
    assert "not a file of this checkout" in got["outside"].describe()
    assert "not a file of this checkout" in got["entry"].describe()
    # The file deleted from the working tree after its commit: not a file now.
    plugin.unlink()
    (d,) = launch_drift.launch_drift([("stage_a", "default", {"git_sha": sha})], sources, root)
    assert d.state == UNKNOWN
