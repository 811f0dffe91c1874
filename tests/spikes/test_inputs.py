"""The linear layer's declarations the GEMM stages share: operands, output and arithmetic."""

from __future__ import annotations

import numpy as np

from harness.spikes import inputs


def test_the_layer_declarations_follow_the_point() -> None:
    p = {"batch": 3, "out_f": 5, "in_f": 260, "group_size": 128}
    assert inputs.layer_specs(p) == {"w_q": ((5, 260), np.dtype(np.int8)),
                                     "scale": ((5, 3), np.dtype(np.float32)),
                                     "vth": ((3,), np.dtype(np.float32)),
                                     "bias": ((5,), np.dtype(np.float32))}
    assert inputs.layer_out(p) == {"out": ((3, 5), np.dtype(np.float32))}
    assert inputs.layer_flops(p) == 2 * 3 * 5 * 260
