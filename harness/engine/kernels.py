"""What each kernel variant is at its current source, with no GPU: what nvcc makes of it
(``harness check``) and whether a GPU validation vouches for it (``harness ledger``). The
committed rows judged against the ledger (``harness ledger --rows``) are
:mod:`.ledger_rows`'.

``harness check`` keeps what nvcc reported in a user cache folder, keyed by the kernel
hash, the target arch and the nvcc version: a variant whose sources, flags and compiler
are unchanged is not compiled again. A variant that did not compile is never cached (its
log is shown by compiling it again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import paths
from harness.contract.kernel import (
    KernelResources,
    check_arch,
    kernel_hash,
    nvcc_report,
    target_arch,
)
from harness.contract.registry import Registry
from harness.contract.stage import Stage, Variant
from harness.errors import CompileError, HarnessError
from harness.results import launch_drift, ledger


@dataclass(frozen=True)
class Compiled:
    """One stage variant through nvcc: its kernels' resources, or why it did not compile
    (``cached``: the resources came from the check cache, nvcc did not run)."""

    stage: str
    variant: str
    resources: list[KernelResources]
    error: CompileError | None = None
    cached: bool = False


def cache_dir() -> Path:
    """Where ``harness check`` keeps nvcc's reports: ``$XDG_CACHE_HOME/spike-harness/check``
    (default ``~/.cache/spike-harness/check``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spike-harness" / "check"


def nvcc_version(nvcc: str | None = None) -> str:
    """The last line of ``nvcc --version`` (its build), part of the cache key; HarnessError
    when nvcc is missing or does not answer."""
    exe = nvcc or shutil.which("nvcc")
    if exe is None:
        raise HarnessError("nvcc not found on PATH (needed to compile the kernels)")
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True,
                              check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HarnessError(f"nvcc --version failed: {exc}") from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise HarnessError(f"nvcc --version failed (exit {proc.returncode})")
    return lines[-1].strip()


class CheckCache:
    """nvcc's resource reports on disk, one JSON file per (kernel hash, arch, nvcc version).

    An unreadable or malformed entry is a miss; an entry that cannot be written is skipped
    (the cache only saves time, it never fails a check)."""

    def __init__(self, folder: Path, nvcc: str) -> None:
        self.folder = Path(folder)
        self.nvcc = nvcc

    def _path(self, stage: Stage, variant: Variant, arch: str) -> Path:
        key = "\0".join((kernel_hash(stage, variant), target_arch(stage, arch), self.nvcc))
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def get(self, stage: Stage, variant: Variant, arch: str) -> list[KernelResources] | None:
        """The cached report of a variant, or None."""
        try:
            data = json.loads(self._path(stage, variant, arch).read_text(encoding="utf-8"))
            return [KernelResources(**r) for r in data["resources"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, stage: Stage, variant: Variant, arch: str,
            resources: list[KernelResources]) -> None:
        """Keep a variant's report (written whole: a temporary file renamed over)."""
        path = self._path(stage, variant, arch)
        data = json.dumps({"stage": stage.name, "variant": variant.name, "nvcc": self.nvcc,
                           "resources": [dataclasses.asdict(r) for r in resources]})
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(data, encoding="utf-8")
            os.replace(tmp, path)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


@dataclass
class CheckRun:
    """A ``harness check`` under way: how many variants, and each one as nvcc (or the
    cache) answers it."""

    total: int
    results: Iterator[Compiled]


def check_run(reg: Registry, names: Sequence[str] | None, arch: str = "sm_90",
              cache: Path | None = None) -> CheckRun:
    """Compile every variant of the named stages (default: all) for ``arch``, lazily; a
    variant that does not compile is reported and the others still run. With ``cache`` (a
    folder, see :func:`cache_dir`), a variant already checked at its kernel hash by the same
    nvcc is read from there. Unknown stages and a missing nvcc fail before any compile."""
    check_arch(arch)
    stages = reg.select(names)
    store = CheckCache(cache, nvcc_version()) if cache is not None else None
    jobs = [(st, v) for st in stages for v in st.variants]

    def results() -> Iterator[Compiled]:
        for st, v in jobs:
            hit = store.get(st, v, arch) if store is not None else None
            if hit is not None:
                yield Compiled(st.name, v.name, hit, cached=True)
                continue
            try:
                got = nvcc_report(st, v, arch)
            except CompileError as exc:
                yield Compiled(st.name, v.name, [], exc)
                continue
            if store is not None:
                store.put(st, v, arch, got)
            yield Compiled(st.name, v.name, got)

    return CheckRun(len(jobs), results())


def check(reg: Registry, names: Sequence[str] | None, arch: str = "sm_90",
          cache: Path | None = None) -> list[Compiled]:
    """Every variant of :func:`check_run`, all at once."""
    return list(check_run(reg, names, arch, cache).results)


@dataclass(frozen=True)
class LedgerReport:
    """Every kernel variant's (and pipeline's) validation record at its current source."""

    statuses: list[ledger.LedgerStatus]
    #: Plugins that failed to load (their kernels cannot be checked).
    broken: int

    @property
    def missing(self) -> list[ledger.LedgerStatus]:
        """The variants without a passing GPU validation at their current source."""
        return [s for s in self.statuses if not s.ok]

    @property
    def failure(self) -> str | None:
        """What fails ``harness ledger --check``, or None."""
        if self.missing:
            return (f"{len(self.missing)} kernel variant(s) without a passing GPU "
                    "validation at their current source")
        if self.broken:
            return f"{self.broken} plugin(s) failed to load"
        return None


def current_hashes(reg: Registry) -> dict[tuple[str, str], str]:
    """Every stage variant's kernel hash and every pipeline variant's, by (name, variant)."""
    current = {(s.name, v.name): kernel_hash(s, v)
               for s in reg.stages.values() for v in s.variants}
    for p in reg.pipelines.values():
        h = ledger.pipeline_hash(p, reg.stages)
        current.update({(p.name, v.name): h for v in p.variants})
    return current


def ledger_report(reg: Registry, path: Path | None = None) -> LedgerReport:
    """The ledger status of every stage variant and pipeline (``path``: the ledger CSV,
    default ``statistics/validation_ledger.csv``)."""
    status = ledger.check(reg.select(None), ledger.read(path),
                          [reg.pipelines[n] for n in sorted(reg.pipelines)], reg.stages)
    return LedgerReport(status, len(reg.problems))


def drift_report(reg: Registry, rep: LedgerReport, root: Path | None = None
                 ) -> list[launch_drift.Drift]:
    """The units the ledger finds validated at their current kernel source whose launch code
    (the plugin, the domain modules it imports, a pipeline's steps' plugins) has changed since
    that validation's commit, or cannot be compared with it (``harness.results.launch_drift``;
    ``root``: the git checkout, default the project's)."""
    units = [(s.stage, s.variant, s.record) for s in rep.statuses if s.ok and s.record]
    steps = {name: list(p.steps) for name, p in reg.pipelines.items()}
    return launch_drift.launch_drift(units, reg.sources, root or paths.project_root(), steps)
