"""The memory guard: a job's footprint from its declarations, free host memory (meminfo and
the cgroup limit), refusal on the host and on the device, and the factor learnt from a
job's measured peak."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.engine import memory


class Cpu:
    backend = "numpy"


class Gpu:
    backend = "pycuda"

    def __init__(self, free: int) -> None:
        self.free = free

    def free_device_bytes(self) -> int:
        return self.free


def test_footprint_counts_the_declared_inputs_outputs_and_workspace(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    p = st.point(batch=1 << 20, in_f=3584)
    fp = memory.footprint(st, p)
    n = (1 << 20) * 3584
    declared = 4 * n + (4 * n + 4 * (1 << 20))  # x float32; q int32 and vth float32
    assert fp.declared == declared and fp.device == declared
    assert fp.host == int(memory.HOST_FACTOR * declared)
    gemm = reg.get("int_gemm")
    q = gemm.point(gemm.variant("int8"), batch=16, out_f=3584, in_f=18944)
    assert memory.footprint(gemm, q).device > memory.footprint(gemm, q).declared  # split-K


def test_undeclared_inputs_are_counted_by_bytes_moved(reg) -> None:  # type: ignore[no-untyped-def]
    st = dataclasses.replace(reg.get("dynamic_spikes"), inputs=None)
    p = st.point(batch=8, in_f=16)
    outs = 4 * 8 * 16 + 4 * 8
    assert memory.footprint(st, p).declared == st.bytes_moved(p) + outs
    pipe = reg.pipelines["spike_quant_gemm"]
    q = pipe.point(batch=8)
    assert memory.footprint(pipe, q).declared == pipe.bytes_moved(q)


def test_huge_points_are_refused_on_the_host(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    monkeypatch.setattr(memory, "host_available", lambda: 1 << 30)
    guard = memory.MemoryGuard()
    assert guard.refusal(Cpu(), st, st.point(batch=1, in_f=3584)) is None
    why = guard.refusal(Cpu(), st, st.point(batch=1 << 40, in_f=3584))
    assert why is not None and why.startswith("out of memory (estimated before the inputs "
                                              "were built): needs about ")
    assert "GiB of host memory, 1.0 GiB available" in why


def test_the_device_is_weighed_where_the_backend_says_what_is_free(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    monkeypatch.setattr(memory, "host_available", lambda: None)  # the host says nothing
    p = st.point(batch=1 << 16, in_f=3584)
    need = memory.footprint(st, p).device
    guard = memory.MemoryGuard()
    assert guard.refusal(Gpu(2 * need), st, p) is None
    why = guard.refusal(Gpu(need), st, p)
    assert why is not None and "of device memory" in why
    broken = Gpu(0)
    broken.free_device_bytes = lambda: 1 / 0  # type: ignore[method-assign]
    assert guard.refusal(broken, st, p) is None  # a driver that cannot say: no refusal


class FakeMeter:
    """A peak meter that reports a fixed rise."""

    def __init__(self, peak: int) -> None:
        self.peak = peak

    @contextlib.contextmanager
    def span(self) -> Iterator[list[int]]:
        got: list[int] = []
        yield got
        got.append(self.peak)


def test_a_measured_peak_teaches_the_targets_factor(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("spike_decode_packed")
    big = st.point(st.variants[0], batch=4096, in_f=3584)
    declared = memory.footprint(st, big).declared
    assert declared >= memory.LEARN_BYTES
    guard = memory.MemoryGuard(meter=FakeMeter(33 * declared))  # type: ignore[arg-type]
    assert guard.factor("numpy", st.name) == memory.HOST_FACTOR
    with guard.watch("numpy", st, big):
        pass
    assert guard.factor("numpy", st.name) == pytest.approx(memory.LEARN_MARGIN * 33)
    assert guard.factor("pycuda", st.name) == memory.HOST_FACTOR  # per backend
    small = st.point(st.variants[0], batch=1, in_f=64)
    guard.meter = FakeMeter(10 << 20)  # type: ignore[assignment]
    with guard.watch("numpy", st, small):  # too small to tell: nothing learnt
        pass
    assert guard.factor("numpy", st.name) == pytest.approx(memory.LEARN_MARGIN * 33)


def test_the_real_meter_sees_an_allocation() -> None:
    meter = memory._PeakMeter()
    if not meter.works:
        pytest.skip("no /proc/self/clear_refs here")
    # The span's start is the resident size when it opens: memory another thread frees
    # inside the span (an earlier test's worker threads, the collector) lowers the base the
    # allocation adds to. One run in six failed with 64 MiB against a 48 MiB bar; 256 MiB
    # against 192 MiB leaves 64 MiB for such frees.
    gc.collect()
    with meter.span() as peak:
        a = np.ones(256 << 20, dtype=np.uint8)  # 256 MiB, touched
        del a
    assert peak and peak[0] >= 192 << 20


def test_free_memory_is_the_least_of_meminfo_and_the_cgroup(tmp_path: Path,
                                                           monkeypatch) -> None:  # type: ignore[no-untyped-def]
    proc, cg = tmp_path / "proc", tmp_path / "cg"
    proc.mkdir()
    (cg / "memory" / "job").mkdir(parents=True)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 100 kB\nMemAvailable:    4096 kB\n")
    (proc / "cgroup").write_text("4:memory:/job\n0::/\n")
    (cg / "memory" / "job" / "memory.limit_in_bytes").write_text("3145728\n")
    (cg / "memory" / "job" / "memory.usage_in_bytes").write_text("1048576\n")
    monkeypatch.setattr(memory, "_PROC", proc)
    monkeypatch.setattr(memory, "_MEMINFO", meminfo)
    monkeypatch.setattr(memory, "_CGROUP", cg)
    assert memory.host_available() == 2 << 20  # the cgroup's 3 MiB less 1 MiB used
    (cg / "memory" / "job" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert memory.host_available() == 4096 * 1024  # no limit: MemAvailable
    (proc / "cgroup").write_text("0::/job\n")
    (cg / "job").mkdir()
    (cg / "job" / "memory.max").write_text("2097152\n")
    (cg / "job" / "memory.current").write_text("1048576\n")
    assert memory.host_available() == 1 << 20  # cgroup v2
    (cg / "job" / "memory.max").write_text("max\n")
    assert memory.host_available() == 4096 * 1024
    monkeypatch.setattr(memory, "_MEMINFO", tmp_path / "none")
    (proc / "cgroup").unlink()
    assert memory.host_available() is None


def test_this_machine_says_what_is_free() -> None:
    if not Path("/proc/meminfo").exists():
        pytest.skip("no /proc/meminfo here")
    free = memory.host_available()
    assert free is not None and free > 0
