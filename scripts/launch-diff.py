"""Whether a change of launch code changed any launch: every stage's recorded launches (kernel,
grid, block, arguments, shared memory, the dependent-launch flag) and workspace, at every
variant's validation cases, compute-sanitizer shapes and default sweep (the module's constants
read as ones, then as zeros), in this work tree and
at a git revision (default HEAD), compared line by line. Nothing is compiled and nothing runs:
the stages enqueue into a recording launcher, as ``harness profile`` predicts its kernels.

    python scripts/launch-diff.py [REV] [--stage NAME]... [--sm-count N]

Exit status 0: the same launches; 1: some differ (the first differences are printed); 2: bad
input. Identical launches say the host side of a refactor launches what it launched; they are
no validation (a kernel's output is only known on the GPU, ``harness validate``), and
``harness ledger --drift`` keeps naming the unit until one runs.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

#: Points of a default sweep recorded at most (its first ones, in the sweep's order).
MOST_SWEEP_POINTS = 64


def _points(stage: Any, variant: Any) -> Iterator[dict[str, Any]]:
    """The variant's points: the stage's cases and the variant's own, the sanitizer shapes,
    the default sweep's first MOST_SWEEP_POINTS, each once."""
    sweep = stage.default_sweep or {}
    names = list(sweep)
    grid = (dict(zip(names, values, strict=True))
            for values in itertools.product(*(sweep[n] for n in names)))
    seen: set[str] = set()
    for values in itertools.chain(stage.cases, variant.cases,
                                  getattr(stage, "sanitize_shapes", ()),
                                  itertools.islice(grid, MOST_SWEEP_POINTS)):
        try:
            p = stage.point(variant, **values)
        except KeyError:
            continue
        key = repr(sorted(p.items()))
        if key not in seen:
            seen.add(key)
            yield p


def _arg(a: Any) -> str:
    """An argument as text: buffers are their names, scalars their type and value, a tensor
    map its size (the recording launcher's are zeros)."""
    if isinstance(a, str):
        return a
    size = getattr(getattr(a, "dtype", None), "itemsize", None)
    if getattr(a, "dtype", None) is not None and a.dtype.kind == "V":
        return f"map{size}"
    return f"{type(a).__name__}({a})"


def dump(sm_count: int, only: set[str]) -> list[str]:
    """One line a recorded point of every stage (or those in ``only``) in the tree this
    process imports ``harness`` from."""
    from harness.contract import registry
    from harness.contract.stage import workspace

    reg = registry.discover(entry_points=False, external=False)
    lines = [f"problem {p.plugin}: {p.message}" for p in reg.problems]
    for name in sorted(reg.stages):
        if only and name not in only:
            continue
        stage = reg.stages[name]
        for v in stage.variants:
            for p in _points(stage, v):
                head = f"{name} [{v.name}] {' '.join(f'{k}={p[k]}' for k in sorted(p))}"
                lines.append(f"{head} | {_record(stage, v, p, sm_count, workspace)}")
    return lines


def _record(stage: Any, v: Any, p: Mapping[str, Any], sm_count: int, workspace: Any) -> str:
    """A point's workspace and launches as one line, its module's constants read as ones and
    again as zeros (a constant that switches a path, such as int_gemm's stream kernels',
    takes both ways); an exception as its type and text."""
    from harness.contract.launcher import RecordingLauncher

    class Zeros(RecordingLauncher):
        def constant(self, name: str, count: int = 1) -> Any:
            return 0 * super().constant(name, count)

    try:
        ws = workspace(stage, p)
        ins = stage.inputs(p) if stage.inputs is not None else {}
        bufs = {n: n for n in (*ins, *stage.outputs(p), *ws)}
    except Exception as exc:  # the failure is the record
        return f"raises {type(exc).__name__}: {exc}"
    wstext = ",".join(f"{n}{shape}:{dtype}" for n, (shape, dtype) in sorted(ws.items()))
    parts = []
    for launcher in (RecordingLauncher, Zeros):
        try:
            rec = launcher(stage.block_for(v), sm_count=sm_count)
            stage.enqueue(rec, bufs, p, v)
        except Exception as exc:  # the failure is the record
            parts.append(f"raises {type(exc).__name__}: {exc}")
            continue
        calls = "; ".join(f"{n} {g} {b} ({', '.join(_arg(a) for a in args)}) shared={s}"
                          f"{' waits' if w else ''}"
                          for (n, g, b, args, s), w in zip(rec.calls, rec.waited, strict=True))
        parts.append(f"ws {wstext or '-'} | {calls}")
    return " || ".join(parts)


@contextlib.contextmanager
def _worktree(rev: str) -> Iterator[Path]:
    """A detached work tree of ``rev`` in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="launch-diff-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), rev],
                       check=True, capture_output=True, text=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)],
                           check=False, capture_output=True)


def _dump_in(tree: Path, sm_count: int, only: list[str]) -> list[str]:
    """``dump`` run by a child process importing ``harness`` from ``tree``."""
    args = [sys.executable, str(Path(__file__).resolve()), "--dump", "--sm-count",
            str(sm_count), *(x for s in only for x in ("--stage", s))]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(args, cwd=tree, env=env, check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", nargs="?", default="HEAD")
    ap.add_argument("--stage", action="append", default=[])
    ap.add_argument("--sm-count", type=int, default=132)
    ap.add_argument("--dump", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.sm_count < 1:
        print(f"--sm-count {a.sm_count}: a device has at least one SM", file=sys.stderr)
        return 2
    if a.dump:
        print("\n".join(dump(a.sm_count, set(a.stage))))
        return 0
    root = Path(__file__).resolve().parent.parent
    os.chdir(root)
    ok = subprocess.run(["git", "rev-parse", "--verify", "-q", f"{a.rev}^{{commit}}"],
                        capture_output=True, text=True)
    if ok.returncode:
        print(f"{a.rev}: no such revision in this repository", file=sys.stderr)
        return 2
    with _worktree(a.rev) as tree:
        before = _dump_in(tree, a.sm_count, a.stage)
    now = _dump_in(root, a.sm_count, a.stage)
    if before == now:
        print(f"the same launches at {len(now)} points as {a.rev}")
        return 0
    old, new = set(before), set(now)
    gone, came = [x for x in before if x not in new], [x for x in now if x not in old]
    print(f"{len(gone)} of {len(before)} recorded points differ from {a.rev}; the first:")
    for x in gone[:5]:
        print(f"- {x}")
    for x in came[:5]:
        print(f"+ {x}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
