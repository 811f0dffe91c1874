"""Tolerances of the spike domain's outputs (SPEC: validation rules)."""

from __future__ import annotations

from harness.api import RelTol

#: SPEC's rule for ``vth``, wherever a stage or pipeline outputs it.
VTH = RelTol(1e-5, "float32 sum of |x| in a different order than the float64 reference: "
                   "SPEC's rtol 1e-5")
