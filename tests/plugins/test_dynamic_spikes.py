"""The dynamic_spikes reference against the properties the README's Semantics states (step 1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from hypothesis.extra import numpy as hnp

from harness.spikes import families
from harness.spikes.refmath import spec_round
from tests.spikes.edge_rows import edge_kinds


@pytest.fixture(scope="module")
def st(reg):  # type: ignore[no-untyped-def]
    return reg.get("dynamic_spikes")


def ref(st, x, variant="default", **p):  # type: ignore[no-untyped-def]
    point = st.point(batch=x.shape[0], in_f=x.shape[1], **p)
    return st.expected({"x": x}, point, st.variant(variant))


def test_half_to_even_at_ties(st) -> None:
    # sum |x| = 8, F = 4, k = 2: vth = 1 exactly, so q = round(x) at .5 ties.
    x = np.array([[0.5, 1.5, 2.5, -3.5]], dtype=np.float32)
    out = ref(st, x, k=2.0)
    assert out["vth"][0] == 1.0
    assert out["q"].tolist() == [[0, 2, 2, -4]]


def test_away_variant_rounds_ties_away_from_zero(st) -> None:
    x = np.array([[0.5, 1.5, 2.5, -3.5]], dtype=np.float32)
    assert ref(st, x, "away", k=2.0)["q"].tolist() == [[1, 2, 3, -4]]


def test_away_twin_is_not_floor_plus_half() -> None:
    v = np.array([0.49999997, -0.49999997, 0.5, -0.5, 1.5, -2.5], dtype=np.float32)
    assert spec_round(v, away=True).tolist() == [0, 0, 1, -1, 2, -3]
    assert spec_round(v).tolist() == [0, 0, 0, 0, 2, -2]
    # away from the halves, both rules are plain rounding, on either side of zero and past 1
    off = np.array([1.2, -1.2, 2.4, -2.6, 7.51, -7.49], dtype=np.float32)
    assert spec_round(off, away=True).tolist() == [1, -1, 2, -3, 8, -7]
    assert spec_round(off).tolist() == [1, -1, 2, -3, 8, -7]


def test_zero_rows_give_zero_q_and_vth(st) -> None:
    x = np.zeros((3, 7), dtype=np.float32)
    x[1] = 1.0
    out = ref(st, x)
    assert out["vth"][0] == 0 and out["vth"][2] == 0
    assert not out["q"][[0, 2]].any()
    assert (out["q"][1] == 3).all()  # mean 1, k 3: x / vth = 3


def test_clamp_applies(st) -> None:
    x = np.full((1, 8), 0.3, dtype=np.float32)
    out = ref(st, x, vth_min=0.5, vth_max=0.6)
    assert out["vth"][0] == 0.5
    assert (out["q"] == 1).all()  # 0.3 / 0.5 = 0.6 -> 1


def test_an_inverted_clamp_is_bad_input(st) -> None:
    """[vth_min, vth_max] with vth_min above vth_max holds no value: said, not clamped to
    whichever bound the kernel's min/max order happens to favour."""
    x = np.full((1, 8), 0.3, dtype=np.float32)
    why = st.check_inputs({"x": x}, st.point(batch=1, in_f=8, vth_min=5.0, vth_max=1.0))
    assert why is not None and why.startswith("bad input: the clamp [vth_min, vth_max] = "
                                              "[5.0, 1.0] holds no value")
    assert st.check_inputs({"x": x}, st.point(batch=1, in_f=8, vth_min=0.5,
                                              vth_max=0.5)) is None


@pytest.mark.parametrize(("name", "value"), [("vth_min", 1e39), ("vth_max", 1e39),
                                           ("vth_max", -1e39), ("vth_min", 3.5e38)])
def test_a_clamp_beyond_float32_is_bad_input(st, name: str, value: float) -> None:  # type: ignore[no-untyped-def]
    """A finite bound float32 cannot hold is inf to the kernel and to the float32 vth (a
    row written ok, with numpy's overflow warnings): said, not timed; float32's largest
    value and the default vth_max = inf (no clamp) pass."""
    x = np.full((1, 8), 0.3, dtype=np.float32)
    why = st.check_inputs({"x": x}, st.point(batch=1, in_f=8, **{name: value}))
    assert why is not None and why.startswith(f"bad input: {name} = {value} is beyond "
                                              "float32 (the largest is 3.403e+38)")
    top = float(np.finfo(np.float32).max)
    for ok in ({"vth_min": top, "vth_max": top}, {"vth_max": float("inf")}):
        assert st.check_inputs({"x": x}, st.point(batch=1, in_f=8, **ok)) is None


def test_ties_row_of_the_edge_family_is_all_ties(st) -> None:
    x = families.activations(np.random.default_rng(0), "edge", 6, 3584, 3.0)
    row = edge_kinds(x)["ties"][None, :]
    out = ref(st, row)
    assert out["vth"][0] == 1.0
    assert set(np.abs(out["q"][0]).tolist()) == {2, 4}  # 2.5 -> 2, 3.5 -> 4
    assert set(np.abs(ref(st, row, "away")["q"][0]).tolist()) == {3, 4}


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, max_side=40),
                  # Subnormal-only rows are SPEC's vth == 0 case (vth underflows), not this one.
                  elements=hst.floats(-1e4, 1e4, width=32, allow_subnormal=False)),
       hst.sampled_from([1.0, 2.5, 3.0, 7.0]))
def test_q_bound_and_reconstruction(st, x, k) -> None:  # type: ignore[no-untyped-def]
    """|q| <= k*F (unclamped; rounded up, since x / vth may equal k*F = 17.5 and round to 18),
    and q * vth is within vth/2 of x (float32 rounding aside)."""
    out = ref(st, x, k=k)
    vth = out["vth"].astype(np.float32)
    q = out["q"]
    assert (np.abs(q) <= np.ceil(k * x.shape[1])).all()
    rec = q.astype(np.float64) * vth[:, None]
    slack = vth[:, None] * (0.5 + 1e-5) + np.abs(x) * 1e-6
    assert (np.abs(rec - x) <= slack).all()


def test_vth_is_mean_abs_over_k_in_float64(st) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 33), dtype=np.float32)
    out = ref(st, x, k=3.0)
    np.testing.assert_allclose(out["vth"], np.abs(x.astype(np.float64)).mean(1) / 3.0,
                               rtol=1e-15)
    assert out["vth"].dtype == np.float64


def test_bytes_and_flops_are_functions_of_the_shape(st) -> None:
    p = st.point(batch=16384, in_f=3584)
    assert st.bytes_moved(p) == 16384 * 3584 * 8 + 16384 * 4
    assert st.flops(p) == 3 * 16384 * 3584
