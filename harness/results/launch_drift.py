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


class _Sources:
    """The files a report compares, each read and parsed once for all its units: the working
    tree's, and each commit's as git gives it."""

    def __init__(self, root: Path, follow: Sequence[str]) -> None:
        self.root, self.follow = root, follow
        self._now: dict[str, bytes | OSError] = {}
        self._normal: dict[str, str | None] = {}
        self._then: dict[tuple[str, str], str | OSError | None] = {}
        self._commits: dict[str, bool] = {}

    def rel(self, f: Path) -> str:
        """``f`` relative to the checkout; '' where it lies outside or cannot be resolved."""
        try:
            return f.resolve().relative_to(self.root).as_posix()
        except (OSError, ValueError):
            return ""

    def now(self, rel: str) -> bytes | OSError:
        """The file as the working tree holds it, or why it cannot be read."""
        if rel not in self._now:
            try:
                self._now[rel] = (self.root / rel).read_bytes()
            except OSError as e:
                self._now[rel] = e
        return self._now[rel]

    def normal_now(self, rel: str) -> str | None:
        """The working tree's file, normalized (read first: ``now``)."""
        if rel not in self._normal:
            data = self.now(rel)
            self._normal[rel] = None if isinstance(data, OSError) else normalized(data)
        return self._normal[rel]

    def files(self, plugins: Sequence[Path]) -> list[str]:
        """The launch code's files: the plugins and the ``follow`` modules they import,
        transitively (a name that is no module file, such as a class imported from a
        package, is left out; a file that cannot be read stays, its imports unknown)."""
        todo = [r for r in (self.rel(p) for p in plugins) if r]
        seen: dict[str, None] = {}
        while todo:
            rel = todo.pop(0)
            if rel in seen:
                continue
            seen[rel] = None
            data = self.now(rel)
            if isinstance(data, OSError):
                continue
            for name in sorted(_imported(data, self.follow)):
                mod = name.replace(".", "/") + ".py"
                if (self.root / mod).is_file():
                    todo.append(mod)
        return list(seen)

    def then(self, sha: str, rel: str) -> str | OSError | None:
        """The file at commit ``sha``, normalized; None where git has no such file (or it
        does not parse); the OSError where git cannot be run."""
        if (sha, rel) not in self._then:
            got = self._git("show", f"{sha}:./{rel}")
            self._then[(sha, rel)] = got if isinstance(got, OSError) else (
                None if got is None else normalized(got))
        return self._then[(sha, rel)]

    def has_commit(self, sha: str) -> bool:
        """Whether git knows commit ``sha``."""
        if sha not in self._commits:
            got = self._git("cat-file", "-e", f"{sha}^{{commit}}")
            self._commits[sha] = isinstance(got, bytes)
        return self._commits[sha]

    def _git(self, *args: str) -> bytes | OSError | None:
        try:
            return subprocess.run(["git", "-C", str(self.root), *args], capture_output=True,
                                  timeout=60, check=True).stdout
        except subprocess.SubprocessError:
            return None
        except OSError as e:
            return e


def launch_files(plugins: Sequence[Path], root: Path,
                 follow: Sequence[str] = FOLLOW) -> list[str]:
    """The files of a unit's launch code, relative to ``root``: its plugin files and the
    modules of the ``follow`` packages they import, transitively (a name that is no module
    file there, such as a class imported from a package, is left out)."""
    return _Sources(root.resolve(), follow).files(plugins)


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


def _compare(src: _Sources, files: Sequence[str], sha: str) -> tuple[list[str], str]:
    """The files that changed since commit ``sha``, and why they cannot be compared ('' where
    they can)."""
    changed = []
    for rel in files:
        then = src.then(sha, rel)
        if isinstance(then, OSError):
            return [], f"git cannot be run: {then.strerror or then}"
        now = src.now(rel)
        if isinstance(now, OSError):
            return [], f"cannot read {rel}: {now.strerror or now}"
        if then is None and not src.has_commit(sha):
            return [], "git has no such commit"
        if then != src.normal_now(rel):  # None: a file the launch code did not have then
            changed.append(rel)
    return changed, ""


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
    src = _Sources(root.resolve(), follow)
    out = []
    for stage, variant, row in units:
        sha = (row.get("git_sha") or "").strip()
        mine = sources.get(stage, "")
        plugins = [Path(sources[n]) for n in [stage, *(steps or {}).get(stage, ())]
                   if sources.get(n)]
        files = src.files(plugins)
        if not mine or not Path(mine).is_file() or src.rel(Path(mine)) not in files:
            why = "its plugin is not a file of this checkout"
        elif not sha or sha.endswith("-dirty"):
            why = ("its validation ran a tree that was not its commit" if sha
                   else "its validation names no commit")
        elif not _SHA.fullmatch(sha):
            why = f"{sha!r} is not a commit hash"
        else:
            changed, why = _compare(src, files, sha)
            if changed:
                out.append(Drift(stage, variant, sha, tuple(changed), CHANGED))
        if why:
            out.append(Drift(stage, variant, sha, (), UNKNOWN, why))
    return out
