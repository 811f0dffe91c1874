"""``harness.backends.pycuda.runner.Graph`` (``--graph``) without a GPU: its errors are one clear line."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from harness.backends.pycuda import runner as gpu
from harness.errors import HarnessError


def test_missing_cuda_python_is_one_clear_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # makes the import fail
    with pytest.raises(HarnessError, match="--graph needs cuda-python"):
        gpu.Graph(SimpleNamespace(handle=1), lambda: None)


class FakeDriver:
    """Enough of cuda.bindings.driver to see the capture begun, ended and reported."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUstreamCaptureMode:
        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 2

    def __init__(self, fail_in: str = "") -> None:
        self.fail_in = fail_in
        self.calls: list[str] = []

    def CUstream(self, h: int) -> int:
        return h

    def _r(self, name: str, *value: object) -> tuple[object, ...]:
        self.calls.append(name)
        return (900 if name == self.fail_in else 0, *value)

    def cuStreamBeginCapture(self, s, mode):  # type: ignore[no-untyped-def]
        return self._r("begin")

    def cuStreamEndCapture(self, s):  # type: ignore[no-untyped-def]
        return self._r("end", "graph")

    def cuGraphInstantiate(self, g, flags):  # type: ignore[no-untyped-def]
        return self._r("instantiate", "exe")

    def cuGraphDestroy(self, g):  # type: ignore[no-untyped-def]
        return self._r("destroy")

    def cuGraphLaunch(self, exe, s):  # type: ignore[no-untyped-def]
        return self._r("launch")

    def cuGraphExecDestroy(self, exe):  # type: ignore[no-untyped-def]
        return self._r("exec_destroy")

    def cuGetErrorName(self, err):  # type: ignore[no-untyped-def]
        return (0, b"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")


def test_capture_records_then_replays(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeDriver()
    monkeypatch.setattr(gpu, "_cuda_driver", lambda: drv)
    recorded = []
    g = gpu.Graph(SimpleNamespace(handle=7), lambda: recorded.append("kernels"))
    g.launch()
    g.close()
    assert recorded == ["kernels"]
    assert drv.calls == ["begin", "end", "instantiate", "destroy", "launch", "exec_destroy"]


def test_a_failed_capture_names_the_call_and_the_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeDriver(fail_in="end")
    monkeypatch.setattr(gpu, "_cuda_driver", lambda: drv)
    with pytest.raises(HarnessError, match="cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE"):
        gpu.Graph(SimpleNamespace(handle=7), lambda: None)


def test_an_exception_while_recording_ends_the_capture(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeDriver()
    monkeypatch.setattr(gpu, "_cuda_driver", lambda: drv)

    def boom() -> None:
        raise HarnessError("a host read inside the capture")

    with pytest.raises(HarnessError, match="host read"):
        gpu.Graph(SimpleNamespace(handle=7), boom)
    assert drv.calls == ["begin", "end"]
