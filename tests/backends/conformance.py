"""The check every backend's tests make: it is a ``contract.backend.Backend`` (runtime
check) and its methods take the protocol's parameters, by name, order and default."""

from __future__ import annotations

import inspect

from harness.contract.backend import Backend

METHODS = ("run", "time", "is_oom", "pipeline")


def assert_is_backend(obj: object, name: str) -> None:
    """``obj`` implements the Backend protocol and calls itself ``name`` in CSV rows."""
    assert isinstance(obj, Backend), f"{type(obj).__name__} is not a Backend"
    assert obj.backend == name
    for method in METHODS:
        want = inspect.signature(getattr(Backend, method)).parameters
        got = inspect.signature(getattr(type(obj), method)).parameters
        assert [(p.name, p.default) for p in got.values()] == \
            [(p.name, p.default) for p in want.values()], (type(obj).__name__, method)
