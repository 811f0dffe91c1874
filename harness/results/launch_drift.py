"""Launch code since its validation: whether a stage's Python is still the one that ran.

The ledger's kernel hash covers a kernel's sources and compile flags, not the Python that
launches it: the grid and arguments ``enqueue`` gives, the cases a validation runs, the
reference it is judged by. That code is the stage's plugin module and the domain modules it
imports (``harness.spikes``: grids, cases, references), and for a pipeline its steps' too. A
validation row names the commit it ran at (``git_sha``); this compares each of those files at
that commit with the working tree's, their syntax trees with docstrings left out (a comment
or a docstring changes nothing that runs), and lists the validated units whose launch code
has changed since. Read with the ledger, not instead of it: a kernel validated at its
current source whose launch code moved after that validation is what this shows.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: What a unit's launch code is, against its validation's commit.
CHANGED, UNKNOWN = "changed", "unknown"
#: The packages whose modules count as launch code where a plugin imports them.
FOLLOW = ("harness.spikes",)
_SHA = re.compile(r"[0-9a-f]{7,40}")


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


def _imported(source: bytes, follow: Sequence[str]) -> set[str]:
    """The modules under the ``follow`` packages a module imports (``from P import m``,
    ``from P.m import x``, ``import P.m``), as dotted names."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for pkg in follow:
                if node.module == pkg:
                    out.update(f"{pkg}.{a.name}" for a in node.names)
                elif node.module.startswith(pkg + "."):
                    out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names
                       if any(a.name.startswith(p + ".") for p in follow))
    return out


def launch_files(plugins: Sequence[Path], root: Path,
                 follow: Sequence[str] = FOLLOW) -> list[str]:
    """The files of a unit's launch code, relative to ``root``: its plugin files and the
    modules of the ``follow`` packages they import, transitively (a name that is no module
    file there, such as a class imported from a package, is left out)."""
    todo = list(plugins)
    seen: dict[str, None] = {}
    while todo:
        f = todo.pop(0)
        try:
            rel = f.resolve().relative_to(root).as_posix()
            data = f.read_bytes()
        except (OSError, ValueError):
            continue
        if rel in seen:
            continue
        seen[rel] = None
        for name in sorted(_imported(data, follow)):
            mod = root / (name.replace(".", "/") + ".py")
            if mod.is_file():
                todo.append(mod)
    return list(seen)


@dataclass(frozen=True)
class Drift:
    """A validated unit whose launch code differs from its validation's (``files``: those
    that changed), or cannot be compared with it (``state`` UNKNOWN, ``why`` says why)."""

    stage: str
    variant: str
    git_sha: str
    files: tuple[str, ...]
    state: str
    why: str = ""

    def describe(self) -> str:
        """One line for the terminal."""
        if self.state == CHANGED:
            return (f"{self.stage} [{self.variant}]: {', '.join(self.files)} changed since its "
                    f"validation at {self.git_sha[:12]} (code, not only docstrings or comments)")
        return f"{self.stage} [{self.variant}]: not compared ({self.why})"


def _at_commit(root: Path, sha: str, rel: str) -> bytes | OSError | None:
    """The file ``rel`` as commit ``sha`` holds it; None where git has no such commit or
    file; the OSError where git cannot be run."""
    try:
        return subprocess.run(["git", "-C", str(root), "show", f"{sha}:./{rel}"],
                              capture_output=True, timeout=60, check=True).stdout
    except subprocess.SubprocessError:
        return None
    except OSError as e:
        return e


def launch_drift(units: Iterable[tuple[str, str, Mapping[str, str]]],
                 sources: Mapping[str, str], root: Path,
                 steps: Mapping[str, Sequence[str]] | None = None,
                 follow: Sequence[str] = FOLLOW) -> list[Drift]:
    """For each (stage, variant, its passing ledger row), the unit's launch code at the row's
    commit against the working tree's (``sources``: each stage's plugin file as the registry
    found it; ``steps``: a pipeline's step stages, whose plugins count too; ``root``: the git
    checkout). Returns the units whose code changed and those that cannot be compared (no
    commit named, a run of a tree that was not its commit, a commit git does not have, no
    git, a plugin outside the checkout); the rest are left out."""
    root = root.resolve()
    cache: dict[tuple[str, str], bytes | OSError | None] = {}
    out = []
    for stage, variant, row in units:
        names = [stage, *(steps or {}).get(stage, ())]
        plugins = [Path(sources[n]) for n in names if sources.get(n)]
        files = launch_files(plugins, root, follow)
        sha = (row.get("git_sha") or "").strip()

        def unknown(why: str, stage: str = stage, variant: str = variant,
                    sha: str = sha) -> Drift:
            return Drift(stage, variant, sha, (), UNKNOWN, why)

        mine = sources.get(stage, "")
        if not mine or not Path(mine).is_file() or not any(
                f == _rel(Path(mine), root) for f in files):
            out.append(unknown("its plugin is not a file of this checkout"))
            continue
        if not sha or sha.endswith("-dirty"):
            out.append(unknown("its validation ran a tree that was not its commit" if sha
                               else "its validation names no commit"))
            continue
        if not _SHA.fullmatch(sha):
            out.append(unknown(f"{sha!r} is not a commit hash"))
            continue
        changed, why = [], ""
        for rel in files:
            if (sha, rel) not in cache:
                cache[(sha, rel)] = _at_commit(root, sha, rel)
            then = cache[(sha, rel)]
            if isinstance(then, OSError):
                why = f"git cannot be run: {then.strerror or then}"
                break
            if then is None:
                if git_has(root, sha, cache):
                    changed.append(rel)  # a file the launch code did not have then
                    continue
                why = "git has no such commit"
                break
            try:
                now = (root / rel).read_bytes()
            except OSError as e:
                why = f"cannot read {rel}: {e.strerror or e}"
                break
            if normalized(then) != normalized(now):
                changed.append(rel)
        if why:
            out.append(unknown(why))
        elif changed:
            out.append(Drift(stage, variant, sha, tuple(changed), CHANGED))
    return out


def _rel(p: Path, root: Path) -> str:
    try:
        return p.resolve().relative_to(root).as_posix()
    except (OSError, ValueError):
        return ""


def git_has(root: Path, sha: str, cache: dict[tuple[str, str], bytes | OSError | None]
            ) -> bool:
    """Whether git knows commit ``sha`` (asked once a commit, kept in ``cache``)."""
    key = (sha, "")
    if key not in cache:
        try:
            subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{sha}^{{commit}}"],
                           capture_output=True, timeout=60, check=True)
            cache[key] = b""
        except (OSError, subprocess.SubprocessError):
            cache[key] = None
    return cache[key] is not None
