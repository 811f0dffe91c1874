"""Running and timing stages on the GPU through PyCUDA (the ``pycuda`` backend).

Needs an open :class:`harness.backends.pycuda.context.Device`; never creates a context itself. Modules are
compiled once per (stage, variant, source hash) and cached, outside any timed region.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness import paths
from harness.backends.pycuda.context import Device
from harness.contract import kernel as compiler
from harness.contract.backend import RunResult
from harness.contract.stage import Point, Stage, Variant, workspace
from harness.contract.timing import Timing, TimingConfig, measure
from harness.errors import HarnessError

#: Poison written over every output before a launch: a NaN for floats, a value outside any
#: valid range for int32, -91 for int8. An element the kernel does not write fails validation.
POISON32 = 0x7FA5A5A5
POISON8 = 0xA5
#: Poisoned bytes allocated past the end of every output: a write there is reported.
GUARD = 4096
#: How long the delay kernel holds the stream before a hot sample (hides launch overhead).
HOT_DELAY_NS = 20_000
#: How long the stream is held before each timed pipeline run (not inside any interval).
PIPELINE_HOLD_NS = 1_000_000

_SIG = {np.dtype(np.int32): "i", np.dtype(np.uint32): "I", np.dtype(np.int64): "q",
        np.dtype(np.uint64): "Q", np.dtype(np.float32): "f", np.dtype(np.float64): "d"}


def guard_pattern(dtype: np.dtype) -> np.ndarray:
    """The bytes of an untouched guard band after an output of ``dtype``."""
    if dtype.itemsize == 4:
        return np.full(GUARD // 4, POISON32, dtype="<u4").view(np.uint8)
    return np.full(GUARD, POISON8, dtype=np.uint8)


def _cuda_driver() -> Any:
    """cuda-python's driver bindings (PyCUDA has no stream capture); a one-line error when
    they are missing."""
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
        cu = self._cu = _cuda_driver()
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


class _Launcher:
    """Calls ``extern "C"`` functions of one module on one stream with prepared calls."""

    def __init__(self, stage: Stage, module: Any, stream: Any) -> None:
        self._stage = stage
        self._module = module
        self._stream = stream
        self._fns: dict[tuple[str, str], Any] = {}

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], *args: Any,
                 shared: int = 0) -> None:
        sig = "".join(_SIG[a.dtype] if isinstance(a, np.generic) else "P" for a in args)
        fn = self._fns.get((name, sig))
        if fn is None:
            try:
                fn = self._module.get_function(name)
            except Exception as exc:
                raise HarnessError(f"{self._stage.name}: kernel has no extern \"C\" function "
                                   f"{name!r}") from exc
            fn.prepare(sig)
            self._fns[(name, sig)] = fn
        vals = [a if isinstance(a, np.generic) else int(a) for a in args]
        fn.prepared_async_call(tuple(grid), tuple(block), self._stream, *vals,
                               shared_size=shared)


@dataclass
class _Buffers:
    """Device allocations of one run: inputs, outputs, and what the outputs look like."""

    inputs: dict[str, Any]
    outputs: dict[str, Any]
    specs: dict[str, tuple[tuple[int, ...], np.dtype]]
    #: Outputs written in place into an input's buffer: not allocated, not poisoned.
    aliased: frozenset[str] = frozenset()
    #: The stage's scratch (``Stage.workspace``): passed to the launch, never read back.
    work: dict[str, Any] = field(default_factory=dict)

    def all(self) -> dict[str, Any]:
        return {**self.inputs, **self.outputs, **self.work}

    def free(self) -> None:
        owned = [*self.inputs.values(), *self.work.values(),
                 *(a for n, a in self.outputs.items() if n not in self.aliased)]
        for a in owned:
            a.free()


class GpuRunner:
    """Executes stages on one device: validation runs, timed runs, copy bandwidth."""

    backend = "pycuda"

    def __init__(self, device: Device) -> None:
        self.device = device
        self.drv = device.driver
        self.stream = self.drv.Stream()
        self._modules: dict[tuple[str, str, str], Any] = {}
        self._flush: Any = None
        self._timing: Any = None

    # -- compilation ---------------------------------------------------------------------
    def module(self, stage: Stage, variant: Variant) -> Any:
        """The compiled module of a stage variant (compiled on first use, then cached)."""
        key = (stage.name, variant.name, compiler.kernel_hash(stage, variant))
        if key not in self._modules:
            self._modules[key] = compiler.compile_module(stage, variant, self.device.info.arch)
        return self._modules[key]

    def launcher(self, stage: Stage, variant: Variant) -> _Launcher:
        """A launcher bound to the stage variant's module and this runner's stream."""
        return _Launcher(stage, self.module(stage, variant), self.stream)

    # -- memory --------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> Any:
        return self.drv.mem_alloc(max(int(nbytes), 1))

    def _buffers(self, stage: Stage, inputs: Mapping[str, np.ndarray], point: Point) -> _Buffers:
        bufs = _Buffers({}, {}, stage.outputs(point), frozenset(stage.inplace))
        try:
            for name, arr in inputs.items():
                bufs.inputs[name] = self._alloc(arr.nbytes)
            self._upload(bufs, inputs)
            for name, (shape, dtype) in bufs.specs.items():
                if name in stage.inplace:
                    bufs.outputs[name] = bufs.inputs[stage.inplace[name]]
                else:
                    bufs.outputs[name] = self._alloc(
                        int(np.prod(shape)) * np.dtype(dtype).itemsize + GUARD)
            for name, (shape, dtype) in workspace(stage, point).items():
                bufs.work[name] = self._alloc(int(np.prod(shape)) * np.dtype(dtype).itemsize)
        except BaseException:
            bufs.free()
            raise
        return bufs

    def _upload(self, bufs: _Buffers, inputs: Mapping[str, np.ndarray]) -> None:
        for name, arr in inputs.items():
            self.drv.memcpy_htod(bufs.inputs[name], np.ascontiguousarray(arr))

    def _poison(self, bufs: _Buffers) -> None:
        for name, (shape, dtype) in bufs.specs.items():
            if name in bufs.aliased:
                continue
            n = int(np.prod(shape))
            size = np.dtype(dtype).itemsize
            if size == 4:  # the guard band too (GUARD is a multiple of 4)
                self.drv.memset_d32_async(bufs.outputs[name], POISON32, n + GUARD // 4,
                                          self.stream)
            else:
                self.drv.memset_d8_async(bufs.outputs[name], POISON8, n * size + GUARD,
                                         self.stream)

    def _download(self, bufs: _Buffers, inputs: Mapping[str, np.ndarray]) -> RunResult:
        outs, damage = {}, {}
        for name, (shape, dtype) in bufs.specs.items():
            outs[name] = np.empty(shape, dtype=dtype)
            self.drv.memcpy_dtoh(outs[name], bufs.outputs[name])
            if name not in bufs.aliased:
                tail = np.empty(GUARD, dtype=np.uint8)
                self.drv.memcpy_dtoh(tail, int(bufs.outputs[name]) + outs[name].nbytes)
                damage[name] = int((tail != guard_pattern(np.dtype(dtype))).sum())
        after = {}
        for name, arr in inputs.items():
            after[name] = np.empty_like(arr)
            self.drv.memcpy_dtoh(after[name], bufs.inputs[name])
        return RunResult(outs, after, damage)

    # -- execution -----------------------------------------------------------------------
    def run(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
            point: Point) -> RunResult:
        """One poisoned, synchronised launch; outputs and inputs read back."""
        launch = self.launcher(stage, variant)
        bufs = self._buffers(stage, inputs, point)
        try:
            self._poison(bufs)
            stage.launch(launch, bufs.all(), point, variant)
            self.stream.synchronize()
            return self._download(bufs, inputs)
        finally:
            bufs.free()

    def _helpers(self) -> Any:
        """The harness's own timing kernels (harness/cuda/timing.cu), compiled once."""
        if self._timing is None:
            from pycuda.compiler import SourceModule

            src = (paths.harness_cuda_dir() / "timing.cu").read_text()
            mod = SourceModule(src, no_extern_c=True, arch=self.device.info.arch)
            delay, flush = mod.get_function("harness_delay"), mod.get_function("harness_flush")
            delay.prepare("Q")
            flush.prepare("PqP")
            self._timing = (mod, delay, flush)
        return self._timing

    def _hold(self, ns: int) -> None:
        """Enqueue the harness's delay kernel: the stream stays busy for ``ns``."""
        self._helpers()[1].prepared_async_call((1, 1, 1), (1, 1, 1), self.stream,
                                               np.uint64(ns))

    def _flush_l2(self) -> None:
        """Enqueue a read of 4x the L2 on the stream: what the last run left is evicted, and
        the lines that replace it are clean (no write-back inside the next timed region)."""
        if self._flush is None:
            nbytes = 4 * self.device.info.l2_bytes
            self._flush = self._alloc(nbytes)
            self._flush_sink = self._alloc(4)
            self.drv.memset_d8(self._flush, 0, nbytes)
            self._flush_vecs = nbytes // 16
        self._helpers()[2].prepared_async_call(
            (4 * self.device.info.sm_count, 1, 1), (512, 1, 1), self.stream,
            int(self._flush), np.int64(self._flush_vecs), int(self._flush_sink))

    @contextlib.contextmanager
    def bound(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
              point: Point) -> Iterator[Callable[[], None]]:
        """A launch function on uploaded inputs (freed on exit); it does not synchronise."""
        launcher = self.launcher(stage, variant)
        bufs = self._buffers(stage, inputs, point)
        args = bufs.all()
        try:
            yield lambda: stage.launch(launcher, args, point, variant)
        finally:
            bufs.free()

    def launches(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
                 point: Point, count: int) -> None:
        """Launch the stage ``count`` times back to back and wait (what ncu profiles)."""
        with self.bound(stage, variant, inputs, point) as launch:
            for _ in range(count):
                launch()
            self.stream.synchronize()

    def _sampler(self, launch: Callable[[], None], cold: bool) -> Callable[[], float]:
        drv = self.drv
        start, end = drv.Event(), drv.Event()

        def sample() -> float:
            # The flush (or delay) keeps the GPU busy while the host enqueues the events
            # and the launch, so host launch overhead is not inside the timed region.
            if cold:
                self._flush_l2()
            else:
                self._hold(HOT_DELAY_NS)
            start.record(self.stream)
            launch()
            end.record(self.stream)
            end.synchronize()
            return start.time_till(end) * 1000.0

        return sample

    def time(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
             point: Point, cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """One poisoned launch read back for checking, then warm-up, then event samples.

        An in-place stage's samples run on its own previous output (the inputs are restored
        once, before the warm-up): the same work and traffic on every sample.
        """
        launcher = self.launcher(stage, variant)
        bufs = self._buffers(stage, inputs, point)
        try:
            args = bufs.all()

            def launch() -> None:
                stage.launch(launcher, args, point, variant)

            self._poison(bufs)
            launch()
            self.stream.synchronize()
            result = self._download(bufs, inputs)
            if stage.inplace or stage.mutates:
                self._upload(bufs, inputs)
            for _ in range(cfg.warmup):
                launch()
            self.stream.synchronize()
            if not cfg.graph:
                return result, measure(self._sampler(launch, cfg.cold), cfg)
            graph = Graph(self.stream, launch)
            try:
                graph.launch()  # the first replay uploads the graph: outside the samples
                self.stream.synchronize()
                timing = measure(self._sampler(graph.launch, cfg.cold), cfg)
            finally:
                graph.close()
            return result, dataclasses.replace(timing, launch="graph")
        finally:
            bufs.free()

    def copy_bandwidth(self, nbytes: int, cfg: TimingConfig) -> tuple[Timing, float]:
        """Device-to-device copy of ``nbytes``; returns the timing and GB/s (read + write)."""
        src, dst = self._alloc(nbytes), self._alloc(nbytes)
        try:
            self.drv.memset_d8(src, 1, nbytes)

            def copy() -> None:
                self.drv.memcpy_dtod_async(dst, src, nbytes, self.stream)

            for _ in range(max(cfg.warmup, 1)):
                copy()
            self.stream.synchronize()
            t = measure(self._sampler(copy, cfg.cold), cfg)
        finally:
            src.free()
            dst.free()
        return t, 2 * nbytes / (t.median_us * 1e-6) / 1e9

    def pipeline(self, pipe: Any, stages: Mapping[str, Stage],
                 inputs: Mapping[str, np.ndarray], point: Point, repeats: int, cold: bool,
                 warmup: int = 1) -> tuple[dict[str, np.ndarray], dict[str, Any],
                                           dict[str, list[float]]]:
        """Run a pipeline once with poisoned scratch memory and read its outputs back, then
        ``warmup`` + ``repeats`` more times, timing its named intervals with events."""
        ctx = _PipelineContext(self, stages)
        dev_in = {k: self._alloc(a.nbytes) for k, a in inputs.items()}
        try:
            for k, a in inputs.items():
                self.drv.memcpy_htod(dev_in[k], np.ascontiguousarray(a))
            ctx.poison = True
            trace = pipe.run(ctx, dev_in, point)
            ctx.poison = False
            for s in ctx.streams:
                s.synchronize()
            outs = {}
            for name, (buf, shape, dtype) in trace.outputs.items():
                outs[name] = np.empty(shape, dtype=dtype)
                self.drv.memcpy_dtoh(outs[name], buf)
            per_rep: dict[str, list[float]] = {k: [] for k in trace.intervals}
            for r in range(warmup + repeats):
                ctx.recycle()
                if cold:
                    self._flush_l2()
                # Hold the stream while the host enqueues the run up to its first host-side
                # decision, so the intervals before it hold no Python launch gaps.
                self._hold(PIPELINE_HOLD_NS)
                tr = pipe.run(ctx, dev_in, point)
                for s in ctx.streams:
                    s.synchronize()
                if r >= warmup:
                    for k, pairs in tr.intervals.items():
                        per_rep.setdefault(k, []).append(
                            sum(ctx.elapsed_us(a, b) for a, b in pairs))
            return outs, dict(trace.host), per_rep
        finally:
            ctx.free()
            for b in dev_in.values():
                b.free()

    def is_oom(self, exc: BaseException) -> bool:
        """Whether an exception is the device running out of memory."""
        return isinstance(exc, self.drv.MemoryError) or "out of memory" in str(exc).lower()


class _PipelineContext:
    """``harness.contract.stage.PipelineContext`` on two streams of one runner."""

    def __init__(self, runner: GpuRunner, stages: Mapping[str, Stage]) -> None:
        self.runner = runner
        self.drv = runner.drv
        self.streams = [runner.stream, runner.drv.Stream()]
        self.stages = stages
        self.events: dict[str, Any] = {}
        self._launchers: dict[tuple[str, str, int], _Launcher] = {}
        # Scratch memory pooled by size: repeated runs allocate nothing after the first.
        self._free: dict[int, list[Any]] = {}
        self._used: list[tuple[int, Any]] = []
        #: Poison scratch memory as it is handed out (the run whose outputs are checked).
        self.poison = False
        self._pinned: dict[tuple[tuple[int, ...], str], np.ndarray] = {}
        self._steps: dict[tuple[Any, ...],
                          tuple[Stage, Variant, dict[str, Any], Any, dict[str, Any]]] = {}

    def launcher(self, stage: str, variant: str, stream: int) -> _Launcher:
        key = (stage, variant, stream)
        if key not in self._launchers:
            st = self.stages[stage]
            self._launchers[key] = _Launcher(st, self.runner.module(st, st.variant(variant)),
                                             self.streams[stream])
        return self._launchers[key]

    def step(self, stage: str, variant: str, stream: int, bufs: Mapping[str, Any],
             **values: Any) -> None:
        # Prepared once per (step, point): the Python between launches is what leaves the
        # GPU idle at small batch, so repeated runs skip the lookups.
        key = (stage, variant, stream, tuple(sorted(values.items())))
        prep = self._steps.get(key)
        if prep is None:
            st = self.stages[stage]
            v = st.variant(variant)
            names = {a.name for a in st.axes}
            point = st.point(v, **{k: val for k, val in values.items() if k in names})
            prep = self._steps[key] = (st, v, point, self.launcher(stage, variant, stream),
                                       workspace(st, point))
        st, v, point, launcher, work = prep
        missing = {n: spec for n, spec in work.items() if n not in bufs}
        if missing:  # the stage's scratch, from this run's pool like the pipeline's own
            bufs = {**bufs, **{n: self.alloc(*spec) for n, spec in missing.items()}}
        st.launch(launcher, bufs, point, v)

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> Any:
        nbytes = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
        pool = self._free.get(nbytes)
        buf = pool.pop() if pool else self.runner._alloc(nbytes)
        self._used.append((nbytes, buf))
        if self.poison:  # synchronous: done before any stream touches the buffer
            if np.dtype(dtype).itemsize == 4:
                self.drv.memset_d32(buf, POISON32, nbytes // 4)
            else:
                self.drv.memset_d8(buf, POISON8, nbytes)
        return buf

    def recycle(self) -> None:
        """Every buffer handed out becomes free for the next run."""
        for nbytes, buf in self._used:
            self._free.setdefault(nbytes, []).append(buf)
        self._used.clear()

    def free(self) -> None:
        """Release all scratch memory."""
        self.recycle()
        for bufs in self._free.values():
            for b in bufs:
                b.free()
        self._free.clear()

    def read(self, buf: Any, shape: tuple[int, ...], dtype: Any, stream: int) -> np.ndarray:
        # Page-locked and on this stream: a plain copy would go through the legacy default
        # stream and wait for the other stream too, serialising the two paths.
        key = (tuple(shape), np.dtype(dtype).str)
        host = self._pinned.get(key)
        if host is None:  # page-locking is slow (~1 ms): once per shape, not per run
            host = self._pinned[key] = self.drv.pagelocked_empty(shape, dtype)
        self.drv.memcpy_dtoh_async(host, buf, self.streams[stream])
        self.streams[stream].synchronize()
        return np.array(host)

    def mark(self, name: str, stream: int) -> None:
        ev = self.events.get(name)
        if ev is None:
            ev = self.events[name] = self.drv.Event()
        ev.record(self.streams[stream])

    def wait(self, name: str, stream: int) -> None:
        self.streams[stream].wait_for_event(self.events[name])

    def elapsed_us(self, a: str, b: str) -> float:
        return self.events[a].time_till(self.events[b]) * 1000.0
