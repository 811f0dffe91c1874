"""Pipelines on the GPU: the context a pipeline's ``run`` gets (stage launchers on two
streams, named events, pooled scratch memory), and the checked run followed by the timed
repetitions.

Each timed run starts behind a hold, so the host enqueues its first steps while the stream
is busy. A host read (the seed's decision on ``T``) lets stream 0 run dry: from then on the
host's launch time would land inside the next interval, so each interval's first mark on
stream 0 goes behind the gate (``gate.py``), which opens once the interval's last mark is
enqueued, or at a host read, or when ``run`` returns. The kernels of an interval then run
back to back, and the host's time lies between intervals, in the totals that span them (the
seed's "host-side decision included"), never in a kernel interval. Before a gate is closed
the host waits until the device has passed the last one (already opened), since the two
share their flags. A first run compiles the modules and allocates the scratch; the checked
run after it gets its scratch poisoned before it starts (``poison_ahead``), so nothing
synchronous lies between its steps, as in the timed runs. Neither is gated.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.backends.pycuda.buffers import alloc, poison
from harness.backends.pycuda.compile import ModuleCache
from harness.backends.pycuda.gate import TIMEOUT_NS, Gate
from harness.backends.pycuda.l2 import FlushAndHold
from harness.backends.pycuda.launcher import ModuleLauncher
from harness.contract.stage import Pipeline, Point, Stage, Variant, workspace
from harness.errors import HarnessError

#: How long the stream is held before each timed pipeline run (not inside any interval).
PIPELINE_HOLD_NS = 1_000_000


class GpuPipelineContext:
    """``harness.api.PipelineContext`` on two streams of one device: stream 0 is the one
    given (the runner's), stream 1 a new one."""

    def __init__(self, drv: Any, stream: Any, modules: ModuleCache,
                 stages: Mapping[str, Stage], sm_count: int, gate: Gate | None = None) -> None:
        self.drv = drv
        #: The gate of stream 0 (None: never gated).
        self.gate = gate
        #: Gates that opened by themselves (the host took longer than the gate waits).
        self.gates_timed_out = 0
        self._since_mark = [0, 0]  # steps enqueued on each stream since its last mark
        self._gating = False  # this run is gated after its first host read on stream 0
        self._read = False  # a host read on stream 0 has let the stream run dry
        self._passed: Any = None  # recorded just after the run's last gate (None: no gate yet)
        self._passed_event: Any = None  # that event, made once
        self._gated = False  # the gate is closed now
        self._closed = False  # a gate was closed in this run
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
        #: Poison scratch memory as it is handed out (the run whose outputs are checked)
        #: where :meth:`poison_ahead` did not poison it before the run.
        self.poison = False
        self._asked: list[tuple[int, np.dtype]] = []  # this run's scratch, size and type
        self._ready: deque[tuple[int, np.dtype, Any]] = deque()  # poisoned before the run
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
             early: bool = False, **values: Any) -> None:
        """Enqueue a stage through its plugin's ``enqueue`` at the point of ``values``
        (``early``: its first launch, where its kernel waits for the kernel before it, as
        that kernel's programmatic dependent)."""
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
        if early:
            launcher.follow()
        try:
            st.enqueue(launcher, bufs, point, v)
        finally:
            launcher.follow_none()
        self._since_mark[stream] += 1

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
        """Scratch memory from the pool: one :meth:`poison_ahead` poisoned where this run
        asks as the last one did, else poisoned now while :attr:`poison` is set."""
        dt = np.dtype(dtype)
        nbytes = max(1, int(np.prod(shape)) * dt.itemsize)
        self._asked.append((nbytes, dt))
        ready = next((i for i, r in enumerate(self._ready) if r[:2] == (nbytes, dt)), None)
        if ready is not None:  # the first of that size and type, whatever came before it
            buf = self._ready[ready][2]
            del self._ready[ready]
        else:
            buf = self._take(nbytes)
            if self.poison:  # synchronous: done before any stream touches the buffer
                poison(self.drv, buf, dt, nbytes)
        self._used.append((nbytes, buf))
        return buf

    def _take(self, nbytes: int) -> Any:
        """A free buffer of ``nbytes`` from the pool, or a new one."""
        pool = self._free.get(nbytes)
        return pool.pop() if pool else alloc(self.drv, nbytes)

    def poison_ahead(self) -> None:
        """Take from the pool, and poison now, the scratch the last run asked for (its
        sizes and types, in order), for the next run to be handed: a run that asks the same
        then holds no synchronous memset between its steps, so they follow each other as in
        a timed run (a step launched as its predecessor's dependent overlaps it there too,
        and is checked so)."""
        asked, self._asked = self._asked, []
        for nbytes, dt in asked:
            buf = self._take(nbytes)
            poison(self.drv, buf, dt, nbytes)
            self._ready.append((nbytes, dt, buf))

    def recycle(self) -> None:
        """Every buffer handed out, or poisoned ahead and not handed out, becomes free for
        the next run."""
        for nbytes, buf in self._used:
            self._free.setdefault(nbytes, []).append(buf)
        for nbytes, _, buf in self._ready:
            self._free.setdefault(nbytes, []).append(buf)
        self._used.clear()
        self._ready.clear()

    def free(self) -> None:
        """Release all scratch memory, and the modules loaded for dependent launches once
        the streams are done with them."""
        try:
            for s in self.streams:
                s.synchronize()
        finally:
            self._release()

    def _release(self) -> None:
        """Free the pooled and zeroed scratch and close the launchers."""
        self.recycle()
        for bufs in self._free.values():
            for b in bufs:
                b.free()
        self._free.clear()
        for b in self._zeros.values():
            b.free()
        self._zeros.clear()
        for launcher in self._launchers.values():
            launcher.close()

    def read(self, buf: Any, shape: tuple[int, ...], dtype: Any, stream: int) -> np.ndarray:
        """Copy a device buffer to the host on ``stream`` and wait for it."""
        # Page-locked and on this stream: a plain copy would go through the legacy default
        # stream and wait for the other stream too, serialising the two paths.
        key = (tuple(shape), np.dtype(dtype).str)
        host = self._pinned.get(key)
        if host is None:  # page-locking is slow (~1 ms): once per shape, not per run
            host = self._pinned[key] = self.drv.pagelocked_empty(shape, dtype)
        self.release()  # the read waits for what is enqueued: nothing may wait for the host
        self.drv.memcpy_dtoh_async(host, buf, self.streams[stream])
        self.streams[stream].synchronize()
        self._read = self._read or stream == 0
        return np.array(host)

    def mark(self, name: str, stream: int) -> None:
        """Record the event ``name`` on a stream. On stream 0, after the run's first host
        read, an interval's first mark (no step since the last mark) goes behind the gate,
        and the next mark after a step opens it (module docstring)."""
        ev = self.events.get(name)
        if ev is None:
            ev = self.events[name] = self.drv.Event()
        first = self._since_mark[stream] == 0
        if stream == 0 and first and self._gating and self._read and not self._gated:
            assert self.gate is not None
            if self._passed is not None:  # the last gate, opened already, must be passed
                self._passed.synchronize()  # before its flags are used again (no race)
            self._count_timeout()
            self.gate.close()
            if self._passed_event is None:
                self._passed_event = self.drv.Event()
            self._passed = self._passed_event
            self._passed.record(self.streams[0])
            self._gated = self._closed = True
        ev.record(self.streams[stream])
        if stream == 0 and not first:
            self.release()
        self._since_mark[stream] = 0

    def release(self) -> None:
        """Open the gate if it is closed (``run`` has enqueued what it held back)."""
        if self._gated:
            assert self.gate is not None
            self.gate.open()
            self._gated = False

    def _count_timeout(self) -> None:
        """Count the run's last gate if it opened by itself (read once it is done)."""
        if self._closed and self.gate is not None and self.gate.opened_by_itself():
            self.gates_timed_out += 1

    def run(self, pipe: Pipeline, bufs: Mapping[str, Any], point: Point,
            gated: bool = True) -> Any:
        """One run of ``pipe`` (``gated``: its intervals after a host read behind the gate,
        opened once ``run`` has enqueued everything), the streams synchronised; HarnessError
        where a gate opened by itself (its kernel intervals would hold host time)."""
        self._since_mark, self._read, self._passed = [0, 0], False, None
        self._asked = []
        self._gating = gated and self.gate is not None
        self._closed, self.gates_timed_out = False, 0
        try:
            trace = pipe.run(self, bufs, point)
        finally:
            self.release()
        for s in self.streams:
            s.synchronize()
        self._count_timeout()
        if self.gates_timed_out:
            raise HarnessError(f"{pipe.name}: a gate after the stream caught up with the host "
                               f"opened by itself (the host took more than "
                               f"{TIMEOUT_NS // 1_000_000} ms): its intervals would hold "
                               "host time")
        return trace

    def wait(self, name: str, stream: int) -> None:
        """Make a stream wait for the event ``name``."""
        self.streams[stream].wait_for_event(self.events[name])

    def elapsed_us(self, a: str, b: str) -> float:
        """Time from event ``a`` to event ``b``, in µs."""
        return self.events[a].time_till(self.events[b]) * 1000.0


