"""PyTorch peers: each stage's ``torch_impl`` run eagerly (``torch``) or through
``torch.compile`` (``torch_compile``), validated and timed exactly as our kernels are.

On the GPU the peer runs on the harness's own stream (wrapped as a torch ExternalStream,
in the same primary context), so the same L2 flush, the same CUDA events and the same
sampling loop time it. On the CPU the same code runs on CPU tensors: what CI checks against
the references.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.contract.backend import RunResult, no_pipelines
from harness.contract.stage import Pipeline, Point, Stage, Variant
from harness.contract.timing import Timing, TimingConfig, measure
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.backends.pycuda.runner import GpuRunner

BACKENDS = ("torch", "torch_compile")


def load_torch() -> Any:
    """The torch module; a one-line error when it is missing."""
    try:
        import torch
    except ImportError as exc:
        raise HarnessError("the torch peers need PyTorch: pip install '.[compare]'") from exc
    return torch


class TorchRunner:
    """A peer backend: ``torch`` (eager) or ``torch_compile``, on a GpuRunner's stream or,
    with ``gpu=None``, on the CPU."""

    def __init__(self, backend: str, gpu: GpuRunner | None = None) -> None:
        if backend not in BACKENDS:
            raise HarnessError(f"unknown peer {backend!r} (known: {', '.join(BACKENDS)})")
        self.backend = backend
        self.torch = load_torch()
        self.gpu = gpu
        self.device = "cuda" if gpu is not None else "cpu"
        if gpu is not None:
            torch = self.torch
            # The harness's stream, seen by torch: same context, same events.
            self.stream = torch.cuda.ExternalStream(int(gpu.stream.handle))
            torch.backends.cuda.matmul.allow_tf32 = False  # FP32 as SPEC's GEMM asks

    def _fn(self, stage: Stage, variant: Variant, point: Point) -> Any:
        if stage.torch_impl is None:
            raise HarnessError(f"stage {stage.name} has no torch peer")
        torch, impl = self.torch, stage.torch_impl

        def fn(t: Mapping[str, Any]) -> dict[str, Any]:
            return impl(torch, t, point, variant)

        if self.backend == "torch_compile":
            torch._dynamo.reset()  # one shape per point: never hit the recompile limit
            return torch.compile(fn, dynamic=False)
        return fn

    def _ctx(self) -> Any:
        return (self.torch.cuda.stream(self.stream) if self.gpu is not None
                else contextlib.nullcontext())

    def _tensors(self, inputs: Mapping[str, np.ndarray]) -> dict[str, Any]:
        return {k: self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)
                for k, a in inputs.items()}

    def _result(self, stage: Stage, point: Point, outs: Mapping[str, Any],
                tins: Mapping[str, Any]) -> RunResult:
        specs = stage.outputs(point)
        got = {}
        for k, (shape, dtype) in specs.items():
            a = outs[k].detach().cpu().numpy()
            if np.dtype(dtype) == np.uint32 and a.dtype == np.int64:  # torch has no uint32
                a = a.astype(np.uint32)  # words built in int64 (exact below 2**32)
            # A stage whose kernel decides an extent (``trim``) returns only that much.
            got[k] = a if stage.trim is not None and a.size != int(np.prod(shape)) \
                else a.reshape(shape)
        return RunResult(got, {k: t.detach().cpu().numpy() for k, t in tins.items()})

    def run(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
            point: Point) -> RunResult:
        """One call on fresh tensors, outputs and inputs read back."""
        fn = self._fn(stage, variant, point)
        with self._ctx():
            tins = self._tensors(inputs)
            outs = fn(tins)
            if self.gpu is not None:
                self.gpu.stream.synchronize()
            return self._result(stage, point, outs, tins)

    def time(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
             point: Point, cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """First call read back for checking (compilation happens there), inputs restored,
        warm-up, then the harness's own event sampler on the same stream."""
        if self.gpu is None:
            raise HarnessError("timing the torch peers needs the GPU")
        fn = self._fn(stage, variant, point)
        with self._ctx():
            tins = self._tensors(inputs)
            result = self._result(stage, point, fn(tins), tins)
            tins = self._tensors(inputs)  # an in-place stage changed them
            for _ in range(max(cfg.warmup, 1)):
                fn(tins)
            self.gpu.stream.synchronize()
            replay = self._graph(fn, tins) if cfg.graph else None
            timing = measure(self.gpu.sampler(replay or (lambda: fn(tins)), cfg.cold), cfg)
        return result, dataclasses.replace(timing, launch="graph" if replay else "stream")

    def _graph(self, fn: Any, tins: Mapping[str, Any]) -> Any:
        """``fn`` captured as a torch CUDA graph, or None where it cannot be (a host read
        such as ``.item()`` inside it): the row then says ``launch=stream``."""
        torch = self.torch
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g):
                fn(tins)
        except Exception:  # torch raises several types for an uncapturable function
            torch.cuda.synchronize()
            return None
        g.replay()
        self.gpu.stream.synchronize()
        return g.replay

    def is_oom(self, exc: BaseException) -> bool:
        """torch's out-of-memory error."""
        return isinstance(exc, self.torch.cuda.OutOfMemoryError) or \
            "out of memory" in str(exc).lower()

    def pipeline(self, pipe: Pipeline, stages: Mapping[str, Stage],
                 inputs: Mapping[str, np.ndarray], point: Point, repeats: int, cold: bool,
                 warmup: int = 1) -> tuple[dict[str, np.ndarray], dict[str, Any],
                                           dict[str, list[float]]]:
        """Pipelines are streams of CUDA kernels: only the pycuda backend runs them."""
        raise no_pipelines(pipe, self.backend)
