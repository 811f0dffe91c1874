"""``harness.backends.pycuda.graphs.Graph`` (``--graph``) without a GPU: capture, replay, and
errors that are one clear line."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from harness.backends.pycuda import graphs
from harness.errors import HarnessError
from tests.backends.pycuda.fakes import FakeGraphDriver


def test_missing_cuda_python_is_one_clear_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # makes the import fail
    with pytest.raises(HarnessError, match="--graph needs cuda-python"):
        graphs.Graph(SimpleNamespace(handle=1), lambda: None)


def test_capture_records_then_replays(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeGraphDriver()
    monkeypatch.setattr(graphs, "load_driver", lambda: drv)
    recorded = []
    g = graphs.Graph(SimpleNamespace(handle=7), lambda: recorded.append("kernels"))
    g.launch()
    g.close()
    assert recorded == ["kernels"]
    assert drv.calls == ["begin", "end", "instantiate", "destroy", "launch", "exec_destroy"]


def test_a_failed_capture_names_the_call_and_the_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeGraphDriver(fail_in="end")
    monkeypatch.setattr(graphs, "load_driver", lambda: drv)
    with pytest.raises(HarnessError, match="cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE"):
        graphs.Graph(SimpleNamespace(handle=7), lambda: None)


def test_a_failed_instantiation_still_destroys_the_graph(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeGraphDriver(fail_in="instantiate")
    monkeypatch.setattr(graphs, "load_driver", lambda: drv)
    with pytest.raises(HarnessError, match="cuGraphInstantiate"):
        graphs.Graph(SimpleNamespace(handle=7), lambda: None)
    assert drv.calls == ["begin", "end", "instantiate", "destroy"]


def test_an_exception_while_recording_ends_the_capture(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drv = FakeGraphDriver()
    monkeypatch.setattr(graphs, "load_driver", lambda: drv)

    def boom() -> None:
        raise HarnessError("a host read inside the capture")

    with pytest.raises(HarnessError, match="host read"):
        graphs.Graph(SimpleNamespace(handle=7), boom)
    assert drv.calls == ["begin", "end"]
