"""NumPy building blocks the stages' references share (the README's Semantics, notation)."""

from __future__ import annotations

import numpy as np


def spec_round(v: np.ndarray, away: bool = False) -> np.ndarray:
    """SPEC's ``round``: half to even (``np.rint``), or half away from zero when ``away``.

    The away twin is ``trunc(v) + sign(v) * (|v - trunc(v)| >= 0.5)``, never
    ``floor(|v| + 0.5)``, which rounds 0.49999997 up in float32.
    """
    if not away:
        return np.rint(v)
    t = np.trunc(v)
    return t + np.sign(v) * (np.abs(v - t) >= 0.5)


def is_away(defines: tuple[tuple[str, str], ...]) -> bool:
    """Whether a variant's defines select half-away-from-zero rounding."""
    return any(k == "ROUNDING_AWAY" for k, _ in defines)
