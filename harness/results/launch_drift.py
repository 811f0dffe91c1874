"""Launch code since its validation: whether a stage's plugin is still the one that ran.

The ledger's kernel hash covers a kernel's sources and compile flags, not the Python that
launches it: the grid and arguments ``enqueue`` gives, the cases a validation runs, the
reference it is judged by. A validation row names the commit it ran at (``git_sha``); this
compares the stage's plugin module at that commit with the one in the working tree, their
syntax trees with docstrings left out (a comment or a docstring changes nothing that runs),
and lists the validated units whose plugin code has changed since. Read with the ledger, not
instead of it: a kernel validated at its current source whose launch code moved after that
validation is what this shows.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: What a unit's launch code is, against its validation's commit.
CHANGED, UNKNOWN = "changed", "unknown"


def normalized(source: bytes) -> str | None:
    """The module's syntax tree without docstrings, as text: equal for two sources that differ
    only in comments, docstrings or layout; None where it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


@dataclass(frozen=True)
class Drift:
    """A validated unit whose plugin code differs from its validation's, or cannot be
    compared with it (``state`` UNKNOWN, ``why`` says why)."""

    stage: str
    variant: str
    git_sha: str
    path: str
    state: str
    why: str = ""

    def describe(self) -> str:
        """One line for the terminal."""
        if self.state == CHANGED:
            return (f"{self.stage} [{self.variant}]: {self.path} has changed since its "
                    f"validation at {self.git_sha[:12]} (code, not only docstrings or comments)")
        return f"{self.stage} [{self.variant}]: {self.path} not compared ({self.why})"


def _at_commit(root: Path, sha: str, rel: str) -> bytes | None:
    """The file ``rel`` as commit ``sha`` holds it, or None where git cannot give it."""
    try:
        return subprocess.run(["git", "-C", str(root), "show", f"{sha}:./{rel}"],
                              capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def launch_drift(units: Iterable[tuple[str, str, Mapping[str, str]]],
                 sources: Mapping[str, str], root: Path) -> list[Drift]:
    """For each (stage, variant, its passing ledger row), the unit's plugin module at the
    row's commit against the file now (``sources``: each stage's plugin file, as the registry
    found it; ``root``: the git checkout). Returns the units whose code changed and those that
    cannot be compared (no commit named, a run of a tree that was not its commit, a commit or
    file git does not have, a plugin outside the checkout); the rest are left out."""
    root = root.resolve()
    cache: dict[tuple[str, str], str | None] = {}
    out = []
    for stage, variant, row in units:
        src = Path(sources.get(stage, ""))
        try:
            rel = src.resolve().relative_to(root).as_posix() if src.is_file() else ""
        except ValueError:
            rel = ""
        sha = (row.get("git_sha") or "").strip()
        if not rel:
            out.append(Drift(stage, variant, sha, str(src), UNKNOWN,
                             "its plugin is not a file of this checkout"))
            continue
        if not sha or sha.endswith("-dirty"):
            why = ("its validation ran a tree that was not its commit" if sha
                   else "its validation names no commit")
            out.append(Drift(stage, variant, sha, rel, UNKNOWN, why))
            continue
        if (sha, rel) not in cache:
            old = _at_commit(root, sha, rel)
            cache[(sha, rel)] = None if old is None else normalized(old)
        then = cache[(sha, rel)]
        if then is None:
            out.append(Drift(stage, variant, sha, rel, UNKNOWN,
                             "git has no such commit or file, or it does not parse"))
        elif then != normalized(src.read_bytes()):
            out.append(Drift(stage, variant, sha, rel, CHANGED))
    return out
