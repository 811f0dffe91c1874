"""Running and timing stages on the GPU through PyCUDA (the ``pycuda`` backend).

Needs an open :class:`harness.device.Device`; never creates a context itself. Modules are
compiled once per (stage, variant, source hash) and cached, outside any timed region.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness import compiler, paths
from harness.device import Device
from harness.errors import HarnessError
from harness.plugin import Point, Stage, Variant
from harness.timing import Timing, TimingConfig, measure
from harness.validate import RunResult

#: Poison written over every output before a launch: a NaN for floats, a value outside any
#: valid range for int32, -91 for int8. An element the kernel does not write fails validation.
POISON32 = 0x7FA5A5A5
POISON8 = 0xA5
#: How long the delay kernel holds the stream before a hot sample (hides launch overhead).
HOT_DELAY_NS = 20_000

_SIG = {np.dtype(np.int32): "i", np.dtype(np.uint32): "I", np.dtype(np.int64): "q",
        np.dtype(np.uint64): "Q", np.dtype(np.float32): "f", np.dtype(np.float64): "d"}


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

    def all(self) -> dict[str, Any]:
        return {**self.inputs, **self.outputs}

    def free(self) -> None:
        for a in (*self.inputs.values(), *self.outputs.values()):
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
        self._delay: Any = None

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
        bufs = _Buffers({}, {}, stage.outputs(point))
        try:
            for name, arr in inputs.items():
                bufs.inputs[name] = self._alloc(arr.nbytes)
                self.drv.memcpy_htod(bufs.inputs[name], np.ascontiguousarray(arr))
            for name, (shape, dtype) in bufs.specs.items():
                bufs.outputs[name] = self._alloc(int(np.prod(shape)) * np.dtype(dtype).itemsize)
        except BaseException:
            bufs.free()
            raise
        return bufs

    def _poison(self, bufs: _Buffers) -> None:
        for name, (shape, dtype) in bufs.specs.items():
            n = int(np.prod(shape))
            size = np.dtype(dtype).itemsize
            if size == 4:
                self.drv.memset_d32_async(bufs.outputs[name], POISON32, n, self.stream)
            else:
                self.drv.memset_d8_async(bufs.outputs[name], POISON8, n * size, self.stream)

    def _download(self, bufs: _Buffers, inputs: Mapping[str, np.ndarray]) -> RunResult:
        outs = {}
        for name, (shape, dtype) in bufs.specs.items():
            outs[name] = np.empty(shape, dtype=dtype)
            self.drv.memcpy_dtoh(outs[name], bufs.outputs[name])
        after = {}
        for name, arr in inputs.items():
            after[name] = np.empty_like(arr)
            self.drv.memcpy_dtoh(after[name], bufs.inputs[name])
        return RunResult(outs, after)

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

    def _sampler(self, launch: Callable[[], None], cold: bool) -> Callable[[], float]:
        drv = self.drv
        start, end = drv.Event(), drv.Event()
        if cold and self._flush is None:
            # 4x the L2: a memset that size evicts whatever the last sample left there.
            self._flush_words = self.device.info.l2_bytes  # x4 bytes
            self._flush = self._alloc(4 * self._flush_words)
        if not cold and self._delay is None:
            from pycuda.compiler import SourceModule

            src = (paths.harness_cuda_dir() / "delay.cu").read_text()
            mod = SourceModule(src, no_extern_c=True, arch=self.device.info.arch)
            self._delay = (mod, mod.get_function("harness_delay"))
            self._delay[1].prepare("Q")

        def sample() -> float:
            # The flush (or delay) keeps the GPU busy while the host enqueues the events
            # and the launch, so host launch overhead is not inside the timed region.
            if cold:
                drv.memset_d32_async(self._flush, 0, self._flush_words, self.stream)
            else:
                self._delay[1].prepared_async_call((1, 1, 1), (1, 1, 1), self.stream,
                                                   np.uint64(HOT_DELAY_NS))
            start.record(self.stream)
            launch()
            end.record(self.stream)
            end.synchronize()
            return start.time_till(end) * 1000.0

        return sample

    def time(self, stage: Stage, variant: Variant, inputs: Mapping[str, np.ndarray],
             point: Point, cfg: TimingConfig) -> tuple[RunResult, Timing]:
        """Warm up, read the outputs back for checking, then sample with CUDA events."""
        launcher = self.launcher(stage, variant)
        bufs = self._buffers(stage, inputs, point)
        try:
            args = bufs.all()

            def launch() -> None:
                stage.launch(launcher, args, point, variant)

            self._poison(bufs)
            for _ in range(max(cfg.warmup, 1)):
                launch()
            self.stream.synchronize()
            result = self._download(bufs, inputs)
            timing = measure(self._sampler(launch, cfg.cold), cfg)
            return result, timing
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

    def is_oom(self, exc: BaseException) -> bool:
        """Whether an exception is the device running out of memory."""
        return isinstance(exc, self.drv.MemoryError) or "out of memory" in str(exc).lower()
