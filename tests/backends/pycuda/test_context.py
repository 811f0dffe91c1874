"""The one CUDA context on a stand-in driver: pushed when the device opens, off the
thread's stack after ``suspend``, current again only inside ``current()``, popped once."""

from __future__ import annotations

import types

import pytest

from harness.backends.pycuda import context


class _Ctx:
    def __init__(self) -> None:
        self.stack = 0
        self.calls: list[str] = []

    def push(self) -> None:
        self.stack += 1
        self.calls.append("push")

    def pop(self) -> None:
        if self.stack == 0:
            raise RuntimeError("cannot pop non-current context")
        self.stack -= 1
        self.calls.append("pop")


@pytest.fixture
def ctx(monkeypatch) -> _Ctx:  # type: ignore[no-untyped-def]
    c = _Ctx()
    att = types.SimpleNamespace(MULTIPROCESSOR_COUNT=0, L2_CACHE_SIZE=1, CLOCK_RATE=2,
                                MEMORY_CLOCK_RATE=3, GLOBAL_MEMORY_BUS_WIDTH=4)
    dev = types.SimpleNamespace(
        retain_primary_context=lambda: c, name=lambda: "NVIDIA H200",
        compute_capability=lambda: (9, 0), total_memory=lambda: 141 << 30,
        get_attributes=lambda: {0: 132, 1: 60 << 20, 2: 1980000, 3: 3201000, 4: 6144})
    device = type("Device", (), {"count": staticmethod(lambda: 1),
                                 "__new__": lambda cls, index: dev})
    drv = types.SimpleNamespace(Device=device, device_attribute=att,
                                get_driver_version=lambda: 13000)
    monkeypatch.setattr(context, "load_pycuda", lambda: drv)
    monkeypatch.setattr(context, "smi_query", lambda i, f: "")
    monkeypatch.setattr(context.atexit, "register", lambda fn: None)
    return c


def test_a_suspended_context_is_current_only_inside_current(ctx: _Ctx) -> None:
    d = context.Device(0)
    assert ctx.stack == 1 and d.info.sm_count == 132 and d.info.arch == "sm_90"
    d.suspend()
    d.suspend()  # idempotent: popped once
    assert ctx.stack == 0
    with d.current():
        assert ctx.stack == 1
        with d.current():  # already current: no second push
            assert ctx.stack == 1
    assert ctx.stack == 0
    with pytest.raises(ValueError), d.current():
        raise ValueError  # an error in the block still leaves the stack empty
    assert ctx.stack == 0
    d.close()  # nothing to pop: not pushed
    assert ctx.calls == ["push", "pop", "push", "pop", "push", "pop"]


def test_close_pops_the_pushed_context_once(ctx: _Ctx) -> None:
    d = context.Device(0)
    with d.current():  # current already: nothing pushed or popped
        pass
    d.close()
    d.close()
    assert ctx.stack == 0 and ctx.calls == ["push", "pop"]
