"""The plugin contract: one frozen dataclass per stage.

A plugin module ``plugins/<name>.py`` exports ``STAGE = Stage(...)`` and nothing else needs
to know about it: the registry finds it by scanning the folder (or the ``harness.stages``
entry-point group), the harness compiles ``kernels/<name>.cu`` with ``-DBLOCK=<block>`` and
the variant's ``-D`` defines, calls the stage's ``enqueue`` with a :class:`Launcher` that
launches the compiled kernels, and judges the outputs with the declared tolerances against
the NumPy reference.

Words, each with one meaning here: to *launch* is to start one kernel on the GPU (what a
:class:`Launcher` does); to *enqueue* is to put one run of a stage on a stream, by launching
its kernels in order (what a stage's ``enqueue`` does); a *family* is a kind of input data,
declared by the plugin's domain; a *seed* is a random seed (and *the seed program* the
program whose pipeline a plugin may reproduce, as ``seed_summaries`` says).

Past 300 lines because it is the whole contract in one place (Stage, Pipeline, Variant,
Rows, the pipeline context's protocol and their checks at load): a plugin author reads one
module.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from harness.contract.datasheet import RATES
from harness.contract.launcher import Launcher
from harness.contract.tolerance import Tolerance

#: A point of the parameter space: axis name -> value (batch, in_f, k, ...).
Point = Mapping[str, Any]

#: Threads per block a stage's kernel is compiled for (``-DBLOCK``) unless it says otherwise.
DEFAULT_BLOCK = 256
#: The largest block CUDA launches.
MAX_BLOCK = 1024


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
        """Convert a command-line value; ValueError when it is not of the kind or allowed.
        A float axis takes no NaN, and an infinity only where it is the default (the 'none'
        of a clamp): a k of inf would write a row of nothing meaningful."""
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(f"{self.name} takes {self.kind.__name__} values, got "
                             f"{text!r}") from None
        if isinstance(value, float) and (math.isnan(value) or (
                math.isinf(value) and value != self.default)):
            raise ValueError(f"{self.name} must be a finite number, got {text}")
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
    #: The input families this variant takes, where it takes fewer than its stage (an int8
    #: path cannot hold a family whose values exceed int8); empty: the stage's.
    families: tuple[str, ...] = ()
    #: Validation cases of this variant alone, run after the stage's.
    cases: tuple[Mapping[str, Any], ...] = ()
    #: The ``-D`` values a tuning run (``--define``) set over the declared variant's; the
    #: name then carries them, ``default[LANES=4]``. Empty for a declared variant.
    tuning: tuple[tuple[str, str], ...] = ()
    #: The declared variant's name, where ``name`` carries a tuning run's values.
    base: str = ""

    @property
    def declared(self) -> str:
        """The variant's name as its plugin declares it, without a tuning run's values."""
        return self.base or self.name

    def tuned(self, over: Mapping[str, str]) -> Variant:
        """This variant with ``over``'s defines set (added, or replacing its own), named after
        every value a tuning run set: ``default`` with ``{"LANES": "4"}`` is
        ``default[LANES=4]``; tuned again with ``{"BLOCK": "64"}``,
        ``default[LANES=4,BLOCK=64]``."""
        if not over:
            return self
        tuning = {**dict(self.tuning), **over}
        label = ",".join(f"{k}={v}" for k, v in tuning.items())
        return dataclasses.replace(
            self, name=f"{self.declared}[{label}]",
            defines=tuple({**dict(self.defines), **over}.items()),
            tuning=tuple(tuning.items()), base=self.declared)

    def accepts(self, family: str) -> bool:
        """Whether the variant takes inputs of ``family``."""
        return not self.families or family in self.families

    def options(self) -> list[str]:
        """The nvcc options that select this variant."""
        return [f"-D{k}={v}" if v != "" else f"-D{k}" for k, v in self.defines]


#: ``fn(torch, tensors, point, variant) -> outputs``: a stage's math in PyTorch.
TorchFn = Callable[[Any, Mapping[str, Any], Point, Variant], dict[str, Any]]
#: Names a stage's own peers cannot take: the built-in peers' and the backends' names, and
#: the words of ``--peers``.
RESERVED_PEER_NAMES = ("torch", "torch_compile", "numpy", "pycuda", "auto", "none", "all")


@dataclass(frozen=True)
class Peer:
    """A named PyTorch peer of a stage beside its ``torch_impl``: another way PyTorch
    computes the stage (a library call, another precision), timed as ours are.

    ``fn(torch, tensors, point, variant)`` returns outputs as ``torch_impl`` does; its
    ``tensors`` are the inputs plus what ``prepare(torch, tensors, point)`` derived from them
    (weights cast or dequantised), made once per run outside the timed region, from inputs
    the stage does not overwrite. ``judged=False`` marks a speed reference that is not
    judged against the reference (another precision, no scales): ``note`` says why, and its
    rows are never a speedup's baseline. ``skip(point)`` says why the peer cannot run at a
    point (a library's shape rule), or None.
    """

    fn: TorchFn
    judged: bool = True
    note: str = ""
    prepare: Callable[[Any, Mapping[str, Any], Point], dict[str, Any]] | None = None
    skip: Callable[[Point], str | None] | None = None


@dataclass(frozen=True)
class Rows:
    """Rows of a target that are independent of one another, so that a large point's
    outputs can be checked on a sample of its rows (the README's "How a time is measured").

    Each row of an output along its dimension ``outputs[name]`` must depend only on the same
    row of each input named in ``inputs`` (along that input's dimension) and on the whole of
    the inputs not named: then the reference computed on the sampled rows alone, at the
    point with ``axis`` set to the sample's size, is those rows of the full reference. An
    activation-side stage's rows are its ``batch`` rows (each row's own threshold), a weight
    side's its ``out_f`` rows; anything with a global reduction (a min or max over the whole
    tensor) has none and declares none. Every output must be named.
    """

    #: The point's axis that counts the rows (``batch``, ``out_f``).
    axis: str
    #: Input -> its dimension of rows; an input not named is passed whole.
    inputs: Mapping[str, int]
    #: Output -> its dimension of rows.
    outputs: Mapping[str, int]

    def problems(self, axes: tuple[Axis, ...]) -> list[str]:
        """What is wrong with the declaration for a target of these axes."""
        out = [] if self.axis in {a.name for a in axes} else \
            [f"rows: axis {self.axis!r} is not an axis of the target"]
        if not self.outputs:
            out.append("rows: no output named")
        for kind, dims in (("input", self.inputs), ("output", self.outputs)):
            out += [f"rows: {kind} {k!r} has dimension {d!r}, not an int >= 0"
                    for k, d in dims.items() if not isinstance(d, int) or d < 0]
        return out


def _check_declarations(kind: str, name: str, axes: tuple[Axis, ...], rows: Rows | None,
                        compute_peak: str | None,
                        sanitize_shapes: tuple[Mapping[str, Any], ...] = ()) -> None:
    """ValueError, naming the target, for a ``rows``, ``compute_peak`` or
    ``sanitize_shapes`` it cannot have: raised while the plugin loads, so the registry
    reports it beside the others."""
    why = rows.problems(axes) if isinstance(rows, Rows) else \
        [] if rows is None else [f"rows is a {type(rows).__name__}, not a Rows"]
    if compute_peak is not None and compute_peak not in RATES:
        why.append(f"compute_peak {compute_peak!r} is not one of {', '.join(RATES)}")
    names = {a.name for a in axes}
    why += [f"sanitize_shapes names {sorted(set(shape) - names)}, not axes of the stage"
            for shape in sanitize_shapes if not set(shape) <= names]
    if why:
        raise ValueError(f"{kind} {name}: {'; '.join(why)}")


def _peer_lines(peers: Mapping[str, Peer]) -> list[str]:
    """``harness list --verbose``'s line for each peer: its name, whether it is judged, why
    not."""
    return [f"  peer {n}" + ("" if p.judged else " (not judged)") + (f": {p.note}" if p.note
                                                                   else "")
            for n, p in peers.items()]


MakeInputs = Callable[[np.random.Generator, str, Point], dict[str, np.ndarray]]
#: ``reference(inputs, point, variant, given=None)``; most references leave ``given`` out.
Reference = Callable[..., dict[str, np.ndarray]]
Enqueue = Callable[[Launcher, Mapping[str, Any], Point, Variant], None]
OutputSpecs = Callable[[Point], dict[str, tuple[tuple[int, ...], np.dtype]]]


def positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` takes (a large number for ``*args`` or a
    callable without a signature)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 99
    kinds = [p.kind for p in params]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return 99
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(k in positional for k in kinds)


class _Parametrised:
    """Axis, variant and point look-ups shared by stages and pipelines."""

    name: str
    description: str
    axes: tuple[Axis, ...]
    variants: tuple[Variant, ...]
    families: tuple[str, ...]

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

    def describe(self) -> str:
        """The description, then the variants' and axes' help texts, a line each."""
        lines = [f"{self.name}: {self.description or '(no description)'}", *self._details()]
        lines += [f"  variant {v.name}" + (f": {v.help}" if v.help else "")
                  for v in self.variants]
        lines += [f"  axis {a.name} = {a.default}" + (f": {a.help}" if a.help else "")
                  for a in self.axes]
        lines.append(f"  families: {', '.join(self.families)}")
        return "\n".join(lines)

    def _details(self) -> list[str]:
        return []


@dataclass(frozen=True)
class Stage(_Parametrised):
    """Everything the harness needs to validate, time and profile one kernel stage.

    The kernel is ``<name>.cu`` in ``kernel_dir``, compiled with ``-DBLOCK=<block>`` (a
    variant's own ``BLOCK`` define wins) and the variant's defines. ``enqueue(launch, bufs,
    point, variant)`` launches its kernels for one run. ``reference(inputs, point, variant,
    given=None)`` returns the expected outputs; ``given`` is the kernel's own outputs, for a
    reference that judges on the kernel's own intermediates (the spike stages judge integer
    outputs on the kernel's float32 ``vth``, as the README's Semantics says); one that needs
    nothing of them leaves it out.
    """

    name: str
    entry_points: tuple[str, ...]
    axes: tuple[Axis, ...]
    #: The input families the stage is validated on (the plugin's domain declares them).
    families: tuple[str, ...]
    make_inputs: MakeInputs
    outputs: OutputSpecs
    reference: Reference
    enqueue: Enqueue
    bytes_moved: Callable[[Point], int]
    flops: Callable[[Point], int]
    tolerances: Mapping[str, Tolerance]
    cases: tuple[Mapping[str, Any], ...]
    default_sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    variants: tuple[Variant, ...] = (Variant("default"),)
    #: Threads per block: passed to the kernel as ``-DBLOCK`` and to ``enqueue`` as
    #: ``launch.block``, so kernel and launch agree.
    block: int = DEFAULT_BLOCK
    #: Inputs the kernel is allowed to overwrite; any other must survive the run.
    mutates: tuple[str, ...] = ()
    #: In-place outputs: output name -> the input whose buffer the kernel writes it into.
    inplace: Mapping[str, str] = field(default_factory=dict)
    #: Outputs a pipeline's step may leave out: its launch then passes a null pointer and the
    #: kernel writes none (a standalone run allocates and judges every output).
    optional_outputs: tuple[str, ...] = ()
    #: One line for ``harness list --verbose``.
    description: str = ""
    #: Folder of the kernel file; None means the built-in ``kernels/``. Entry-point plugins
    #: set it.
    kernel_dir: Path | None = None
    #: Stage-specific bad input: ``check_inputs(inputs, point)`` returns why, or None.
    check_inputs: Callable[[Mapping[str, np.ndarray], Point], str | None] | None = None
    #: The same math in PyTorch, ``torch_impl(torch, tensors, point, variant) -> outputs``:
    #: the ``torch`` and ``torch_compile`` peers. None: the stage has neither.
    torch_impl: TorchFn | None = None
    #: More PyTorch peers, by name (``--peers NAME``; the names a CSV row's ``backend`` takes).
    peers: Mapping[str, Peer] = field(default_factory=dict)
    #: Outputs whose extent the kernel decides (T planes of a buffer that holds more):
    #: ``trim(outputs, point)`` returns them cut to what was written, before judging.
    trim: Callable[[Mapping[str, np.ndarray], Point], dict[str, np.ndarray]] | None = None
    #: Bytes of a run that depend on the data (T): ``bytes_from_outputs(point, outputs)``;
    #: a bench row uses it over ``bytes_moved``, which assumes a typical value.
    bytes_from_outputs: Callable[[Point, Mapping[str, np.ndarray]], int] | None = None
    #: Device scratch the kernel needs between its launches (``name -> (shape, dtype)``):
    #: allocated beside the outputs and passed in ``bufs``, never read back or judged.
    workspace: OutputSpecs | None = None
    #: What ``make_inputs`` draws (``name -> (shape, dtype)``), declared as ``outputs`` is:
    #: every run's inputs are checked against it, and the memory guard counts it. None:
    #: undeclared (the inputs are still checked to be arrays).
    inputs: OutputSpecs | None = None
    #: Workspace buffers that must start as zeros (tickets of a split-K reduction, say):
    #: zeroed once when allocated; the kernel leaves them zero after each run.
    zeroed: tuple[str, ...] = ()
    #: Header libraries the kernel includes beyond ``kernels/common``, by name
    #: (``"cutlass"``: the CUTLASS/CuTe headers of the ``nvidia-cutlass`` wheel).
    header_libraries: tuple[str, ...] = ()
    #: More nvcc options that shape the code (``-std=c++17``): in every build and the hash.
    nvcc_options: tuple[str, ...] = ()
    #: Built for the device's arch-specific target (``sm_90a`` on Hopper: wgmma, setmaxnreg),
    #: whose code runs only on that exact architecture.
    arch_specific: bool = False
    #: How the outputs may be checked on a sample of rows at a large point; None: they may
    #: not, and every point is checked whole against the full reference, however slow.
    rows: Rows | None = None
    #: The defines that tell the variants apart, which the buffers a build is given follow
    #: (``LAYOUT``, ``PACKED_WIDE``): ``--define`` may not set them. None: inferred, as the
    #: defines whose value differs between variants that pin different axes
    #: (``contract.defines.selectors``); declare them where a tuning default also differs
    #: between such variants (a tile one variant takes and another does not).
    selectors: tuple[str, ...] | None = None
    #: The datasheet rate the kernel's arithmetic runs at (a key of
    #: ``contract.datasheet.RATES``: ``int8_dense``, ``bf16_dense``, ``fp32``): a row's
    #: TOPS is set against it. None: no compute peak applies (a memory-bound stage).
    compute_peak: str | None = None
    #: Shapes (``{axis: value}``) compute-sanitizer watches besides the harness's small and
    #: odd ones: where those never reach one of the kernel's paths (a tensor-core path that
    #: needs N % 128 == 0, a wide-group path), one of these does. A CPU test holds every
    #: entry point to being launched at some watched point.
    sanitize_shapes: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        _check_declarations("stage", self.name, self.axes, self.rows, self.compute_peak,
                            self.sanitize_shapes)
        if self.selectors is not None and (
                not isinstance(self.selectors, tuple)
                or not all(isinstance(x, str) for x in self.selectors)
                or not set(self.selectors) <= {k for v in self.variants for k, _ in v.defines}):
            raise ValueError(f"stage {self.name}: selectors {self.selectors!r} must be a tuple "
                             "of defines its variants declare")
        # Whether ``reference`` takes ``given``: found once here, not on every call (the
        # numpy backend times the reference itself).
        object.__setattr__(self, "_takes_given",
                           callable(self.reference) and positional_arity(self.reference) >= 4)

    def _details(self) -> list[str]:
        return [f"  kernel {self.kernel_file} ({', '.join(self.entry_points)}), "
                f"block {self.block}"] + \
            _peer_lines(self.peers) + \
            ([f"  rows along {self.rows.axis} (a large point is checked on a sample of them)"]
             if self.rows is not None else []) + \
            ([f"  compute peak: the datasheet's {self.compute_peak}"]
             if self.compute_peak is not None else [])

    @property
    def reads_outputs(self) -> bool:
        """Whether the reference reads the kernel's own outputs (it takes ``given``): its
        result belongs to one run, so it is not kept for another."""
        return bool(self._takes_given)  # type: ignore[attr-defined]

    @property
    def kernel_file(self) -> str:
        """The kernel's file name: the stage's name, ``.cu``."""
        return f"{self.name}.cu"

    def block_for(self, variant: Variant) -> int:
        """Threads per block of a variant's build: its ``BLOCK`` define (a tuning sweep's
        ``--define BLOCK=...``), else the stage's ``block``."""
        return int(dict(variant.defines).get("BLOCK", self.block))

    def expected(self, inputs: Mapping[str, np.ndarray], point: Point, variant: Variant,
                 given: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """The reference outputs; ``given`` (the kernel's own outputs) is passed on only to
        a reference that takes it."""
        if self._takes_given:  # type: ignore[attr-defined]
            return self.reference(inputs, point, variant, given)
        return self.reference(inputs, point, variant)

    def may_mutate(self, name: str) -> bool:
        """Whether the kernel may overwrite input ``name``."""
        return name in self.mutates or name in self.inplace.values()


def workspace(stage: Stage, point: Point) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The scratch buffers a run of the stage at ``point`` needs (none when it declares none)."""
    return dict(stage.workspace(point)) if stage.workspace is not None else {}


class PipelineContext(Protocol):
    """What a pipeline's ``run`` gets: its steps' launchers on two streams, events, buffers.

    Stream 0 carries the activation path, stream 1 the weight path. ``mark`` records a
    named event on a stream and ``wait`` makes a stream wait for one; ``read`` copies a
    device buffer to the host (synchronising its stream: a host-side decision); ``alloc``
    gives scratch memory that lives until the run's results are read.
    """

    def launcher(self, stage: str, variant: str, stream: int) -> Launcher: ...

    def step(self, stage: str, variant: str, stream: int, bufs: Mapping[str, Any],
             early: bool = False, **values: Any) -> None:
        """Enqueue a stage through its own plugin's ``enqueue``, at the point of ``values``
        (those that are axes of the stage), on a stream. ``early``: its first launch, where
        the stage marks its kernel as one that waits on the device for the kernel before it
        (``launch(..., waits=True)``), is that kernel's programmatic dependent, so its blocks
        may start while that kernel ends; no event may come between the two."""

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
    its own). ``run(ctx, bufs, point)`` enqueues one run of it; ``check(inputs, point,
    outputs, host)`` judges a run's outputs against the chained references and returns one
    Comparison per property."""

    name: str
    steps: tuple[str, ...]
    axes: tuple[Axis, ...]
    #: The input families the pipeline is validated on (the plugin's domain declares them).
    families: tuple[str, ...]
    make_inputs: MakeInputs
    run: Callable[[PipelineContext, Mapping[str, Any], Point], PipelineTrace]
    check: Callable[..., list[Any]]
    reference: Callable[[Mapping[str, np.ndarray], Point], dict[str, Any]]
    bytes_moved: Callable[[Point], int]
    flops: Callable[[Point], int]
    cases: tuple[Mapping[str, Any], ...]
    default_sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    #: One line for ``harness list --verbose``.
    description: str = ""
    #: Variants pin an axis that ``run`` reads (``path=staged`` or ``fused``, say).
    variants: tuple[Variant, ...] = (Variant("default"),)
    #: Whether a sweep also writes the seed program's five batch-size summaries beside its CSV.
    seed_summaries: bool = False
    #: How ``check`` may judge a sample of rows at a large point (its inputs, outputs and
    #: point cut to the sample; the host values whole); None: always the whole run.
    rows: Rows | None = None
    #: Pipeline-specific bad input: ``check_inputs(inputs, point)`` returns why, or None
    #: (a point its steps would answer wrongly without a word, say).
    check_inputs: Callable[[Mapping[str, np.ndarray], Point], str | None] | None = None
    #: PyTorch's ways to the same result from the same inputs (``--peers NAME``), timed
    #: beside the pipeline in the same process: speed references only (``judged=False``),
    #: since ``check`` judges the steps' intermediates, which a peer does not make.
    peers: Mapping[str, Peer] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_declarations("pipeline", self.name, self.axes, self.rows, None)

    def _details(self) -> list[str]:
        return [f"  steps {' -> '.join(self.steps)}", *_peer_lines(self.peers)]

    def variant_of(self, point: Point) -> Variant:
        """The variant whose pinned axes the point has (the first one without pins
        otherwise)."""
        for v in self.variants:
            if v.pins and all(point.get(k) == val for k, val in v.pins):
                return v
        return next((v for v in self.variants if not v.pins), self.variants[0])
