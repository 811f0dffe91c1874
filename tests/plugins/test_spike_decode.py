"""spike_decode and spike_decode_packed: the references give back q = v + o from the planes
(int8 or packed) that the inputs encode, in every mode, o of either sign."""

from __future__ import annotations

import numpy as np
import pytest

from harness.contract.rng import point_rng
from harness.spikes import inputs, spec


@pytest.mark.parametrize("mode", spec.MODES)
@pytest.mark.parametrize("stage", ["spike_decode", "spike_decode_packed"])
def test_the_reference_is_v_plus_o(reg, stage: str, mode: str) -> None:  # type: ignore[no-untyped-def]
    st = reg.get(stage)
    p = st.point(batch=3, in_f=37, mode=mode, planes=5)
    for o in (-3, 0, 11):
        v, _ = inputs.encodable(point_rng(0, stage, "normal", p), "normal", 3, 37, p["k"], 5,
                                mode)
        ins = {"o": np.array([o], np.int32),
               **({"spikes": spec.encode(v, 5, mode)} if stage == "spike_decode"
                  else {"packed": spec.pack(v, 5, mode)})}
        got = st.expected(ins, p, st.variants[0])["q"]
        assert got.dtype == np.int32 and got.tolist() == (v.astype(np.int64) + o).tolist()
        assert int(np.abs(v).max()) > 0  # the planes carry something to decode
