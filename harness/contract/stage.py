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

from harness.contract.tolerance import Tolerance

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
    #: Largest allowed value (inclusive), or None.
    maximum: Any = None
    #: The allowed values, when there is a fixed set.
    choices: tuple[Any, ...] = ()

    def parse(self, text: str) -> Any:
        """Convert a command-line value; ValueError when it is not of the kind or allowed."""
        value = self.kind(text)
        if self.minimum is not None and not value >= self.minimum:
            raise ValueError(f"{self.name} must be >= {self.minimum}, got {text}")
        if self.maximum is not None and not value <= self.maximum:
            raise ValueError(f"{self.name} must be <= {self.maximum}, got {text}")
        if self.choices and value not in self.choices:
            raise ValueError(f"unknown {self.name} {text!r} (known: "
                             f"{', '.join(map(str, self.choices))})")
        return value


@dataclass(frozen=True)
class Variant:
    """A compiled flavour of a kernel: a name and the ``-D`` defines that make it."""

    name: str
    defines: tuple[tuple[str, str], ...] = ()
    help: str = ""
    #: Axes this variant fixes (a mode compiled in, say): every point of it takes these values.
    pins: tuple[tuple[str, Any], ...] = ()

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


class _Parametrised:
    """Axis, variant and point look-ups shared by stages and pipelines."""

    axes: tuple[Axis, ...]
    variants: tuple[Variant, ...]

    def axis(self, name: str) -> Axis:
        """The axis called ``name``; KeyError when there is none."""
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    def variant(self, name: str) -> Variant:
        """The variant called ``name``; KeyError when there is none."""
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    def point(self, variant: Variant | None = None, **values: Any) -> dict[str, Any]:
        """A full point: the axes' defaults overridden by ``values``, then by the variant's
        pinned axes."""
        values = {**values, **dict(variant.pins if variant else ())}
        unknown = set(values) - {a.name for a in self.axes}
        if unknown:
            raise KeyError(", ".join(sorted(unknown)))
        return {a.name: values.get(a.name, a.default) for a in self.axes}


@dataclass(frozen=True)
class Stage(_Parametrised):
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
    #: Inputs the kernel is allowed to overwrite; any other must survive the launch.
    mutates: tuple[str, ...] = ()
    #: In-place outputs: output name -> the input whose buffer the kernel writes it into.
    inplace: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    #: Folder of ``kernel``; None means the built-in ``kernels/``. Entry-point plugins set it.
    kernel_dir: Path | None = None
    #: Stage-specific bad input: ``check_inputs(inputs, point)`` returns why, or None.
    check_inputs: Callable[[Mapping[str, np.ndarray], Point], str | None] | None = None
    #: The same math in PyTorch, ``torch_impl(torch, tensors, point, variant) -> outputs``:
    #: the ``torch`` and ``torch_compile`` peers. None: the stage has no peers.
    torch_impl: Callable[[Any, Mapping[str, Any], Point, Variant], dict[str, Any]] | None = None
    #: Outputs whose extent the kernel decides (T planes of a buffer that holds more):
    #: ``trim(outputs, point)`` returns them cut to what was written, before judging.
    trim: Callable[[Mapping[str, np.ndarray], Point], dict[str, np.ndarray]] | None = None
    #: Bytes of a run that depend on the data (T): ``bytes_from_outputs(point, outputs)``;
    #: a bench row uses it over ``bytes_moved``, which assumes a typical value.
    bytes_from_outputs: Callable[[Point, Mapping[str, np.ndarray]], int] | None = None
    #: Device scratch the kernel needs between its launches (``name -> (shape, dtype)``):
    #: allocated beside the outputs and passed in ``bufs``, never read back or judged.
    workspace: OutputSpecs | None = None

    def may_mutate(self, name: str) -> bool:
        """Whether the kernel may overwrite input ``name``."""
        return name in self.mutates or name in self.inplace.values()