def run_pipeline(drv: Any, stream: Any, modules: ModuleCache, prelude: FlushAndHold,
                 pipe: Pipeline, stages: Mapping[str, Stage], inputs: Mapping[str, np.ndarray],
                 point: Point, repeats: int, cold: bool, warmup: int = 1, *, sm_count: int,
                 gate: Gate | None = None,
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[float]]]:
    """Run a pipeline once with poisoned scratch memory and read its outputs back, then
    ``warmup`` + ``repeats`` more times, timing its named intervals with events (``gate``:
    stream 0's, for the intervals enqueued after the stream caught up with the host; a
    timed run in which one opened by itself is an error, its kernel intervals holding host
    time)."""
    ctx = GpuPipelineContext(drv, stream, modules, stages, sm_count, gate)
    dev_in = {k: alloc(drv, a.nbytes) for k, a in inputs.items()}
    try:
        for k, a in inputs.items():
            drv.memcpy_htod(dev_in[k], np.ascontiguousarray(a))
        # A first run compiles the modules, allocates the scratch and reads the constants
        # (synchronous, between its steps); the checked run then gets its scratch poisoned
        # before it starts and runs its steps back to back, as the timed runs do.
        ctx.run(pipe, dev_in, point, gated=False)
        ctx.recycle()
        ctx.poison_ahead()
        ctx.poison = True  # what the first run did not ask for, poisoned as handed out
        trace = ctx.run(pipe, dev_in, point, gated=False)
        ctx.poison = False
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
            tr = ctx.run(pipe, dev_in, point)
            if r >= warmup:
                for k, pairs in tr.intervals.items():
                    per_rep.setdefault(k, []).append(
                        sum(ctx.elapsed_us(a, b) for a, b in pairs))
        return outs, dict(trace.host), per_rep
    finally:
        ctx.free()
        for b in dev_in.values():
            b.free()
