"""Tolerances of the spike domain's outputs (SPEC: validation rules)."""

from __future__ import annotations

from harness.api import NormRel, RelTol

#: SPEC's rule for ``vth``, wherever a stage or pipeline outputs it.
VTH = RelTol(1e-5, "float32 sum of |x| in a different order than the float64 reference: "
                   "SPEC's rtol 1e-5")

#: The integer GEMMs' out (int_gemm, int_gemm_packed): SPEC's 1e-6 normwise.
INT_GEMM_OUT = NormRel(1e-6, "exact int32 group sums; one fp32 rounding per group "
                             "promotion and in the epilogue (SPEC: 1e-6 here)")
