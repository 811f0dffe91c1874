"""The plugin contract: one frozen dataclass per stage.

A plugin module ``plugins/<name>.py`` exports ``STAGE = Stage(...)`` and nothing else needs
to know about it: the registry finds it by scanning the folder (or the ``harness.stages``
entry-point group), the harness compiles ``kernels/<name>.cu`` with the declared ``-D``
defines, launches it through :class:`Launcher`, and judges its outputs with the declared
tolerances against the NumPy reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from harness.tolerance import Tolerance

#: A point of the parameter space: axis name -> value (batch, in_f, k, ...).
Point = Mapping[str, Any]

#: The input families every stage accepts by default (SPEC.md, validation rules).
FAMILIES: tuple[str, ...] = ("normal", "llm", "seed", "edge")


@dataclass(frozen=True)
class Axis:
    """One parameter of a stage, with its default and type (int, float or str)."""

    name: str
    default: Any
    kind: type = int
    help: str = ""
    #: Smallest allowed value (inclusive), or None.
    minimum: Any = None

    def parse(self, text: str) -> Any:
        """Convert a command-line value; ValueError when it is not of the kind or too small."""
        value = self.kind(text)
        if self.minimum is not None and not value >= self.minimum:
            raise ValueError(f"{self.name} must be >= {self.minimum}, got {text}")
        return value


@dataclass(frozen=True)
class Variant:
    """A compiled flavour of a kernel: a name and the ``-D`` defines that make it."""

    name: str
    defines: tuple[tuple[str, str], ...] = ()
    help: str = ""

    def options(self) -> list[str]:
        """The nvcc options that select this variant."""
        return [f"-D{k}={v}" if v != "" else f"-D{k}" for k, v in self.defines]


class Launcher(Protocol):
    """What a plugin's ``launch`` gets: calls a kernel of its compiled module on the stream.

    ``launcher("name", grid, block, *args)`` launches ``extern "C"`` function ``name``;
    device buffers are passed as they come in ``bufs``, scalars as NumPy scalars
    (``np.int32(B)``, ``np.float32(k)``), whose types fix the launch signature.
    """

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], *args: Any,
                 shared: int = 0) -> None: ...


MakeInputs = Callable[[np.random.Generator, str, Point], dict[str, np.ndarray]]
Reference = Callable[
    [Mapping[str, np.ndarray], Point, Variant, Mapping[str, np.ndarray] | None],
    dict[str, np.ndarray],
]
Launch = Callable[[Launcher, Mapping[str, Any], Point, Variant], None]
OutputSpecs = Callable[[Point], dict[str, tuple[tuple[int, ...], np.dtype]]]


@dataclass(frozen=True)
class Stage:
    """Everything the harness needs to validate, time and profile one kernel stage.

    ``reference(inputs, point, variant, given)`` returns the expected outputs. ``given`` is
    the kernel's own outputs (or None): SPEC.md judges integer outputs on the kernel's own
    float intermediates (``vth``), so a reference may take those from ``given``.
    """

    name: str
    kernel: str
    entry_points: tuple[str, ...]
    axes: tuple[Axis, ...]
    make_inputs: MakeInputs
    outputs: OutputSpecs
    reference: Reference
    launch: Launch
    bytes_moved: Callable[[Point], int]
    flops: Callable[[Point], int]
    tolerances: Mapping[str, Tolerance]
    cases: tuple[Mapping[str, Any], ...]
    default_sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    variants: tuple[Variant, ...] = (Variant("default"),)
    families: tuple[str, ...] = FAMILIES
    #: Inputs the kernel is allowed to overwrite (in-place stages); any other must survive.
    mutates: tuple[str, ...] = ()
    description: str = ""
    #: Folder of ``kernel``; None means the built-in ``kernels/``. Entry-point plugins set it.
    kernel_dir: Path | None = None

    def axis(self, name: str) -> Axis:
        """The axis called ``name``; KeyError when the stage has none."""
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    def variant(self, name: str) -> Variant:
        """The variant called ``name``; KeyError when the stage has none."""
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    def point(self, **values: Any) -> dict[str, Any]:
        """A full point: the axes' defaults overridden by ``values``."""
        unknown = set(values) - {a.name for a in self.axes}
        if unknown:
            raise KeyError(", ".join(sorted(unknown)))
        return {a.name: values.get(a.name, a.default) for a in self.axes}


#: Fields that must be callables, checked when a plugin is loaded.
CALLABLE_FIELDS: Sequence[str] = (
    "make_inputs", "outputs", "reference", "launch", "bytes_moved", "flops",
)


def check_stage(stage: object, expected_name: str | None = None) -> list[str]:
    """What is wrong with a plugin's declared stage (an empty list when nothing is)."""
    if not isinstance(stage, Stage):
        return [f"STAGE is a {type(stage).__name__}, not a harness.plugin.Stage"]
    problems = []
    if expected_name is not None and stage.name != expected_name:
        problems.append(f"name {stage.name!r} differs from the file stem {expected_name!r}")
    if Path(stage.kernel).stem != stage.name:
        problems.append(f"kernel file {stage.kernel!r} is not named {stage.name}.cu")
    for f in CALLABLE_FIELDS:
        if not callable(getattr(stage, f)):
            problems.append(f"field {f} is not callable")
    if not stage.entry_points:
        problems.append("no entry_points declared")
    names = [a.name for a in stage.axes]
    if len(set(names)) != len(names):
        problems.append("duplicate axis names")
    if not stage.cases:
        problems.append("no validation cases declared")
    if not stage.tolerances:
        problems.append("no tolerances declared")
    for out, tol in stage.tolerances.items():
        if not getattr(tol, "reason", ""):
            problems.append(f"tolerance of {out!r} gives no reason")
    vnames = [v.name for v in stage.variants]
    if not vnames or len(set(vnames)) != len(vnames):
        problems.append("variants must be non-empty with unique names")
    for key in stage.default_sweep:
        if key not in names:
            problems.append(f"default_sweep names unknown axis {key!r}")
    return problems
