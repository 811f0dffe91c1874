"""spike_quant_gemm's check on the CPU: the chained references pass it, and SPEC step 5's
round-trip bound |x_rec - x| <= vth / 2 (plus float32's roundings) is held where it bites."""

from __future__ import annotations

import numpy as np

from plugins import spike_quant_gemm as sqg


def _run(reg):  # type: ignore[no-untyped-def]
    pipe = reg.pipelines["spike_quant_gemm"]
    p = pipe.point(batch=4, in_f=256, out_f=8, with_gemm=1)
    ins = pipe.make_inputs(np.random.default_rng(3), "normal", p)
    ref = sqg.reference(ins, p)
    got = {"vth": ref["vth"], "v": ref["v"], "o": np.array([ref["o"]], np.int32),
           "amax": np.array([ref["amax"]], np.int32), "spikes": ref["spikes"],
           "scale": ref["scale"], "w_q": ref["w_q"], "qd": ref["q"], "x_rec": ref["x_rec"],
           "out": ref["out"].astype(np.float32)}
    return p, ins, got, {"planes": ref["planes"]}


def _bound(comps):  # type: ignore[no-untyped-def]
    return next(c for c in comps if c.output == "|x_rec - x| <= vth/2")


def test_the_references_pass_and_the_round_trip_bound_bites(reg) -> None:  # type: ignore[no-untyped-def]
    p, ins, got, host = _run(reg)
    comps = sqg.check(ins, p, got, host)
    assert all(c.ok for c in comps), [c.describe() for c in comps if not c.ok]
    vth = got["vth"].astype(np.float64)[:, None]
    x = ins["x"].astype(np.float64)
    for off, ok in ((0.45, True), (0.75, False)):  # within vth/2 of x, and past it
        moved = dict(got, x_rec=(x + off * vth).astype(np.float32))
        assert _bound(sqg.check(ins, p, moved, host)).ok is ok, off
