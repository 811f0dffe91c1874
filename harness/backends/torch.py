"""PyTorch peers: each stage's ``torch_impl`` run eagerly (``torch``) or through
``torch.compile`` (``torch_compile``), and the peers a stage names (``Stage.peers``: a
library call, another precision), validated and timed exactly as our kernels are; and the
peers a pipeline names (``Pipeline.peers``: the same result from the same inputs another
way), timed as speed references beside it.

A named peer's ``prepare`` runs once per run or timing, on the first tensors and outside
the timed region (weights cast once, as a deployment holds them).

On the GPU the peer runs on the harness's own stream (wrapped as a torch ExternalStream,
in the same primary context), so the same L2 flush, the same CUDA events and the same
sampling loop time it. On the CPU the same code runs on CPU tensors: what CI checks against
the references.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.contract.backend import RunResult, no_pipelines
from harness.contract.stage import Pipeline, Point, Stage, Variant
from harness.contract.timing import Timing, TimingConfig, measure
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.backends.pycuda.runner import GpuRunner

#: The peers every stage with a ``torch_impl`` has.
BACKENDS = ("torch", "torch_compile")

#: Inductor's switch that compiles an fp32 division as the IEEE one (Triton's ``div_rn``), as
#: eager PyTorch divides: by default a Triton ``/`` is ``div.full``, up to 2 ulp off, and
#: the weight stages' scales (absmax / 127) came out 1 ulp off at ~5 % of the groups, a
#: failed row no speedup could be taken against. Its name by PyTorch release, newest first.
EAGER_DIVISION = ("eager_numerics.division_rounding", "emulate_divison_rounding")


def compile_options(config: Any) -> dict[str, bool]:
    """The ``torch.compile`` options of the ``torch_compile`` peer: IEEE fp32 division
    (``EAGER_DIVISION``) under whichever name this Inductor ``config`` has; none where it
    has neither (the peer then divides as Inductor does by default, and a stage dividing
    in fp32 may fail its check, a failed row as before)."""
    for key in EAGER_DIVISION:
        obj = config
        try:
            for part in key.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return {key: True}
    return {}


def load_torch() -> Any:
    """The torch module; a one-line error when it is missing."""
    try:
        import torch
    except ImportError as exc:
        raise HarnessError("the torch peers need PyTorch: pip install '.[compare]'") from exc
    return torch


def serves(peer: str, target: object) -> bool:
    """Whether the peer called ``peer`` runs ``target``: ``torch`` and ``torch_compile`` a
    stage with a ``torch_impl``, a named peer the stage or pipeline that names it."""
    if peer in BACKENDS:
        return getattr(target, "torch_impl", None) is not None
    return peer in getattr(target, "peers", {})


def _kind(target: object) -> str:
    return "pipeline" if isinstance(target, Pipeline) else "stage"


class TorchRunner:
    """A peer backend: ``torch`` (eager), ``torch_compile`` or one of the ``named`` peers
    that stages declare, on a GpuRunner's stream or, with ``gpu=None``, on the CPU."""

    def __init__(self, backend: str, gpu: GpuRunner | None = None,
                 named: Collection[str] = ()) -> None:
        if backend not in BACKENDS and backend not in named:
            raise HarnessError(f"unknown peer {backend!r} "
                               f"(known: {', '.join([*BACKENDS, *named])})")
        self.backend = backend
        self.torch = load_torch()
        self.gpu = gpu
        # The harness's device by its index (``--device N``): torch's "cuda" alone is its
        # current device, another GPU than the harness's stream and events where N > 0.
        self.device = f"cuda:{gpu.device.info.index}" if gpu is not None else "cpu"
        if gpu is not None:
            torch = self.torch
            torch.cuda.set_device(self.device)
            # The harness's stream, seen by torch: same context, same events.
            self.stream = torch.cuda.ExternalStream(int(gpu.stream.handle), device=self.device)
            torch.backends.cuda.matmul.allow_tf32 = False  # FP32 as SPEC's GEMM asks

    def _fn(self, stage: Stage | Pipeline, variant: Variant, point: Point) -> Any:
        torch = self.torch
        if self.backend not in BACKENDS:
            peer = stage.peers.get(self.backend)
            if peer is None:
                raise HarnessError(f"{_kind(stage)} {stage.name} has no peer "
                                   f"{self.backend!r}")
            if peer.skip is not None and (why := peer.skip(point)):
                raise HarnessError(f"peer {self.backend}: {why}")
            named = peer.fn
            return lambda t: named(torch, t, point, variant)
        impl = getattr(stage, "torch_impl", None)
        if impl is None:
            raise HarnessError(f"{_kind(stage)} {stage.name} has no torch peer")

        def fn(t: Mapping[str, Any]) -> dict[str, Any]:
            return impl(torch, t, point, variant)

        if self.backend == "torch_compile":
            torch._dynamo.reset()  # one shape per point: never hit the recompile limit
            import torch._inductor.config as inductor_config

            return torch.compile(fn, dynamic=False, options=compile_options(inductor_config))
        return fn

    def _ctx(self) -> Any:
        return (self.torch.cuda.stream(self.stream) if self.gpu is not None
                else contextlib.nullcontext())

    def _tensors(self, inputs: Mapping[str, np.ndarray]) -> dict[str, Any]:
        return {k: self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)
                for k, a in inputs.items()}

    def _prepared(self, stage: Stage | Pipeline, point: Point,
                  tins: Mapping[str, Any]) -> dict[str, Any]:
        """What a named peer's ``prepare`` derives from the inputs (nothing for the others):
        made once, outside the timed region."""
        peer = stage.peers.get(self.backend) if self.backend not in BACKENDS else None
        if peer is None or peer.prepare is None:
            return {}
        return dict(peer.prepare(self.torch, tins, point))

    def _result(self, stage: Stage | Pipeline, point: Point, outs: Mapping[str, Any],
                tins: Mapping[str, Any]) -> RunResult:
        inputs_after = {k: t.detach().cpu().numpy() for k, t in tins.items()}
        if isinstance(stage, Pipeline):  # no declared outputs: each one as the peer gave it
            return RunResult({k: self._numpy(t) for k, t in outs.items()}, inputs_after)
        got = {}
        for k, (shape, dtype) in stage.outputs(point).items():
            a = self._numpy(outs[k])
            if np.dtype(dtype) == np.uint32 and a.dtype == np.int64:  # torch has no uint32
                a = a.astype(np.uint32)  # words built in int64 (exact below 2**32)
            # A stage whose kernel decides an extent (``trim``) returns only that much.
            got[k] = a if stage.trim is not None and a.size != int(np.prod(shape)) \
                else a.reshape(shape)
        return RunResult(got, inputs_after)

    def _numpy(self, t: Any) -> np.ndarray:
        """A tensor read back to the host; bf16 widened to fp32 (NumPy has no bf16)."""
        t = t.detach()
        return (t.float() if t.dtype == self.torch.bfloat16 else t).cpu().numpy()

    def run(self, stage: Stage | Pipeline, variant: Variant,
            inputs: Mapping[str, np.ndarray], point: Point) -> RunResult:
        """One call on fresh tensors, outputs and inputs read back."""
        fn = self._fn(stage, variant, point)
        with self._ctx():
            tins = self._tensors(inputs)
            outs = fn({**tins, **self._prepared(stage, point, tins)})
            if self.gpu is not None:
                self.gpu.stream.synchronize()
            return self._result(stage, point, outs, tins)

    def time(self, stage: Stage | Pipeline, variant: Variant,
             inputs: Mapping[str, np.ndarray], point: Point,
             cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """A named peer's ``prepare`` once, the first call read back for checking
        (compilation happens there), inputs restored, warm-up, then the harness's own event
        sampler on the same stream."""
        if self.gpu is None:
            raise HarnessError("timing the torch peers needs the GPU")
        fn = self._fn(stage, variant, point)
        with self._ctx():
            tins = self._tensors(inputs)
            ready = self._prepared(stage, point, tins)  # outside the timed region
            result = self._result(stage, point, fn({**tins, **ready}), tins)
            tins = {**self._tensors(inputs), **ready}  # an in-place stage changed them
            for _ in range(max(cfg.warmup, 1)):
                fn(tins)
            self.gpu.stream.synchronize()
            replay = self._graph(fn, tins) if cfg.graph else None
            self._check_stream()
            timing = measure(self.gpu.sampler(replay or (lambda: fn(tins)), cfg.cold,
                                              cfg.drain), cfg)
        return result, dataclasses.replace(timing, launch="graph" if replay else "stream")

    def _graph(self, fn: Any, tins: Mapping[str, Any]) -> Any:
        """``fn`` captured as a torch CUDA graph, or None where it cannot be (a host read
        such as ``.item()`` inside it): the row then says ``launch=stream``."""
        torch = self.torch
        g = torch.cuda.CUDAGraph()
        ours = torch.cuda.current_stream()
        try:
            with torch.cuda.graph(g):
                fn(tins)
        except Exception:  # torch raises several types for an uncapturable function
            # A capture that fails ends in capture_end raising, and torch.cuda.graph then
            # never leaves its side stream: put ours back, or the samples would time an
            # empty interval on ours while the work runs on the side stream.
            torch.cuda.set_stream(ours)
            torch.cuda.synchronize()
            return None
        g.replay()
        self.gpu.stream.synchronize()
        return g.replay

    def _check_stream(self) -> None:
        """Refuse to time unless torch's current stream is the harness's: the events are
        recorded there, so work enqueued anywhere else would not be inside them."""
        if not self.device.startswith("cuda"):
            return
        current = self.torch.cuda.current_stream().cuda_stream
        if current != self.stream.cuda_stream:
            raise HarnessError(f"peer {self.backend}: torch's current stream ({current:#x}) "
                               f"is not the harness's ({self.stream.cuda_stream:#x}); "
                               "its work would not be timed")

    def is_oom(self, exc: BaseException) -> bool:
        """torch's out-of-memory error."""
        return isinstance(exc, self.torch.cuda.OutOfMemoryError) or \
            "out of memory" in str(exc).lower()

    def pipeline(self, pipe: Pipeline, stages: Mapping[str, Stage],
                 inputs: Mapping[str, np.ndarray], point: Point, repeats: int, cold: bool,
                 warmup: int = 1, spacer_bytes: int = 0,
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[float]]]:
        """Pipelines are streams of CUDA kernels: only the pycuda backend runs their steps
        (a pipeline's named peer is timed by :meth:`time`)."""
        raise no_pipelines(pipe, self.backend)
