"""The driver calls PyCUDA lacks, on a stand-in libcuda: the module a query loads is
unloaded whatever happens, the parameter layout and the cluster occupancy are read back."""

from __future__ import annotations

import ctypes
import struct
from typing import Any

import pytest

from harness.backends.pycuda import cudriver
from harness.errors import HarnessError


class Lib:
    """libcuda's few entry points, recording load and unload."""

    def __init__(self, has_kernel: bool = True) -> None:
        self.calls: list[str] = []
        self.has_kernel = has_kernel

    def cuModuleLoadData(self, mod: Any, data: Any) -> int:
        self.calls.append("load")
        return 0

    def cuModuleGetFunction(self, fn: Any, mod: Any, name: bytes) -> int:
        return 0 if self.has_kernel else 500

    def cuModuleUnload(self, mod: Any) -> int:
        self.calls.append("unload")
        return 0

    def cuFuncGetParamInfo(self, fn: Any, i: Any, off: Any, size: Any) -> int:
        if i.value >= 2:
            return 1
        ctypes.cast(off, ctypes.POINTER(ctypes.c_size_t))[0] = 0x70 + 0x80 * i.value
        ctypes.cast(size, ctypes.POINTER(ctypes.c_size_t))[0] = 128
        return 0

    def cuFuncSetAttribute(self, fn: Any, attr: int, value: Any) -> int:
        return 0

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, n: Any, fn: Any, threads: Any,
                                                    shared: Any) -> int:
        ctypes.cast(n, ctypes.POINTER(ctypes.c_int))[0] = 2048 // threads.value
        return 0

    def cuOccupancyMaxActiveClusters(self, n: Any, fn: Any, cfg: Any) -> int:
        c = ctypes.cast(cfg, ctypes.POINTER(cudriver._LaunchConfig))[0]
        ctypes.cast(n, ctypes.POINTER(ctypes.c_int))[0] = 132 // c.gridDimX
        return 0


