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
    assert same.mismatches == 0


def test_rel_tol_is_relative_to_the_magnitude_of_a_negative_reference() -> None:
    t = RelTol(1e-5, "r")
    assert not t.compare("v", np.array([-5.0, -1.0]), np.array([-1.0, -1.0])).ok
    assert not t.compare("v", np.array([-2.0]), np.array([-1.0])).ok
    assert t.compare("v", np.array([-1.0 - 1e-6]), np.array([-1.0])).ok


def test_rel_tol_at_its_bound_passes_and_past_it_fails() -> None:
    assert RelTol(0.5, "r").compare("v", np.array([1.5]), np.array([1.0])).ok
    assert not RelTol(0.5, "r").compare("v", np.array([1.5000001]), np.array([1.0])).ok
    assert RelTol(0.0, "r").compare("v", np.array([3.0]), np.array([3.0])).ok


def test_references_and_outputs_are_compared_in_float64() -> None:
    """Neither side is rounded to float32 before the comparison: a float64 reference a
    fraction of a float32 ulp from 1 (x_rec's NormRel 1e-7), a float64 output 2^-30 off,
    and an int32 2^24 + 1 against 2^24 + 2 (1 apart, not 0 or 2 as in float32)."""
    ref = np.array([1.0 + 0.45 * 2.0**-23])
    got = np.array([1.0 - 2.0**-24], np.float32)
    c = NormRel(1e-7, "r").compare("x_rec", got, ref)
    assert not c.ok and 1.1e-7 < c.worst < 1.2e-7
    assert not RelTol(1e-12, "r").compare("v", np.array([1.0 + 2.0**-30]), np.array([1.0])).ok
    assert not RelTol(1e-12, "r").compare("v", np.array([1.0]), np.array([1.0 + 2.0**-30])).ok
    e = Exact("r").compare("q", np.array([2**24 + 1], np.int32), np.array([2**24 + 2], np.int32))
    assert not e.ok and e.worst == 1.0


def test_exact_reports_the_largest_difference() -> None:
    c = Exact("r").compare("q", np.array([1, 2, 30], np.int32), np.array([0, 2, 20], np.int32))
    assert (c.ok, c.mismatches, c.worst) == (False, 2, 10.0)


def test_normrel_lists_the_elements_that_moved() -> None:
    ref = np.array([1000.0, 1.0, 1.0, 1.0])
    got = ref.copy()
    got[1] = 3.0
    c = NormRel(1e-6, "r").compare("o", got, ref)
    assert not c.ok and c.mismatches == 1 and c.first[0][0] == (1,)


def test_normrel_on_an_integer_output_passes_when_equal() -> None:
    q = np.array([1, -2, 3], np.int32)
    c = NormRel(1e-6, "r").compare("q", q, q.copy())
    assert c.ok and c.nan_got == 0 and c.worst == 0.0


def test_normrel_does_not_let_an_infinite_reference_hide_every_error() -> None:
    """An inf in the reference made ||ref|| inf and any error 0: the norms are over the
    finite values, and an inf must be matched exactly."""
    t = NormRel(1e-6, "r")
    ref = np.array([np.inf, 1.0, 2.0, 3.0])
    c = t.compare("o", np.array([np.inf, 100.0, -5.0, 0.0]), ref)
    assert not c.ok and c.worst > 1 and c.mismatches == 3
    assert t.compare("o", ref.copy(), ref).ok
    off = t.compare("o", np.array([1e30, 1.0, 2.0, 3.0]), ref)
    assert not off.ok and off.worst == float("inf") and off.first[0][0] == (0,)
    assert not t.compare("o", np.array([-np.inf, 1.0, 2.0, 3.0]), ref).ok


def test_at_most_first_bad_elements_are_listed() -> None:
    """A failure lists the first ``FIRST_BAD`` (5) differing elements, and counts all."""
    c = Exact().compare("x", np.arange(8), np.zeros(8, dtype=np.int64))
    assert c.mismatches == 7 and [i for i, _, _ in c.first] == [(k,) for k in range(1, 6)]


def test_rel_tol_worst_is_infinite_on_a_nan_and_zero_on_nothing() -> None:
    """A NaN makes the elementwise worst error infinite (not the largest finite one); an
    empty output passes with error 0."""
    c = RelTol(1e-3).compare("x", np.array([np.nan, 1.5]), np.array([1.0, 1.0]))
    assert not c.ok and c.worst == float("inf")
    e = RelTol(1e-3).compare("x", np.zeros(0), np.zeros(0))
    assert e.ok and e.worst == 0.0 and e.total == 0


def test_shape_mismatch_counts_each_side() -> None:
    """A shape mismatch counts every kernel element as a mismatch out of the reference's."""
    c = RelTol(1e-3).compare("x", np.zeros((2, 3)), np.zeros(4))
    assert (c.ok, c.mismatches, c.total) == (False, 6, 4)


def test_normrel_lists_only_what_moved_past_its_share_and_nothing_when_ok() -> None:
    """A failing norm comparison lists the elements that moved past the bound of their own
    magnitude plus their share of the norm (not a tiny element's tiny move); a passing one
    lists nothing, though an element moved past its share."""
    fail = NormRel(1e-2).compare("x", np.array([110.0, 0.0011]), np.array([100.0, 0.001]))
    assert not fail.ok and fail.mismatches == 1 and [list(i) for i, _, _ in fail.first] == [[0]]
    ok = NormRel(1e-2).compare("x", np.array([1000.0, 8.001]), np.array([1000.0, 0.001]))
    assert ok.ok and ok.mismatches == 1 and ok.first == ()
