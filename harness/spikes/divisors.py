"""Divisors that ``torch.compile`` cannot fold: the torch peers of the weight stages divide
by 127 as SPEC does. ``torch`` is passed in, so nothing here imports it."""

from __future__ import annotations

from typing import Any

#: The divisors made by :func:`divisor`, by (value, device).
_DIVISORS: dict[tuple[float, str], Any] = {}


def _made(torch: Any, value: float, device: Any, key: tuple[float, str]) -> Any:
    """The tensor :func:`divisor` returns, made and kept (run eagerly, outside any trace)."""
    t = torch.full((), value, dtype=torch.float32, device=device)
    _DIVISORS[key] = t
    return t


def divisor(torch: Any, value: float, device: Any) -> Any:
    """``value`` as a 0-d float32 tensor on ``device`` that ``torch.compile`` takes as an
    input of its graph, not as a constant.

    On the GPU Inductor replaces a division by a constant (a Python number, or a ``full``
    it folds) with a multiply by the reciprocal, which is not IEEE's division (scales 1 ulp
    off at ~5 % of the groups), whatever its division switch. A tensor made outside the
    trace and read from a module cache is a graph input, and the division stays one (IEEE
    under the ``torch_compile`` peer's switch; eager divides by a tensor as IEEE does). Call
    it before any other op: the first trace breaks its graph at the making, and a break
    before any op leaves no kernel of its own.
    """
    key = (float(value), str(device))
    t = _DIVISORS.get(key)
    if t is None:
        t = torch.compiler.disable(_made)(torch, value, device, key)
    return t
