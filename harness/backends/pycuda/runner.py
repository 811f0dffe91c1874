"""The ``pycuda`` backend: stages run, checked and timed on one GPU
(``harness.contract.backend.Backend``).

Needs an open :class:`harness.backends.pycuda.context.Device`; never creates a context
itself. Modules are compiled once per (stage, variant, source hash) and cached, outside any
timed region. The jobs it puts together live beside it: ``buffers`` (allocation and
poison), ``launcher``, ``compile``, ``l2`` (flush and hold), ``sampling``, ``graphs``,
``bandwidth`` and ``pipeline``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from harness.backends.pycuda.bandwidth import copy_bandwidth, mix_bandwidth, write_bandwidth
from harness.backends.pycuda.buffers import Buffers
from harness.backends.pycuda.compile import ModuleCache, compile_timing_kernels
from harness.backends.pycuda.context import Device
from harness.backends.pycuda.gate import Gate
from harness.backends.pycuda.graphs import Graph
from harness.backends.pycuda.l2 import FlushAndHold
from harness.backends.pycuda.launcher import ModuleLauncher
from harness.backends.pycuda.pipeline import run_pipeline
from harness.backends.pycuda.sampling import ClockProbe, event_sampler
from harness.contract.backend import RunResult
from harness.contract.stage import Pipeline, Point, Stage, Variant
from harness.contract.timing import Sample, Timing, TimingConfig, measure


class GpuRunner:
    """Executes stages on one device: validation runs, timed runs, pipelines, copy bandwidth.

    Its parts other backends share (the torch peers time on the same stream): ``stream``,
    :attr:`prelude` (the L2 flush and the stream hold) and :meth:`sampler`.
    """

    backend = "pycuda"

    def __init__(self, device: Device) -> None:
        self.device = device
        self.drv = device.driver
        self.stream = self.drv.Stream()
        info = device.info
        #: The compiled modules of this device's stage variants.
        self.modules = ModuleCache(info.arch)
        #: What is enqueued ahead of a timed region on :attr:`stream`.
        self.prelude = FlushAndHold(self.drv, self.stream, info.arch, info.l2_bytes,
                                    info.sm_count)
        #: What holds a sample's start until the host has enqueued it, on :attr:`stream`.
        self.gate = Gate(self.drv, self.stream, info.arch)
        #: The SM clock, measured after each sample on :attr:`stream`.
        self.clock = ClockProbe(self.drv, self.stream, info.arch, info.sm_clock_mhz)

    def module(self, stage: Stage, variant: Variant) -> Any:
        """The compiled module of a stage variant (compiled on first use, then cached)."""
        return self.modules.get(stage, variant)

    def launcher(self, stage: Stage, variant: Variant) -> ModuleLauncher:
        """A launcher bound to the stage variant's module and this runner's stream."""
        return ModuleLauncher(stage, self.module(stage, variant), self.stream,
                              stage.block_for(variant), self.device.info.sm_count,
                              lambda: self.modules.cubin(stage, variant))

    def sampler(self, enqueue: Callable[[], None], cold: bool,
                drain: bool = False) -> Callable[[], Sample]:
        """One event-timed sample of what ``enqueue`` puts on this runner's stream per call
        (µs), the L2 flushed first (``cold``) and, with ``drain``, again before the end event
        (the flush's own time taken off), the start held until the host has enqueued the run
        (the gate), the SM clock read after."""
        return event_sampler(self.drv, self.stream, self.prelude, self.gate, self.clock,
                             enqueue, cold, drain)

    def run(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
            point: Point) -> RunResult:
        """One poisoned, synchronised run, outputs and inputs read back; then the same run
        on the same inputs under the second poison, its outputs as ``again`` (an element
        the kernel leaves unwritten holds each run's poison, so the two differ there even
        where the first poison is a value the element may rightly hold)."""
        launch = self.launcher(stage, variant)
        bufs = Buffers.allocate(self.drv, stage, inputs, point)
        try:
            runs = []
            for pattern in (0, 1):
                if pattern:
                    bufs.upload(inputs)  # an in-place or mutating stage's inputs restored
                bufs.poison(self.stream, pattern)
                stage.enqueue(launch, bufs.all(), point, variant)
                self.stream.synchronize()
                runs.append(bufs.download(inputs, pattern))
            first, second = runs
            damage = {n: max(d, second.guard_damage.get(n, 0))
                      for n, d in first.guard_damage.items()}
            return dataclasses.replace(first, guard_damage=damage, again=second.outputs)
        finally:
            bufs.free()

    @contextlib.contextmanager
    def bound(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
              point: Point) -> Iterator[Callable[[], None]]:
        """A function enqueueing one run on uploaded inputs (freed on exit); it does not
        synchronise."""
        launcher = self.launcher(stage, variant)
        bufs = Buffers.allocate(self.drv, stage, inputs, point)
        args = bufs.all()
        try:
            yield lambda: stage.enqueue(launcher, args, point, variant)
        finally:
            bufs.free()

    def launches(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
                 point: Point, count: int) -> None:
        """Enqueue ``count`` runs of the stage back to back and wait (what ncu profiles)."""
        with self.bound(stage, variant, inputs, point) as enqueue:
            for _ in range(count):
                enqueue()
            self.stream.synchronize()

    def time(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
             point: Point, cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """One poisoned run read back for checking, then warm-up, then event samples.

        An in-place stage's samples run on its own previous output (the inputs are restored
        once, before the warm-up): the same work and traffic on every sample. With
        ``cfg.spacer_bytes`` that much device memory is held while the buffers are allocated
        and used, so that they lie elsewhere.
        """
        # The module first: loaded behind a spacer, its globals would stay there.
        launcher = self.launcher(stage, variant)
        with self._spacer(cfg.spacer_bytes):
            return self._time(stage, variant, launcher, inputs, point, cfg)

    def _time(self, stage: Stage, variant: Variant, launcher: ModuleLauncher,
              inputs: Mapping[str, np.ndarray], point: Point,
              cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """:meth:`time` on whatever memory is free now."""
        bufs = Buffers.allocate(self.drv, stage, inputs, point)
        try:
            args = bufs.all()

            def enqueue() -> None:
                stage.enqueue(launcher, args, point, variant)

            bufs.poison(self.stream)
            enqueue()
            self.stream.synchronize()
            result = bufs.download(inputs)
            if stage.inplace or stage.mutates:
                bufs.upload(inputs)
            for _ in range(cfg.warmup):
                enqueue()
            self.stream.synchronize()
            if not cfg.graph:
                return result, measure(self.sampler(enqueue, cfg.cold, cfg.drain), cfg)
            graph = Graph(self.stream, enqueue)
            try:
                graph.launch()  # the first replay uploads the graph: outside the samples
                self.stream.synchronize()
                timing = measure(self.sampler(graph.launch, cfg.cold, cfg.drain), cfg)
            finally:
                graph.close()
            return result, dataclasses.replace(timing, launch="graph")
        finally:
            bufs.free()

    def copy_bandwidth(self, nbytes: int, cfg: TimingConfig) -> tuple[Timing, float]:
        """Device-to-device copy of ``nbytes``; returns the timing and GB/s (read + write)."""
        return copy_bandwidth(self.drv, self.stream, self.sampler, nbytes, cfg)

    def write_bandwidth(self, nbytes: int, cfg: TimingConfig) -> tuple[Timing, float]:
        """A fill of ``nbytes`` by the driver's memset; the timing and GB/s (bytes written)."""
        return write_bandwidth(self.drv, self.stream, self.sampler, nbytes, cfg)

    def mix_bandwidth(self, nbytes: int, reads: int, writes: int,
                      cfg: TimingConfig) -> tuple[Timing, float]:
        """``nbytes`` read as ``reads`` planes, each unit of them written ``writes`` times
        (``timing.cu``'s ``harness_mix<reads>``); the timing and GB/s (bytes read +
        written)."""
        kernel = compile_timing_kernels(self.device.info.arch).get_function(
            f"harness_mix{reads}")
        return mix_bandwidth(self.drv, self.stream, self.sampler, kernel, nbytes, reads,
                             writes, cfg)

    def pipeline(self, pipe: Pipeline, stages: Mapping[str, Stage],
                 inputs: Mapping[str, np.ndarray], point: Point, repeats: int, cold: bool,
                 warmup: int = 1, spacer_bytes: int = 0,
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[float]]]:
        """Run a pipeline once with poisoned scratch memory and read its outputs back, then
        ``warmup`` + ``repeats`` more times, timing its named intervals with events; with
        ``spacer_bytes`` that much device memory held throughout, so its buffers lie
        elsewhere (its steps' modules are loaded on their first run, which a round without
        a spacer makes first: :mod:`harness.engine.repeats`)."""
        with self._spacer(spacer_bytes):
            return run_pipeline(self.drv, self.stream, self.modules, self.prelude, pipe,
                                stages, inputs, point, repeats, cold, warmup,
                                sm_count=self.device.info.sm_count, gate=self.gate)

    @contextlib.contextmanager
    def _spacer(self, nbytes: int) -> Iterator[None]:
        """``nbytes`` of device memory held for the block (nothing for 0), so that what is
        allocated inside it lies elsewhere in physical memory."""
        spacer = self.drv.mem_alloc(nbytes) if nbytes > 0 else None
        try:
            yield
        finally:
            if spacer is not None:
                spacer.free()

    def is_oom(self, exc: BaseException) -> bool:
        """Whether an exception is the device running out of memory."""
        return isinstance(exc, self.drv.MemoryError) or "out of memory" in str(exc).lower()

    def free_device_bytes(self) -> int:
        """Free device memory now (what the engine's memory guard weighs a point against)."""
        return int(self.drv.mem_get_info()[0])
