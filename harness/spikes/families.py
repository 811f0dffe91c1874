"""Input families shared by the stages (the README's Semantics, validation rules).

- ``normal``: standard normal values.
- ``llm``: heavy-tailed values with a few outlier channels and rows of varied scale, as real
  LLM activations and weights are.
- ``ramp``: the seed program's synthetic tensors, ``x[i] = i + 1``, ``w[i] = 0.1 * (i + 1)``,
  ``bias = 0.5`` (flat index; as C computes them into float arrays: ``i + 1`` converted,
  ``0.1 * (i + 1)`` a double product rounded once).
- ``edge``: rows cycling through all zeros, all negative, a single non-zero, constant, exact
  .5 ties after quantisation, and plain normal rows, from a kind drawn for each tensor (so
  that batch 1 meets every kind over the draws); one draw in seven makes every row negative
  instead (the whole tensor below zero: qmax < 0, where the device's transform decision
  and its min/max start values are tried). Weights past the first six rows have one row
  scaled by 2^-140: its group scales are subnormal, where the quantiser's clamp to
  [-127, 127] can act.

Every spike-domain stage and pipeline declares ``families=NAMES``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from harness.api import BadInput

#: The input families, in the order validation runs them.
NAMES: tuple[str, ...] = ("normal", "llm", "ramp", "edge")
EDGE_ROWS = ("zeros", "negative", "single", "constant", "ties", "normal")


def check_family(family: str) -> None:
    """BadInput unless ``family`` is one of the known input families."""
    if family not in NAMES:
        raise BadInput(f"unknown input family {family!r} (known: {', '.join(NAMES)})")


def _heavy(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    v = rng.standard_t(4.0, size=(rows, cols)) * 0.5
    v *= rng.lognormal(0.0, 0.5, size=(rows, 1))  # rows of varied scale
    n_out = max(1, cols // 256)
    chans = rng.choice(cols, size=min(n_out, cols), replace=False)
    v[:, chans] *= rng.uniform(20.0, 60.0, size=chans.size)  # outlier channels
    return v.astype(np.float32)


def _ties_row(rng: np.random.Generator, cols: int, k: float) -> np.ndarray:
    """|x| alternating k - 0.5 and k + 0.5: mean |x| is k, so vth = 1 and x / vth = k +- 0.5.

    For k = 3 every partial sum is exact in float32 whatever the order, so the kernel's
    vth is exactly 1 and every element sits on a .5 tie.
    """
    mag = np.where(np.arange(cols) % 2 == 0, k - 0.5, k + 0.5)
    if cols % 2:
        mag[-1] = k
    return (mag * rng.choice([-1.0, 1.0], size=cols)).astype(np.float32)


def activations(rng: np.random.Generator, family: str, rows: int, cols: int,
                k: float = 3.0) -> np.ndarray:
    """An activation matrix ``x [rows, cols] float32`` of the given family."""
    check_family(family)
    if family == "normal":
        return rng.standard_normal((rows, cols), dtype=np.float32)
    if family == "llm":
        return _heavy(rng, rows, cols)
    if family == "ramp":
        return np.arange(1, rows * cols + 1, dtype=np.float64).astype(np.float32).reshape(
            rows, cols)
    return _edge(rng, rows, cols, 10.0, 4.0, lambda: _ties_row(rng, cols, k))


def _edge(rng: np.random.Generator, rows: int, cols: int, single: float, const: float,
          ties: Callable[[], np.ndarray]) -> np.ndarray:
    """Normal rows with EDGE_ROWS' kinds cycled over them from a drawn start; or, for the
    seventh start, every row negative."""
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    start = int(rng.integers(len(EDGE_ROWS) + 1))
    for r in range(rows):
        kind = "negative" if start == len(EDGE_ROWS) else \
            EDGE_ROWS[(r + start) % len(EDGE_ROWS)]
        if kind == "zeros":
            a[r] = 0.0
        elif kind == "negative":
            a[r] = -np.abs(a[r]) - np.float32(1e-3)
        elif kind == "single":
            a[r] = 0.0
            a[r, rng.integers(cols)] = np.float32(rng.uniform(-single, single))
        elif kind == "constant":
            a[r] = np.float32(rng.uniform(-const, const))
        elif kind == "ties":
            a[r] = ties()
    return a


def weights(rng: np.random.Generator, family: str, rows: int, cols: int) -> np.ndarray:
    """A weight matrix ``w [rows, cols] float32`` of the given family: ``normal`` and
    ``llm`` are that family's activation draw scaled by 0.02 (from the same generator
    state, the same values times 0.02: heavy tails and outlier channels included)."""
    check_family(family)
    if family == "normal":
        return (rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(0.02))
    if family == "llm":
        return _heavy(rng, rows, cols) * np.float32(0.02)
    if family == "ramp":  # C's 0.1 * (i + 1): a double product, stored as float
        idx = np.arange(1, rows * cols + 1, dtype=np.float64)
        return (0.1 * idx).astype(np.float32).reshape(rows, cols)

    def ties() -> np.ndarray:
        # Group max 127 gives scale exactly 1, so j + 0.5 lands on a tie.
        row = (rng.integers(-126, 126, size=cols) + 0.5).astype(np.float32)
        row[::64] = 127.0
        return row

    w = _edge(rng, rows, cols, 1.0, 1.0, ties)
    if rows > len(EDGE_ROWS):  # past the cycle's first turn: a row of subnormal scales
        w[len(EDGE_ROWS)] *= np.float32(2.0**-140)
    return w


def bias(rng: np.random.Generator, family: str, rows: int) -> np.ndarray:
    """A bias vector ``b [rows] float32`` of the given family."""
    check_family(family)
    if family == "ramp":
        return np.full(rows, 0.5, dtype=np.float32)
    return rng.standard_normal(rows, dtype=np.float32)
