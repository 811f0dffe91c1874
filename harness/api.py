"""The public plugin API: everything a plugin author needs from the generic harness.

A stage is two files of one name: ``kernels/<name>.cu`` (its ``extern "C"`` kernels) and
``plugins/<name>.py``, which exports ``STAGE = Stage(...)`` (or a :class:`Pipeline` of
stages) and nothing else needs to know about it. A plugin imports from here and from its own
domain package (for the spike-stream stages, :mod:`harness.spikes`: shared axes, cases,
input families, SPEC's math), never from the harness's internals; import-linter checks that
in CI.

What a :class:`Stage` declares, and what the harness does with it:

- ``name``: the plugin file's stem; the kernel file is ``<name>.cu`` (in ``kernels/``, or in
  ``kernel_dir`` for a plugin installed through the ``harness.stages`` entry points).
- ``entry_points``: the ``extern "C"`` kernels it launches; each must be defined in the
  ``.cu`` file or a header it includes (checked when the plugin is loaded).
- ``block`` (default 256): threads per block, compiled in as ``-DBLOCK`` and handed to
  ``enqueue`` as ``launch.block``; ``variants`` add their own ``-D`` defines.
- ``axes``, ``cases`` (validation points), ``default_sweep`` and ``families`` (the input
  families validation draws from): usually the domain's shared declarations.
- ``make_inputs(rng, family, point)``, ``inputs(point)`` and ``outputs(point)`` (shapes and
  dtypes; every run's inputs and reference outputs are checked against them, and the
  memory guard counts them; ``inputs`` may be left out),
  ``reference(inputs, point, variant, given=None)`` (``given``, the kernel's own outputs,
  is optional: leave it out unless the reference judges on the kernel's intermediates),
  ``tolerances`` (each with its reason).
- ``enqueue(launch, bufs, point, variant)``: launches the kernels of one run,
  ``launch("kernel", grid, (launch.block, 1, 1), *args)``.
- ``bytes_moved(point)`` and ``flops(point)``: what a row's GB/s and % of peak are
  computed from.
- ``torch_impl(torch, tensors, point, variant)``: the same math in PyTorch (the ``torch`` and
  ``torch_compile`` peers); ``peers``: more of them by name, each a :class:`Peer` (its
  ``prepare`` casts weights outside the timed region; ``judged=False`` for a speed
  reference not judged against the reference).
- ``rows``: a :class:`Rows` where the outputs' rows are independent of one another
  (``Rows("batch", {"q": 0, "vth": 0}, {"out": 0})``: each row of ``out`` depends on that
  row of ``q`` and ``vth`` and on the whole of the other inputs), so that a timed point of
  more than 2^26 elements is checked on a sample of rows against the reference computed on
  them alone; left out, every point is checked whole. A :class:`Pipeline` may declare it
  too.
- ``compute_peak``: the datasheet rate the kernel's arithmetic runs at (``"int8_dense"``,
  ``"bf16_dense"``, ``"fp32"``): a row's TOPS is given as a % of that figure for its GPU.
- ``sanitize_shapes``: points (``{axis: value}``) compute-sanitizer watches besides the
  harness's small odd shapes, where those never reach one of the kernel's paths.

``harness list --verbose`` shows each stage's ``description`` and its variants' and axes'
``help`` texts.
"""

from __future__ import annotations

from harness.contract.launcher import Launcher
from harness.contract.stage import (
    Axis,
    Peer,
    Pipeline,
    PipelineContext,
    PipelineTrace,
    Point,
    Rows,
    Stage,
    Variant,
)
from harness.contract.tolerance import Comparison, Exact, NormRel, RelTol, Tolerance
from harness.errors import BadInput

__all__ = [
    "Axis", "BadInput", "Comparison", "Exact", "Launcher", "NormRel", "Peer", "Pipeline",
    "PipelineContext", "PipelineTrace", "Point", "RelTol", "Rows", "Stage", "Tolerance",
    "Variant",
]
