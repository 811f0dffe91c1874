"""The public plugin API: everything a plugin author needs from the generic harness.

A plugin (``plugins/<name>.py``) imports from here and from its own domain package (for the
spike-stream stages, :mod:`harness.spikes`), never from the harness's internals: import-linter
checks that in CI. A plugin exports ``STAGE`` (a :class:`Stage`, or a :class:`Pipeline` of
stages) and nothing else needs to know about it.
"""

from __future__ import annotations

from harness.contract.stage import (
    Axis,
    Launcher,
    Pipeline,
    PipelineContext,
    PipelineTrace,
    Point,
    Stage,
    Variant,
)
from harness.contract.tolerance import Comparison, Exact, NormRel, RelTol, Tolerance
from harness.errors import BadInput

__all__ = [
    "Axis", "BadInput", "Comparison", "Exact", "Launcher", "NormRel", "Pipeline",
    "PipelineContext", "PipelineTrace", "Point", "RelTol", "Stage", "Tolerance", "Variant",
]
