"""Running pipelines on the CPU for the engine's tests: a PipelineContext whose buffers are
NumPy arrays and whose steps are the stages' references, and a backend around it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from harness.backends.pycuda.buffers import poisoned


class HostContext:
    """PipelineContext whose buffers are NumPy arrays and whose steps are the references."""

    def __init__(self, stages: Mapping[str, Any]) -> None:
        self.stages = stages
        self.steps: list[tuple[str, str, int]] = []

    def launcher(self, stage: str, variant: str, stream: int) -> Any:
        raise AssertionError("pipelines launch through step()")

    def step(self, stage: str, variant: str, stream: int, bufs: Mapping[str, Any],
             **values: Any) -> None:
        st = self.stages[stage]
        v = st.variant(variant)
        names = {a.name for a in st.axes}
        p = st.point(v, **{k: val for k, val in values.items() if k in names})
        specs = st.outputs(p)
        ins = {k: a.copy() for k, a in bufs.items()
               if k not in specs or k in st.inplace.values()}
        for name, arr in st.expected(ins, p, v).items():
            if name not in bufs and name in st.optional_outputs:
                continue  # not asked for: the kernel gets null and writes none
            a = np.asarray(arr).astype(specs[name][1])
            if st.trim is not None and a.shape != tuple(specs[name][0]):
                bufs[name][: a.shape[0]] = a  # T planes of a larger buffer, as the kernel
            else:
                np.copyto(bufs[name], a.reshape(specs[name][0]))
        self.steps.append((stage, variant, stream))

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return poisoned(shape, dtype)

    def read(self, buf: np.ndarray, shape: tuple[int, ...], dtype: Any,
             stream: int) -> np.ndarray:
        return buf.copy()

    def mark(self, name: str, stream: int) -> None:
        pass

    def wait(self, name: str, stream: int) -> None:
        pass


def steady(i: int) -> float:
    """Interval times that never settle (1, 2, 3, ... µs): sampling runs to the budget."""
    return 1.0 + i


class HostRunner:
    """The pycuda backend's pipeline runs, on the host: outputs by the references, each
    interval's time per repetition by ``times(i)`` (i counts every repetition so far)."""

    backend = "pycuda"

    def __init__(self, times: Callable[[int], float] = steady,
                 corrupt: Callable[[dict[str, np.ndarray]], None] | None = None) -> None:
        self.times, self.corrupt = times, corrupt
        self.calls: list[tuple[int, int]] = []  # (repeats, warmup) of every run
        self.done = 0

    def pipeline(self, pipe, stages, inputs, point, repeats, cold, warmup=1, spacer_bytes=0):  # type: ignore[no-untyped-def]
        self.calls.append((repeats, warmup))
        tr = pipe.run(HostContext(stages), dict(inputs), point)
        outs = {k: buf.copy() for k, (buf, _, _) in tr.outputs.items()}
        if self.corrupt is not None:
            self.corrupt(outs)
        per = {k: [self.times(self.done + i) for i in range(repeats)] for k in tr.intervals}
        self.done += repeats
        return outs, tr.host, per

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, MemoryError)
