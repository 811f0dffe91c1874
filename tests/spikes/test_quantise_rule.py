"""The kernels' division-free quantisation rules, emulated in NumPy float32 (IEEE round to
nearest, as the kernels' __fmul_rn / __frcp_rn / __fdiv_rn): they must give SPEC's
rint(fl(x / vth)) bit for bit, on values built to sit next to the half-integers where a
product and a quotient can round apart. Each check also runs without the rule's guard and
must then find mismatches, so the data is hard enough to catch a wrong guard.

- activation_fused (``quantise_inv``): y = x * rcp(vth); exact division unless
  0.5 - |y - rint(y)| > 2^-21 |y|.
- weight_quant_fused (``quantise_w``): y = w * rcp(s) with |w / s| <= 127.00001; exact
  division when ||y - rint(y)| - 0.5| <= 1e-4.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def _exact(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.rint(np.divide(x, v, dtype=F32))


def _inv_rule(x: np.ndarray, v: np.ndarray, guard: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = np.multiply(x, np.divide(F32(1), v, dtype=F32), dtype=F32)
        r = np.rint(y)
        fast = (F32(0.5) - np.abs(y - r)) > F32(2.0**-21) * np.abs(y) if guard else True
        return np.where(fast, r, _exact(x, v))


def _near_halves(rng: np.random.Generator, n: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    v = (rng.lognormal(0, 3, n) * rng.choice([1e-30, 1e-3, 1.0, 1e3, 1e30], n)).astype(F32)
    m = rng.integers(-top, top, n) + 0.5
    with np.errstate(over="ignore"):  # a few overflow to inf: both sides must agree there
        x = (m * v.astype(np.float64)).astype(F32)
    step = np.where(rng.random(n) < 0.5, np.inf, -np.inf).astype(F32)
    x = np.where(rng.random(n) < 0.5, np.nextafter(x, step), x)  # a half, or an ulp off
    return x, v


def _mismatches(rule, x: np.ndarray, v: np.ndarray, guard: bool) -> int:  # type: ignore[no-untyped-def]
    with np.errstate(all="ignore"):
        want = _exact(x, v)
    got = rule(x, v, guard)
    ok = np.isfinite(want)
    return int((want[ok] != got[ok]).sum() + np.isfinite(got[~ok]).sum())


def test_activation_rule_matches_the_division() -> None:
    rng = np.random.default_rng(7)
    for top in (300, 20000, 2**22):  # q's of a row, wide rows, past the 2^21 cut-off
        x, v = _near_halves(rng, 400_000, top)
        assert _mismatches(_inv_rule, x, v, guard=True) == 0
        if top < 2**22:
            assert _mismatches(_inv_rule, x, v, guard=False) > 0
    v = rng.lognormal(0, 1, 400_000).astype(F32)
    x = (rng.standard_normal(400_000) * v * 40).astype(F32)  # plain activations
    assert _mismatches(_inv_rule, x, v, guard=True) == 0
    x0 = np.array([0.0, -0.0, 1e-45, 3.4e38, -3.4e38], dtype=F32)
    v0 = np.array([1e-45, 1e-45, 1e-45, 1e-38, 1e-38], dtype=F32)  # rcp overflows
    assert _mismatches(_inv_rule, x0, v0, guard=True) == 0


def _w_rule(w: np.ndarray, s: np.ndarray, guard: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = np.multiply(w, np.divide(F32(1), s, dtype=F32), dtype=F32)
        r = np.rint(y)
        slow = ~(np.abs(np.abs(y - r) - F32(0.5)) > F32(1e-4)) if guard else False
        return np.where(slow, _exact(w, s), r)


def test_weight_rule_matches_the_division() -> None:
    rng = np.random.default_rng(8)
    n = 400_000
    amax = rng.lognormal(0, 2, n).astype(F32)
    s = np.divide(amax, F32(127), dtype=F32)
    m = rng.integers(-127, 127, n) + 0.5
    w = np.clip((m * s.astype(np.float64)).astype(F32), -amax, amax)
    w = np.where(rng.random(n) < 0.5, np.nextafter(w, F32(0)), w)
    w = np.concatenate([w, amax, -amax])  # the group's max itself: |w / s| ~ 127
    s = np.concatenate([s, s, s])
    assert _mismatches(_w_rule, w, s, guard=True) == 0
    assert _mismatches(_w_rule, w, s, guard=False) > 0
