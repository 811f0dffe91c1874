"""Plugin discovery: scan ``plugins/`` and the ``harness.stages`` entry-point group.

Nothing is registered by import side effects: a plugin module only declares ``STAGE``.
A broken plugin (import error, missing or malformed ``STAGE``, missing kernel file, an entry
point its kernel does not define, duplicate name) becomes a :class:`PluginProblem` naming
it, and every other plugin still loads.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from harness import paths
from harness.contract.checks import check_stage
from harness.contract.kernel import missing_entry_points
from harness.contract.stage import Pipeline, Stage
from harness.errors import BadInput, PluginError

ENTRY_POINT_GROUP = "harness.stages"


@dataclass(frozen=True)
class PluginProblem:
    """A plugin that could not be loaded, and why."""

    plugin: str
    source: str
    message: str

    def __str__(self) -> str:
        return f"plugin {self.plugin} ({self.source}): {self.message}"


@dataclass
class Registry:
    """The stages found, by name, and the problems met on the way."""

    stages: dict[str, Stage] = field(default_factory=dict)
    pipelines: dict[str, Pipeline] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    problems: list[PluginProblem] = field(default_factory=list)
    pending: list[tuple[Pipeline, str]] = field(default_factory=list)

    def pipeline(self, name: str) -> Pipeline:
        """The pipeline called ``name``; a one-line error otherwise."""
        if name in self.pipelines:
            return self.pipelines[name]
        known = ", ".join(sorted(self.pipelines)) or "none"
        raise BadInput(f"unknown pipeline {name!r} (known: {known})")

    def get(self, name: str) -> Stage:
        """The stage called ``name``; a one-line error naming the known ones otherwise."""
        if name in self.stages:
            return self.stages[name]
        for p in self.problems:
            if p.plugin == name:
                raise PluginError(str(p))
        if name in self.pipelines:
            raise BadInput(f"{name} is a pipeline: use `harness run {name}` or "
                           "`harness bench` with it alone")
        known = ", ".join(sorted(self.stages)) or "none"
        raise BadInput(f"unknown stage {name!r} (known: {known})")

    def describe(self) -> str:
        """Every stage's and pipeline's description and help texts, by name (``harness
        list --verbose``)."""
        found: dict[str, Stage | Pipeline] = {**self.stages, **self.pipelines}
        return "\n".join(found[n].describe() for n in sorted(found))

    def select(self, names: Sequence[str] | None) -> list[Stage]:
        """The named stages in the order given, or every stage (sorted) when none is named."""
        if not names:
            return [self.stages[n] for n in sorted(self.stages)]
        return [self.get(n) for n in names]

    def _add(self, stage: Stage | Pipeline, source: str) -> None:
        if stage.name in self.stages or stage.name in self.pipelines:
            self.problems.append(PluginProblem(
                stage.name, source,
                f"duplicate stage name: already provided by {self.sources[stage.name]}"))
            return
        if isinstance(stage, Pipeline):
            self.pipelines[stage.name] = stage
        else:
            self.stages[stage.name] = stage
        self.sources[stage.name] = source


def _load_file(path: Path) -> object:
    """Import a plugin file under a private module name and return its ``STAGE``."""
    modname = f"harness_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    if not hasattr(module, "STAGE"):
        raise AttributeError("module defines no STAGE")
    return module.STAGE


def _finish(stage: object, name: str, source: str, default_kernels: Path | None,
            reg: Registry) -> None:
    problems = check_stage(stage, name)
    if problems:
        reg.problems.append(PluginProblem(name, source, "; ".join(problems)))
        return
    if isinstance(stage, Pipeline):
        reg.pending.append((stage, source))
        return
    assert isinstance(stage, Stage)
    if stage.kernel_dir is None:
        if default_kernels is None:
            reg.problems.append(PluginProblem(
                name, source, "entry-point plugins must set kernel_dir"))
            return
        stage = dataclasses.replace(stage, kernel_dir=default_kernels)
    kpath = Path(stage.kernel_dir) / stage.kernel_file
    if not kpath.is_file():
        reg.problems.append(PluginProblem(name, source, f"kernel file {kpath} not found"))
        return
    missing = missing_entry_points(stage)
    if missing:
        reg.problems.append(PluginProblem(
            name, source, f"entry point(s) {', '.join(missing)} not defined as extern \"C\" "
            f"kernels in {kpath.name} or the headers it includes"))
        return
    reg._add(stage, source)


#: Extra plugin folders, separated like PATH; each folder's kernels sit beside its plugins.
PATH_ENV = "HARNESS_PLUGIN_PATH"


def discover(plugin_dirs: Iterable[Path] | None = None, kernel_dir: Path | None = None,
             entry_points: bool = True) -> Registry:
    """Find every stage: ``*.py`` in ``plugin_dirs`` (default: the built-in folder, then the
    folders of ``$HARNESS_PLUGIN_PATH``), then the entry points."""
    reg = Registry()
    if plugin_dirs is not None:
        kdir = kernel_dir if kernel_dir is not None else paths.kernels_dir()
        folders = [(Path(d), kdir) for d in plugin_dirs]
    else:
        folders = [(paths.plugins_dir(), paths.kernels_dir())]
        extra = [Path(p) for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
        folders += [(d, d) for d in extra]
    for d, kdir in folders:
        for path in sorted(Path(d).glob("*.py")):
            if path.name.startswith("_"):
                continue
            try:
                stage = _load_file(path)
            except Exception as exc:  # a broken plugin must not stop the others
                reg.problems.append(PluginProblem(
                    path.stem, str(path), f"{type(exc).__name__}: {exc}"))
                continue
            _finish(stage, path.stem, str(path), kdir, reg)
    if entry_points:
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            source = f"entry point {ep.value}"
            try:
                stage = ep.load()
            except Exception as exc:
                reg.problems.append(PluginProblem(ep.name, source,
                                                  f"{type(exc).__name__}: {exc}"))
                continue
            _finish(stage, ep.name, source, None, reg)
    # Pipelines last: every step they compose must be a stage that loaded.
    for pipe, source in reg.pending:
        missing = [s for s in pipe.steps if s not in reg.stages]
        if missing:
            reg.problems.append(PluginProblem(pipe.name, source,
                                              f"steps not available: {', '.join(missing)}"))
        else:
            reg._add(pipe, source)
    reg.pending.clear()
    return reg
