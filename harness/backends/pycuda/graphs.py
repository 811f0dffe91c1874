"""CUDA graph capture (``--graph``): the launches of a run enqueued on a stream, captured
once and replayed with one ``cuGraphLaunch`` per sample.

PyCUDA has no stream capture, so the capture goes through cuda-python's driver bindings on
PyCUDA's stream handle (same primary context).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.errors import HarnessError


def load_driver() -> Any:
    """cuda-python's driver bindings; a one-line error when they are missing."""
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise HarnessError("--graph needs cuda-python's driver bindings: "
                           "pip install cuda-bindings") from exc
    return driver


class Graph:
    """Launches enqueued by ``record`` on ``stream``, captured once as a CUDA graph.

    The capture uses cuda-python's driver API on PyCUDA's stream handle (same primary
    context); ``launch`` replays every captured kernel with one ``cuGraphLaunch``.
    """

    def __init__(self, stream: Any, record: Callable[[], None]) -> None:
        cu = self._cu = load_driver()
        self._stream = cu.CUstream(int(stream.handle))
        self._check(cu.cuStreamBeginCapture(
            self._stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "cuStreamBeginCapture")
        try:
            record()
        except BaseException:
            cu.cuStreamEndCapture(self._stream)
            raise
        graph = self._check(cu.cuStreamEndCapture(self._stream), "cuStreamEndCapture")
        try:
            self._exe = self._check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        finally:
            cu.cuGraphDestroy(graph)

    def _check(self, result: Any, what: str) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != self._cu.CUresult.CUDA_SUCCESS:
            name = self._cu.cuGetErrorName(err)[1]
            raise HarnessError(f"CUDA graph capture failed in {what}: "
                               f"{name.decode() if isinstance(name, bytes) else err}")
        return rest[0] if rest else None

    def launch(self) -> None:
        """Replay the graph on the stream (asynchronous)."""
        self._check(self._cu.cuGraphLaunch(self._exe, self._stream), "cuGraphLaunch")

    def close(self) -> None:
        """Free the executable graph."""
        self._cu.cuGraphExecDestroy(self._exe)
