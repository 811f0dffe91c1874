"""Axes that the chained activation-side stages declare alike, declared once here so that a
default or a bound cannot drift between a stage and the one that feeds it."""

from __future__ import annotations

from harness.api import Axis
from harness.spikes import spec

#: Rows of the activations.
BATCH = Axis("batch", 1024, int, "rows B", minimum=1)
#: Columns of the activations.
IN_F = Axis("in_f", 3584, int, "columns F", minimum=1)
#: Step 1's threshold divisor, for the stages that compute step 1.
K = Axis("k", 3.0, float, "threshold divisor (> 0)", minimum=1e-30)
#: The same k, for the later stages: it shapes the inputs they are made from.
K_INPUT = Axis("k", 3.0, float, "threshold divisor of the step-1 input", minimum=1e-30)


def mode(help: str = "encoding mode") -> Axis:
    """SPEC step 3's encoding mode (``help`` says who sets it, e.g. a pinning variant)."""
    return Axis("mode", "unidirectional", str, help, choices=spec.MODES)
