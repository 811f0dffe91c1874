"""How a kernel's output is judged against its reference (the README's Semantics, validation rules).

Each tolerance carries the reason it is what it is; a comparison reports enough to debug a
failure: how many elements differ, the first few with kernel and reference values, and how
many NaNs each side holds (an unwritten, poisoned element shows up as one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: How many differing elements a failure lists.
FIRST_BAD = 5


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing one output with its reference."""

    output: str
    ok: bool
    metric: str  # "abs" (exact outputs), "rel" (elementwise) or "normrel"
    worst: float
    mismatches: int
    total: int
    nan_got: int
    nan_ref: int
    first: tuple[tuple[tuple[int, ...], object, object], ...] = ()
    note: str = ""

    def describe(self) -> str:
        """A one-paragraph account, the first bad indices included."""
        head = (
            f"{self.output}: {'ok' if self.ok else 'FAILED'} "
            f"({self.metric} error {self.worst:.3g}; {self.mismatches}/{self.total} mismatches; "
            f"NaN kernel={self.nan_got} reference={self.nan_ref})"
        )
        if self.note:
            head += f" {self.note}"
        if self.first:
            head += "; first: " + ", ".join(
                f"{list(i)} kernel={g!r} ref={r!r}" for i, g, r in self.first
            )
        return head


def _shape_mismatch(name: str, got: np.ndarray, ref: np.ndarray) -> Comparison | None:
    if got.shape != ref.shape:
        return Comparison(name, False, "abs", float("inf"), got.size, ref.size, 0, 0,
                          note=f"shape {got.shape} != reference {ref.shape}")
    return None


def _nan_count(a: np.ndarray) -> int:
    return int(np.isnan(a).sum()) if a.dtype.kind == "f" else 0


def _diff64(got: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference in float64 and ``|got - ref|`` (NaN where either is NaN)."""
    r = ref.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as documented
        return r, np.abs(got.astype(np.float64) - r)


def _first(bad: np.ndarray, got: np.ndarray, ref: np.ndarray, n: int) -> tuple:
    """The first FIRST_BAD of the ``n`` bad elements: index, got, reference. None bad, no
    scan (at a large point the index search over every element is seconds of host time)."""
    if n == 0:
        return ()
    idx = np.argwhere(bad)[:FIRST_BAD]
    return tuple(
        (tuple(int(v) for v in i), got[tuple(i)].item(), ref[tuple(i)].item()) for i in idx
    )


@dataclass(frozen=True)
class Exact:
    """Bit-for-bit equal values (integer outputs, and floats that must not move at all)."""

    reason: str = "integer output: any difference is a bug"

    def compare(self, name: str, got: np.ndarray, ref: np.ndarray) -> Comparison:
        """Compare ``got`` with ``ref`` exactly; NaN never equals anything."""
        if (bad := _shape_mismatch(name, got, ref)) is not None:
            return bad
        diff = got != ref  # NaN != NaN, so an unwritten float fails too
        n = int(diff.sum())
        worst = float(np.max(_diff64(got, ref)[1][diff])) if n else 0.0
        return Comparison(name, n == 0, "abs", worst, n, got.size, _nan_count(got),
                          _nan_count(ref), _first(diff, got, ref, n))


@dataclass(frozen=True)
class RelTol:
    """Elementwise ``|got - ref| <= rtol * |ref|`` against a float64 reference."""

    rtol: float
    reason: str = ""

    def compare(self, name: str, got: np.ndarray, ref: np.ndarray) -> Comparison:
        """Compare elementwise; a zero reference demands an exact zero."""
        if (bad := _shape_mismatch(name, got, ref)) is not None:
            return bad
        r, err = _diff64(got, ref)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(r != 0, err / np.abs(r), np.where(err == 0, 0.0, np.inf))
        bad = ~(rel <= self.rtol)  # NaN compares False, so it counts as bad
        worst = float(np.nanmax(np.where(np.isnan(rel), np.inf, rel))) if rel.size else 0.0
        n = int(bad.sum())
        return Comparison(name, n == 0, "rel", worst, n, got.size, _nan_count(got),
                          _nan_count(ref), _first(bad, got, ref, n))


@dataclass(frozen=True)
class NormRel:
    """``||got - ref|| / ||ref|| <= bound`` (float outputs of reordered sums); no NaN passes."""

    bound: float
    reason: str = ""

    def compare(self, name: str, got: np.ndarray, ref: np.ndarray) -> Comparison:
        """Compare by the relative 2-norm of the difference."""
        if (bad := _shape_mismatch(name, got, ref)) is not None:
            return bad
        r, diff = _diff64(got, ref)
        nan_g = _nan_count(got)
        # The norms are over the finite reference values; where the reference is not finite
        # (an inf, which made ||ref|| inf and so any error 0), the kernel must match it
        # exactly.
        finite = np.isfinite(r)
        off = ~finite
        if off.any():  # only there got is compared with r again (no second float64 copy)
            off[off] = got[off] != r[off]
        nref = float(np.linalg.norm(np.where(finite, r, 0.0)))
        ndiff = float(np.linalg.norm(np.where(np.isnan(diff) | ~finite, 0.0, diff)))
        worst = ndiff / nref if nref else (0.0 if ndiff == 0 else float("inf"))
        if nan_g or off.any():
            worst = float("inf")
        # Elements listed on failure: the NaNs and unmatched infinities first, then the
        # largest differences.
        bad = off | (finite & (np.isnan(diff) |
                               (diff > self.bound * (np.abs(r) + nref / max(r.size, 1) ** 0.5))))
        ok = nan_g == 0 and worst <= self.bound
        n = int(bad.sum())
        return Comparison(name, ok, "normrel", worst, n, got.size, nan_g,
                          _nan_count(ref), _first(bad, got, ref, n) if not ok else ())


Tolerance = Exact | RelTol | NormRel

