"""Axes and default sweeps the stages of each side declare alike, declared once here so that
a default or a bound cannot drift between a stage and the one that feeds it.

The activation side (x, q, v, the planes) sweeps the batch; the weight side (w, its scales
and w_q) sweeps the weight's shape.
"""

from __future__ import annotations

from typing import Any

from harness.api import Axis
from harness.spikes import spec

# -- the activation side -------------------------------------------------------------------
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


#: The activation side's sweep: batch 1, 2, 4, ..., 65536.
BATCH_SWEEP: dict[str, tuple[Any, ...]] = {"batch": tuple(2**i for i in range(17))}

# -- the weight side -----------------------------------------------------------------------
#: Rows of the weight (the output features).
OUT_F = Axis("out_f", 3584, int, "weight rows O", minimum=1)
#: Columns of the weight (the input features).
WEIGHT_IN_F = Axis("in_f", 3584, int, "weight columns F", minimum=1)
#: Columns that share one scale.
GROUP_SIZE = Axis("group_size", 128, int, "G, columns per scale", minimum=1)
#: The axes of a stage on the weight alone.
WEIGHT = (OUT_F, WEIGHT_IN_F, GROUP_SIZE)

#: The weight side's sweep: three weight heights at the default width.
WEIGHT_SWEEP: dict[str, tuple[Any, ...]] = {"out_f": (3584, 4608, 18944)}
