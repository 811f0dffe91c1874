"""Plugin discovery: scan ``plugins/`` and the ``harness.stages`` entry-point group.

Nothing is registered by import side effects: a plugin module only declares ``STAGE``.
A broken plugin (any exception at import, ``SystemExit`` included; a missing or malformed
``STAGE``; a name outside ``[a-z][a-z0-9_]*``; a missing kernel file; an entry point its
kernel does not define; a duplicate name) becomes a :class:`PluginProblem` naming it, and
every other plugin still loads. Only ``KeyboardInterrupt`` goes through: it is the user's.

A plugin is code that runs with the harness's rights the moment it is found. The built-in
folder is part of the harness; the *external* plugins (the folders of
``$HARNESS_PLUGIN_PATH`` and the entry points of installed packages) can be switched off,
with ``external=False`` or ``HARNESS_NO_EXTERNAL_PLUGINS=1``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from harness import paths
from harness.contract.checks import check_stage
from harness.contract.kernel import missing_entry_points
from harness.contract.stage import Pipeline, Stage
from harness.errors import BadInput, PluginError

ENTRY_POINT_GROUP = "harness.stages"
#: Extra plugin folders, separated like PATH; each folder's kernels sit beside its plugins.
PATH_ENV = "HARNESS_PLUGIN_PATH"
#: Set to 1 (or true, yes, on): no external plugin is imported, only the built-in ones.
NO_EXTERNAL_ENV = "HARNESS_NO_EXTERNAL_PLUGINS"


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
    #: Whether the external plugins (``$HARNESS_PLUGIN_PATH``, entry points) were looked at.
    external: bool = True

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
        """The named stages in the order given, or every stage (sorted) when none is named;
        BadInput for a name given twice (its rows would be listed twice)."""
        if not names:
            return [self.stages[n] for n in sorted(self.stages)]
        named_once("stage", names)
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


def named_once(kind: str, names: Sequence[str]) -> None:
    """BadInput when a name is given twice (its rows would be measured or listed twice,
    under one key)."""
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise BadInput(f"{kind} {', '.join(twice)} named twice")


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
        if not hasattr(module, "STAGE"):
            raise AttributeError("module defines no STAGE")
        return module.STAGE
    except BaseException:
        sys.modules.pop(modname, None)
        raise


def _why(exc: BaseException) -> str:
    """A plugin's exception as one line of a problem report."""
    if isinstance(exc, SystemExit):
        return f"exited while being imported (SystemExit: {exc.code!r})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _guarded(load: Callable[[], object]) -> tuple[object, str | None]:
    """``load()``'s result, or why it failed: any exception a plugin raises, ``SystemExit``
    and other ``BaseException`` included (the user's ``KeyboardInterrupt`` goes through)."""
    try:
        return load(), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a plugin must not take the harness down
        return None, _why(exc)


def _finish(stage: object, name: str, source: str, default_kernels: Path | None,
            reg: Registry) -> None:
    _, why = _guarded(lambda: _admit(stage, name, source, default_kernels, reg))
    if why is not None:
        reg.problems.append(PluginProblem(name, source, why))


def _admit(stage: object, name: str, source: str, default_kernels: Path | None,
           reg: Registry) -> None:
    """Check a loaded ``STAGE`` and add it to ``reg``, or add the problems found."""
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


def external_allowed(external: bool | None = None) -> bool:
    """Whether external plugins are imported: ``external`` when given, else unless
    ``$HARNESS_NO_EXTERNAL_PLUGINS`` is set to 1, true, yes or on (BadInput on another
    value)."""
    if external is not None:
        return external
    value = os.environ.get(NO_EXTERNAL_ENV, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return True
    if value in ("1", "true", "yes", "on"):
        return False
    raise BadInput(f"{NO_EXTERNAL_ENV}={value!r}: expected 1 (external plugins off) or 0")


def plugin_path() -> list[Path]:
    """The folders of ``$HARNESS_PLUGIN_PATH``; BadInput naming an entry that is no folder
    (a typo would otherwise load nothing, silently)."""
    folders = [Path(p) for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    for d in folders:
        if not d.is_dir():
            raise BadInput(f"{PATH_ENV} names {d}, which is not a folder (it lists folders "
                           f"of plugins, separated by {os.pathsep!r})")
    return folders


def discover(plugin_dirs: Iterable[Path] | None = None, kernel_dir: Path | None = None,
             entry_points: bool = True, external: bool | None = None) -> Registry:
    """Find every stage: ``*.py`` in ``plugin_dirs`` (default: the built-in folder, then the
    folders of ``$HARNESS_PLUGIN_PATH``), then the entry points. With ``external`` False
    (default: ``external_allowed``), neither ``$HARNESS_PLUGIN_PATH`` nor the entry points
    are looked at: only the built-in plugins (or ``plugin_dirs``) are imported."""
    allowed = external_allowed(external)
    reg = Registry(external=allowed)
    if plugin_dirs is not None:
        kdir = kernel_dir if kernel_dir is not None else paths.kernels_dir()
        folders = [(Path(d), kdir) for d in plugin_dirs]
    else:
        folders = [(paths.plugins_dir(), paths.kernels_dir())]
        folders += [(d, d) for d in (plugin_path() if allowed else [])]
    for d, kdir in folders:
        for path in sorted(Path(d).glob("*.py")):
            if path.name.startswith("_"):
                continue
            stage, why = _guarded(lambda path=path: _load_file(path))  # type: ignore[misc]
            if why is not None:
                reg.problems.append(PluginProblem(path.stem, str(path), why))
                continue
            _finish(stage, path.stem, str(path), kdir, reg)
    if entry_points and allowed:
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            source = f"entry point {ep.value}"
            stage, why = _guarded(ep.load)
            if why is not None:
                reg.problems.append(PluginProblem(ep.name, source, why))
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
