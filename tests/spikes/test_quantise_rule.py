"""The kernels' division-free quantisation rules, emulated in NumPy float32 (IEEE round to
nearest, as the kernels' __fmul_rn / __frcp_rn / __fdiv_rn): they must give SPEC's
rint(fl(x / vth)) bit for bit, on values built to sit next to the half-integers where a
product and a quotient can round apart. Each check also runs without the rule's guard and
must then find mismatches, so the data is hard enough to catch a wrong guard.

- activation_fused (``quantise_inv``): y = x * rcp(vth); exact division unless
  0.5 - |y - rint(y)| > 2^-21 |y|.
- the weight kernels (``quantise_w_bits``): y = w * rcp(s), t = y + 1.5 * 2^23, r = t -
  1.5 * 2^23 (rint(y), half to even), w_q = the low byte of t's bits; exact division where
  |y - r| >= 0.4999, and also where |y| >= 127.5 unless the scale is the group's own max /
  127 (weight_quant_fused: bounded), which the rule says keeps |y| below 127.5.
"""

from __future__ import annotations

import re

import numpy as np

from harness import paths

F32 = np.float32
COMMON = paths.project_root() / "kernels" / "common"


def _from_kernel(header: str, pattern: str) -> tuple[float, ...]:
    """The rule's constants as the kernel's header writes them (C float literals, decimal
    or hex): the emulation runs on the kernel's numbers, so a guard changed in the header
    is a guard changed here. A rule rewritten out of this form fails here, loudly."""
    m = re.search(pattern, (COMMON / header).read_text())
    assert m, (header, pattern)
    return tuple(float.fromhex(g) if g.lower().startswith("0x") else float(g)
                 for g in m.groups())


#: threshold.cuh's inv_rounds_right: 0.5 - |y - r| > GUARD |y|.
INV_HALF, INV_GUARD = _from_kernel(
    "threshold.cuh", r"return ([0-9.]+)f - fabsf\(y - r\) > ([0-9a-fA-Fx.p+-]+)f \* fabsf\(y\);")
#: quantise_w.cuh's quantise_w_bits: the rint magic, |d| < W_NEAR, and |y| < W_TOP.
(W_MAGIC,) = _from_kernel("quantise_w.cuh", r"kRintMagic = ([0-9.]+)f;")
(W_NEAR,) = _from_kernel("quantise_w.cuh", r"ok &= fabsf\(d\) < ([0-9.]+)f;")
(W_TOP,) = _from_kernel("quantise_w.cuh", r"ok &= fabsf\(y\) < ([0-9.]+)f;")


def _exact(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.rint(np.divide(x, v, dtype=F32))


def _inv_rule(x: np.ndarray, v: np.ndarray, guard: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = np.multiply(x, np.divide(F32(1), v, dtype=F32), dtype=F32)
        r = np.rint(y)
        fast = (F32(INV_HALF) - np.abs(y - r)) > F32(INV_GUARD) * np.abs(y) if guard else True
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


def test_the_constants_are_the_kernels() -> None:
    """What the headers say today (a change there is a change of the rule under test)."""
    assert (INV_HALF, INV_GUARD) == (0.5, 2.0**-21)
    assert (W_MAGIC, W_NEAR, W_TOP) == (1.5 * 2**23, 0.4999, 127.5)


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


#: 1.5 * 2^23 (the header's kRintMagic): adding it rounds a float32 below 2^22 in
#: magnitude to an integer.
MAGIC = F32(W_MAGIC)


def _w_exact(w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """SPEC's step B per element: rint of the IEEE quotient, clamped; 0 where s == 0."""
    with np.errstate(all="ignore"):
        r = np.clip(np.rint(np.divide(w, s, dtype=F32)), -127, 127)
    return np.where(s == 0, 0, r).astype(np.int8)


def _w_rule(w: np.ndarray, s: np.ndarray, bounded: bool, guard: bool = True) -> np.ndarray:
    """The kernels' quantise_w_bits with the division where it clears ok."""
    with np.errstate(all="ignore"):
        y = np.multiply(w, np.divide(F32(1), s, dtype=F32), dtype=F32)
        t = np.add(y, MAGIC, dtype=F32)
        d = np.subtract(y, np.subtract(t, MAGIC, dtype=F32), dtype=F32)
        ok = np.abs(d) < F32(W_NEAR)
        if not bounded:
            ok &= np.abs(y) < F32(W_TOP)
    fast = (t.view(np.uint32) & 0xFF).astype(np.uint8).view(np.int8)
    return fast if not guard else np.where(ok, fast, _w_exact(w, s))


def _w_mismatches(w: np.ndarray, s: np.ndarray, bounded: bool, guard: bool = True) -> int:
    return int((_w_rule(w, s, bounded, guard) != _w_exact(w, s)).sum())


def _near_half_weights(rng: np.random.Generator, amax: np.ndarray, top: float
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Weights at (or an ulp beside) half-integer multiples of s = amax / 127, |w| <= amax
    times top / 127."""
    n = amax.size
    s = np.divide(amax, F32(127), dtype=F32)
    m = rng.integers(-int(top), int(top), n) + 0.5
    w = (m * s.astype(np.float64)).astype(F32)
    w = np.where(rng.random(n) < 0.5, np.nextafter(w, F32(0)), w)
    w = np.where(rng.random(n) < 0.25, np.nextafter(w, np.copysign(F32(np.inf), w)), w)
    return w, s


def test_bounded_weight_rule_matches_the_division() -> None:
    """weight_quant_fused: s is the group's own max over 127, so |w| <= amax."""
    rng = np.random.default_rng(8)
    n = 400_000
    amax = rng.lognormal(0, 2, n).astype(F32)
    amax[:2000] = rng.uniform(1e-45, 1e-36, 2000).astype(F32)  # subnormal scales, rcp = inf
    w, s = _near_half_weights(rng, amax, 127)
    w = np.clip(w, -amax, amax)
    w = np.concatenate([w, amax, -amax, np.zeros(4, F32)])  # the max itself: |w / s| ~ 127
    s = np.concatenate([s, s, s, np.array([0, 0, 1e-45, 1], F32)])
    assert _w_mismatches(w, s, bounded=True) == 0
    assert _w_mismatches(w, s, bounded=True, guard=False) > 0


def test_any_scale_weight_rule_matches_the_division() -> None:
    """weight_quantize: any scale, so |w / s| may pass 127.5 (the clamp) or be huge."""
    rng = np.random.default_rng(9)
    n = 400_000
    amax = rng.lognormal(0, 3, n) * rng.choice([1e-40, 1e-20, 1.0, 1e20, 1e33], n)
    amax = np.minimum(amax, 1e36).astype(F32)  # 400 amax / 127 stays finite
    w, s = _near_half_weights(rng, amax, 400)  # |w / s| up to 400: the clamp
    spread = (s.astype(np.float64) * rng.uniform(-400, 400, n)).astype(F32)  # off the halves
    w = np.concatenate([w, spread, np.array([1, -1, 0, 3e38, -3e38, 1e-45, 5], F32)])
    s = np.concatenate([s, s, np.array([0, 0, 0, 1e-30, 1e-30, 3e38, 3e38], F32)])
    assert _w_mismatches(w, s, bounded=False) == 0
    assert _w_mismatches(w, s, bounded=True) > 0  # the |y| < 127.5 check is needed here
    assert _w_mismatches(w, s, bounded=False, guard=False) > 0