def workspace(stage: Stage, point: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The scratch buffers a stage's launch at ``point`` needs (none when it declares none)."""
    return dict(stage.workspace(point)) if stage.workspace is not None else {}


class PipelineContext(Protocol):
    """What a pipeline's ``run`` gets: stage launchers on two streams, events, buffers.

    Stream 0 carries the activation path, stream 1 the weight path. ``mark`` records a
    named event on a stream and ``wait`` makes a stream wait for one; ``read`` copies a
    device buffer to the host (synchronising its stream: a host-side decision); ``alloc``
    gives scratch memory that lives until the run's results are read.
    """

    def launcher(self, stage: str, variant: str, stream: int) -> Launcher: ...

    def step(self, stage: str, variant: str, stream: int, bufs: Mapping[str, Any],
             **values: Any) -> None:
        """Launch a stage through its own plugin's ``launch``, at the point of ``values``
        (those that are axes of the stage), on a stream."""

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> Any: ...

    def read(self, buf: Any, shape: tuple[int, ...], dtype: Any, stream: int) -> np.ndarray: ...

    def mark(self, name: str, stream: int) -> None: ...

    def wait(self, name: str, stream: int) -> None: ...


@dataclass(frozen=True)
class PipelineTrace:
    """What one pipeline run left: device outputs to read back, host values, and the
    named timing intervals (pairs of event names; several pairs of one name add up)."""

    outputs: dict[str, tuple[Any, tuple[int, ...], np.dtype]]
    host: dict[str, Any]
    intervals: dict[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class Pipeline(_Parametrised):
    """Several stages' kernels composed on two streams (``plugins/<name>.py``, no kernel of
    its own). ``check(inputs, point, outputs, host)`` judges a run's outputs against the
    chained references and returns one Comparison per property."""

    name: str
    steps: tuple[str, ...]
    axes: tuple[Axis, ...]
    make_inputs: MakeInputs
    run: Callable[[PipelineContext, Mapping[str, Any], Point], PipelineTrace]
    check: Callable[..., list[Any]]
    reference: Callable[[Mapping[str, np.ndarray], Point], dict[str, Any]]
    bytes_moved: Callable[[Point], int]
    flops: Callable[[Point], int]
    cases: tuple[Mapping[str, Any], ...]
    default_sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    families: tuple[str, ...] = FAMILIES
    description: str = ""
    #: Variants pin an axis that ``run`` reads (``path=staged`` or ``fused``, say).
    variants: tuple[Variant, ...] = (Variant("default"),)
    #: Whether a sweep also writes the seed's five batch-size summaries beside its CSV.
    seed_summaries: bool = False

    def variant_of(self, point: Point) -> Variant:
        """The variant whose pinned axes the point has (the first one without pins
        otherwise)."""
        for v in self.variants:
            if v.pins and all(point.get(k) == val for k, val in v.pins):
                return v
        return next((v for v in self.variants if not v.pins), self.variants[0])


def check_pipeline(p: Pipeline, expected_name: str | None = None) -> list[str]:
    """What is wrong with a declared pipeline (an empty list when nothing is)."""
    problems = []
    if expected_name is not None and p.name != expected_name:
        problems.append(f"name {p.name!r} differs from the file stem {expected_name!r}")
    for f in ("make_inputs", "run", "check", "reference", "bytes_moved", "flops"):
        if not callable(getattr(p, f)):
            problems.append(f"field {f} is not callable")
    if not p.steps:
        problems.append("no steps declared")
    if not p.cases:
        problems.append("no validation cases declared")
    return problems


#: Fields that must be callables, checked when a plugin is loaded.
CALLABLE_FIELDS: Sequence[str] = (
    "make_inputs", "outputs", "reference", "launch", "bytes_moved", "flops",
)


def check_stage(stage: object, expected_name: str | None = None) -> list[str]:
    """What is wrong with a plugin's declared stage (an empty list when nothing is)."""
    if isinstance(stage, Pipeline):
        return check_pipeline(stage, expected_name)
    if not isinstance(stage, Stage):
        return [f"STAGE is a {type(stage).__name__}, not a harness.contract.stage.Stage"]
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
    for v in stage.variants:
        for key, _ in v.pins:
            if key not in names:
                problems.append(f"variant {v.name} pins unknown axis {key!r}")
    if stage.workspace is not None and stage.cases and callable(stage.outputs):
        try:
            p = stage.point(stage.variants[0], **stage.cases[0])
            clash = set(stage.workspace(p)) & set(stage.outputs(p))
        except Exception as exc:  # a declaration error, reported like the others
            clash, problems = set(), [*problems, f"workspace of the first case: {exc}"]
        if clash:
            problems.append(f"workspace reuses output name(s) {', '.join(sorted(clash))}")
    return problems
