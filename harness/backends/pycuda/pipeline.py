"""Pipelines on the GPU: the context a pipeline's ``run`` gets (stage launchers on two
streams, named events, pooled scratch memory), and the checked run followed by the timed
repetitions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.backends.pycuda.buffers import alloc, poison
from harness.backends.pycuda.compile import ModuleCache
from harness.backends.pycuda.l2 import FlushAndHold
from harness.backends.pycuda.launcher import ModuleLauncher
from harness.contract.stage import Pipeline, Point, Stage, Variant, workspace

#: How long the stream is held before each timed pipeline run (not inside any interval).
PIPELINE_HOLD_NS = 1_000_000


class GpuPipelineContext:
    """``harness.api.PipelineContext`` on two streams of one device: stream 0 is the one
    given (the runner's), stream 1 a new one."""

    def __init__(self, drv: Any, stream: Any, modules: ModuleCache,
                 stages: Mapping[str, Stage], sm_count: int) -> None:
        self.drv = drv
        #: Multiprocessors of the device: what a step's persistent grid is sized by.
        self.sm_count = sm_count
        self.streams = [stream, drv.Stream()]
        self.stages = stages
        self.modules = modules
        self.events: dict[str, Any] = {}
        self._launchers: dict[tuple[str, str, int], ModuleLauncher] = {}
        # Scratch memory pooled by size: repeated runs allocate nothing after the first.
        self._free: dict[int, list[Any]] = {}
        # Zeroed workspace of each step, kept across runs (``_zeroed``).
        self._zeros: dict[tuple[Any, ...], Any] = {}
        self._used: list[tuple[int, Any]] = []
        #: Poison scratch memory as it is handed out (the run whose outputs are checked).
        self.poison = False
        self._pinned: dict[tuple[tuple[int, ...], str], np.ndarray] = {}
        self._steps: dict[tuple[Any, ...],
                          tuple[Stage, Variant, dict[str, Any], Any, dict[str, Any]]] = {}

    def launcher(self, stage: str, variant: str, stream: int) -> ModuleLauncher:
        """A launcher of a stage variant's module on one of the two streams."""
        key = (stage, variant, stream)
        if key not in self._launchers:
            st = self.stages[stage]
            v = st.variant(variant)
            self._launchers[key] = ModuleLauncher(
                st, self.modules.get(st, v), self.streams[stream], st.block_for(v),
                self.sm_count, cubin=lambda st=st, v=v: self.modules.cubin(st, v))
        return self._launchers[key]

    def step(self, stage: str, variant: str, stream: int, bufs: Mapping[str, Any],
             **values: Any) -> None:
        """Enqueue a stage through its plugin's ``enqueue`` at the point of ``values``."""
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
            bufs = {**bufs, **{n: self._zeroed(key, n, spec) if n in st.zeroed
                               else self.alloc(*spec) for n, spec in missing.items()}}
        st.enqueue(launcher, bufs, point, v)

    def _zeroed(self, key: tuple[Any, ...], name: str,
                spec: tuple[tuple[int, ...], Any]) -> Any:
        """A step's zeroed workspace: allocated and zeroed once, then the same buffer every
        run (its kernel leaves it zero), so no run after the first holds a synchronous
        memset between its launches (which would wait for the stream, and could not be
        captured in a graph)."""
        buf = self._zeros.get((key, name))
        if buf is None:
            nbytes = max(1, int(np.prod(spec[0])) * np.dtype(spec[1]).itemsize)
            buf = self._zeros[(key, name)] = alloc(self.drv, nbytes)
            self.drv.memset_d8(buf, 0, nbytes)
        return buf

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Scratch memory from the pool, poisoned while :attr:`poison` is set."""
        nbytes = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
        pool = self._free.get(nbytes)
        buf = pool.pop() if pool else alloc(self.drv, nbytes)
        self._used.append((nbytes, buf))
        if self.poison:  # synchronous: done before any stream touches the buffer
            poison(self.drv, buf, dtype, nbytes)
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
        for b in self._zeros.values():
            b.free()
        self._zeros.clear()

    def read(self, buf: Any, shape: tuple[int, ...], dtype: Any, stream: int) -> np.ndarray:
        """Copy a device buffer to the host on ``stream`` and wait for it."""
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
        """Record the event ``name`` on a stream."""
        ev = self.events.get(name)
        if ev is None:
            ev = self.events[name] = self.drv.Event()
        ev.record(self.streams[stream])

    def wait(self, name: str, stream: int) -> None:
        """Make a stream wait for the event ``name``."""
        self.streams[stream].wait_for_event(self.events[name])

    def elapsed_us(self, a: str, b: str) -> float:
        """Time from event ``a`` to event ``b``, in µs."""
        return self.events[a].time_till(self.events[b]) * 1000.0


def run_pipeline(drv: Any, stream: Any, modules: ModuleCache, prelude: FlushAndHold,
                 pipe: Pipeline, stages: Mapping[str, Stage], inputs: Mapping[str, np.ndarray],
                 point: Point, repeats: int, cold: bool, warmup: int = 1, *, sm_count: int,
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[float]]]:
    """Run a pipeline once with poisoned scratch memory and read its outputs back, then
    ``warmup`` + ``repeats`` more times, timing its named intervals with events."""
    ctx = GpuPipelineContext(drv, stream, modules, stages, sm_count)
    dev_in = {k: alloc(drv, a.nbytes) for k, a in inputs.items()}
    try:
        for k, a in inputs.items():
            drv.memcpy_htod(dev_in[k], np.ascontiguousarray(a))
        ctx.poison = True
        trace = pipe.run(ctx, dev_in, point)
        ctx.poison = False
        for s in ctx.streams:
            s.synchronize()
        outs = {}
        for name, (buf, shape, dtype) in trace.outputs.items():
            outs[name] = np.empty(shape, dtype=dtype)
            drv.memcpy_dtoh(outs[name], buf)
        per_rep: dict[str, list[float]] = {k: [] for k in trace.intervals}
        for r in range(warmup + repeats):
            ctx.recycle()
            if cold:
                prelude.flush()
            # Hold the stream while the host enqueues the run up to its first host-side
            # decision, so the intervals before it hold no Python launch gaps.
            prelude.hold(PIPELINE_HOLD_NS)
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