def test_queries_read_back_and_unload_their_module(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lib = Lib()
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    assert cudriver.param_layout(b"cubin", "k", 2) == [(0x70, 128), (0xF0, 128)]
    assert cudriver.max_active_clusters(b"cubin", "k", 4, 384, 200_000) == 33
    assert cudriver.max_active_blocks(b"cubin", "k", 512, 0) == 4
    assert lib.calls == ["load", "unload", "load", "unload", "load", "unload"]


def test_a_missing_kernel_is_one_line_and_its_module_unloaded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lib = Lib(has_kernel=False)
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    with pytest.raises(HarnessError, match="no kernel 'k' in its module"):
        cudriver.max_active_clusters(b"cubin", "k", 2, 384, 0)
    assert lib.calls == ["load", "unload"]


class CountingLib(Lib):
    """A driver with ``cuFuncGetParamCount``: records every index the layout asks about."""

    def __init__(self, count: int = 2) -> None:
        super().__init__()
        self.count = count
        self.asked: list[int] = []

    def cuFuncGetParamCount(self, fn: Any, n: Any) -> int:
        ctypes.cast(n, ctypes.POINTER(ctypes.c_size_t))[0] = self.count
        return 0

    def cuFuncGetParamInfo(self, fn: Any, i: Any, off: Any, size: Any) -> int:
        self.asked.append(i.value)
        return super().cuFuncGetParamInfo(fn, i, off, size)


def test_the_layout_asks_only_for_the_parameters_the_launch_gives(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A question past the last parameter is an API error compute-sanitizer's memcheck
    # reports, so none is asked.
    lib = CountingLib()
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    assert cudriver.param_layout(b"cubin", "k", 2) == [(0x70, 128), (0xF0, 128)]
    assert lib.asked == [0, 1]


def test_a_launch_with_the_wrong_count_is_one_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lib = CountingLib()
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    with pytest.raises(HarnessError, match="k takes 2 parameters, the launch gives 3"):
        cudriver.param_layout(b"cubin", "k", 3)
    assert lib.asked == []
    plain = Lib()  # no count from the driver: the refusal of index 2 says it
    monkeypatch.setattr(cudriver, "libcuda", lambda: plain)
    with pytest.raises(HarnessError, match="k has no parameter 2"):
        cudriver.param_layout(b"cubin", "k", 3)
    assert plain.calls == ["load", "unload"]


def test_without_the_driver_s_count_a_short_launch_is_not_seen(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The known gap: finding the end without the count means asking past it (memcheck's
    # API error), so a launch giving one of the two parameters gets a one-entry layout.
    lib = Lib()
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    assert cudriver.param_layout(b"cubin", "k", 1) == [(0x70, 128)]
    counted = CountingLib()
    monkeypatch.setattr(cudriver, "libcuda", lambda: counted)
    with pytest.raises(HarnessError, match="k takes 2 parameters, the launch gives 1"):
        cudriver.param_layout(b"cubin", "k", 1)


class LaunchingLib(Lib):
    """A driver that takes dependent launches: records each launch's configuration, its
    attribute (from its raw bytes) and its parameter block."""

    def __init__(self, result: int = 0) -> None:
        super().__init__()
        self.result = result
        self.launches: list[dict[str, Any]] = []
        self.shared: list[int] = []

    def cuFuncSetAttribute(self, fn: Any, attr: int, value: Any) -> int:
        self.shared.append(value.value)
        return 0

    def cuLaunchKernelEx(self, cfg: Any, fn: Any, params: Any, extra: Any) -> int:
        c = ctypes.cast(cfg, ctypes.POINTER(cudriver._LaunchConfig))[0]
        attr = ctypes.string_at(c.attrs, ctypes.sizeof(cudriver._LaunchAttribute))
        keys = [extra[0], extra[2], extra[4]]  # buffer pointer, buffer size, end (0: None)
        size = ctypes.cast(extra[3], ctypes.POINTER(ctypes.c_size_t))[0]
        self.launches.append({
            "grid": (c.gridDimX, c.gridDimY, c.gridDimZ),
            "block": (c.blockDimX, c.blockDimY, c.blockDimZ),
            "shared": c.sharedMemBytes, "stream": c.hStream, "attrs": c.numAttrs,
            "attr": struct.unpack_from("<i4xi", attr),  # id, its pad, the value's int
            "kernel_params": params, "keys": keys,
            "block_bytes": ctypes.string_at(extra[1], size)})
        return self.result


def test_a_dependent_launch_carries_the_programmatic_attribute_and_the_block(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lib = LaunchingLib()
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    fn = cudriver.DriverKernel(b"cubin", "k")
    block = bytes(range(200))
    fn.launch_dependent((66, 1, 1), (384, 1, 1), 200_000, 0xABC0, block)
    fn.launch_dependent((2,), (32,), 1000, 0xABC0, b"\x07" * 8)
    first, second = lib.launches
    assert first["grid"] == (66, 1, 1) and first["block"] == (384, 1, 1)
    assert first["shared"] == 200_000 and first["stream"] == 0xABC0
    # One attribute: CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (6), set to 1.
    assert first["attrs"] == 1 and first["attr"] == (6, 1)
    # The parameters as one block through ``extra`` (BUFFER_POINTER, BUFFER_SIZE, END).
    assert first["kernel_params"] is None and first["keys"] == [1, 2, None]
    assert first["block_bytes"] == block
    assert second["grid"] == (2, 1, 1) and second["block"] == (32, 1, 1)
    assert second["block_bytes"] == b"\x07" * 8
    assert lib.shared == [200_000]  # opted in once, for the largest shared memory asked
    fn.close()
    fn.close()
    assert lib.calls == ["load", "unload"]


def test_a_refused_dependent_launch_is_one_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lib = LaunchingLib(result=1)
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    fn = cudriver.DriverKernel(b"cubin", "k")
    with pytest.raises(HarnessError, match=r"k: the dependent launch failed .*CUresult 1"):
        fn.launch_dependent((1, 1, 1), (1, 1, 1), 0, 0, b"")
    missing = Lib(has_kernel=False)
    monkeypatch.setattr(cudriver, "libcuda", lambda: missing)
    with pytest.raises(HarnessError, match="no kernel 'k' in its module"):
        cudriver.DriverKernel(b"cubin", "k")
    assert missing.calls == ["load", "unload"]


class RealLibCounted:
    """The real libcuda, with each module load and each unload's result counted."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self.loads: list[int] = []
        self.unloads: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lib, name)

    def cuModuleLoadData(self, *args: Any) -> int:
        self.loads.append(self._lib.cuModuleLoadData(*args))
        return self.loads[-1]

    def cuModuleUnload(self, mod: Any) -> int:
        self.unloads.append(self._lib.cuModuleUnload(mod))
        return self.unloads[-1]


@pytest.mark.gpu
def test_the_real_driver_counts_what_a_persistent_grid_needs(reg, gpu_runner,  # type: ignore[no-untyped-def]
                                                             monkeypatch) -> None:
    """On the GPU, the queries the stand-ins above cannot answer. int_gemm's wgmma kernel
    sizes its persistent grid by the clusters the driver says run at once, and act_stats
    its grid by the blocks an SM holds: a count of 0 or 1 would shrink the grid and keep the
    outputs right, so only the time would show it. So the counts must cover the SMs at the
    kernel's own shared memory, and none may fit past an SM's (the opt-in refused in one
    line). Each query loads the module once more, and the driver unloads it (every
    cuModuleUnload returns success), refused or not."""
    gemm = reg.get("int_gemm")
    launch = gpu_runner.launcher(gemm, gemm.variant("int8"))
    cubin = gpu_runner.modules.cubin(gemm, gemm.variant("int8"))
    smem = int(launch.constant("int_gemm_wgmma_smem")[0])
    cfg = launch.constant("int_gemm_wgmma_config", 10)
    threads, cm, cn = (int(x) for x in cfg[[5, 4, 7]])
    sms = gpu_runner.device.info.sm_count
    lib = RealLibCounted(cudriver.libcuda())
    monkeypatch.setattr(cudriver, "libcuda", lambda: lib)
    clusters = cudriver.max_active_clusters(cubin, "int_gemm_wgmma", cm * cn, threads, smem)
    # One CTA an SM (its shared memory is most of an SM's): a cluster on nearly every group
    # of cm * cn SMs (the GPCs' sizes leave a few out).
    assert sms // (cm * cn) * 3 // 4 <= clusters <= sms // (cm * cn), (clusters, sms)
    # The stream kernel (no cluster) at the wgmma kernel's shared memory: one.
    stream_threads = int(launch.constant("int_gemm_stream_config", 5)[1])
    assert cudriver.max_active_blocks(cubin, "int_gemm_stream", stream_threads, smem) == 1
    assert cudriver.max_active_blocks(cubin, "int_gemm_stream", stream_threads, smem // 3) >= 2
    with pytest.raises(HarnessError, match="bytes of dynamic shared memory refused"):
        cudriver.max_active_blocks(cubin, "int_gemm_stream", stream_threads, 1 << 20)

    act = reg.get("activation_fused")
    variant = act.variant("operand_unidirectional")
    act_cubin = gpu_runner.modules.cubin(act, variant)
    for _ in range(20):
        assert cudriver.max_active_blocks(act_cubin, "act_stats", act.block_for(variant), 0) >= 1
    assert lib.loads == [0] * 24 and lib.unloads == [0] * 24, (lib.loads, lib.unloads)
