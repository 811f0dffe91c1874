"""Comparisons: exact, elementwise relative, and norm-relative."""

from __future__ import annotations

import numpy as np

from harness.contract.tolerance import Exact, NormRel, RelTol


def test_exact_lists_first_mismatches() -> None:
    got = np.array([[1, 2], [3, 4]], dtype=np.int32)
    ref = got.copy()
    ref[1, 0] = 5
    c = Exact("r").compare("q", got, ref)
    assert not c.ok and c.mismatches == 1 and c.worst == 2
    assert c.first == (((1, 0), 3, 5),)


def test_exact_shape_mismatch() -> None:
    c = Exact("r").compare("q", np.zeros(3), np.zeros(4))
    assert not c.ok and "shape" in c.describe()


def test_rel_tol_zero_reference_needs_exact_zero() -> None:
    t = RelTol(1e-5, "r")
    assert t.compare("v", np.array([0.0, 1.0]), np.array([0.0, 1.0 + 1e-6])).ok
    assert not t.compare("v", np.array([1e-30]), np.array([0.0])).ok


def test_rel_tol_nan_never_passes() -> None:
    c = RelTol(1.0, "r").compare("v", np.array([np.nan], np.float32), np.array([1.0]))
    assert not c.ok and c.nan_got == 1


def test_normrel() -> None:
    ref = np.ones(100)
    t = NormRel(1e-5, "r")
    assert t.compare("o", ref * (1 + 1e-7), ref).ok
    bad = ref.copy()
    bad[7] = 2.0
    c = t.compare("o", bad, ref)
    assert not c.ok and c.first[0][0] == (7,)
    nan = ref.astype(np.float32)
    nan[3] = np.nan
    assert not t.compare("o", nan, ref).ok


def test_normrel_against_a_zero_reference_needs_zero() -> None:
    """A zero reference has no norm to be relative to: any difference is infinitely
    relative and fails, and only zeros pass (an unwritten or wrong output of a stage whose
    true answer is zero must not pass)."""
    t = NormRel(1e-6, "r")
    c = t.compare("o", np.ones(4), np.zeros(4))
    assert c.ok is False and c.worst == float("inf") and c.mismatches == 4
    same = t.compare("o", np.zeros(4), np.zeros(4))
    assert same.ok and same.worst == 0.0
