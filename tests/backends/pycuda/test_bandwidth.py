"""The copy bandwidth on the fake driver: read + write bytes over the median, the source
filled, warm-up copies outside the samples, both buffers freed."""

from __future__ import annotations

import pytest

from harness.backends.pycuda.runner import GpuRunner
from harness.contract.timing import TimingConfig
from tests.backends.pycuda.fakes import EVENT_MS, FakeDriver


@pytest.mark.parametrize("warmup, copies_before_samples", [(0, 1), (3, 3)])
def test_copy_bandwidth_counts_read_and_write(drv: FakeDriver, runner: GpuRunner,
                                              warmup: int, copies_before_samples: int) -> None:
    nbytes = 1000
    cfg = TimingConfig(warmup=warmup, min_samples=20, max_samples=20, cold=False)
    t, gbps = runner.copy_bandwidth(nbytes, cfg)
    assert t.samples == 20 and t.median_us == pytest.approx(EVENT_MS * 1000)
    assert gbps == pytest.approx(2 * nbytes / (EVENT_MS * 1e-3) / 1e9)
    src, dst = drv.allocs[:2]
    assert drv.ops("memset_d8")[0] == ("memset_d8", int(src), 1, nbytes)
    copies = drv.ops("dtod")
    assert len(copies) == copies_before_samples + 20
    assert copies[0][1:4] == (int(dst), int(src), nbytes)
    first_record = drv.log.index(drv.ops("record")[0])
    assert sum(1 for e in drv.log[:first_record] if e[0] == "dtod") == copies_before_samples
    assert [a.nbytes for a in drv.live()] == [16]  # the runner's clock probe keeps its own


@pytest.mark.parametrize("warmup, fills_before_samples", [(0, 1), (2, 2)])
def test_write_bandwidth_counts_bytes_written(drv: FakeDriver, runner: GpuRunner,
                                              warmup: int, fills_before_samples: int) -> None:
    nbytes = 1002  # whole 32-bit words: 250 of them, 1000 bytes counted
    cfg = TimingConfig(warmup=warmup, min_samples=20, max_samples=20, cold=False)
    t, gbps = runner.write_bandwidth(nbytes, cfg)
    assert t.samples == 20
    assert gbps == pytest.approx(1000 / (EVENT_MS * 1e-3) / 1e9)
    fills = drv.ops("memset_d32_async")
    assert len(fills) == fills_before_samples + 20
    assert fills[0][1:4] == (int(drv.allocs[0]), 0x3F800000, 250)
    first_record = drv.log.index(drv.ops("record")[0])
    assert sum(1 for e in drv.log[:first_record]
               if e[0] == "memset_d32_async") == fills_before_samples
    assert [a.nbytes for a in drv.live()] == [16]  # freed; the clock probe keeps its own


def test_mix_bandwidth_counts_the_read_and_every_write(drv: FakeDriver,
                                                       runner: GpuRunner) -> None:
    """The mix reads whole 16-byte units and writes each ``writes`` times: both counted; the
    timing module's harness_mix1 launched a unit a thread over both buffers (every plane
    holds the source after it), warmed up outside the samples; both buffers freed."""
    from harness.backends.pycuda import bandwidth

    cfg = TimingConfig(warmup=2, min_samples=20, max_samples=20, cold=False)
    t, gbps = runner.mix_bandwidth(16 * 1000 + 7, 1, 6, cfg)
    assert t.samples == 20
    assert gbps == pytest.approx(16 * 1000 * 7 / (EVENT_MS * 1e-3) / 1e9)
    src, dst = drv.allocs[:2]
    assert (src.nbytes, dst.nbytes) == (16000, 96000)
    assert drv.ops("memset_d8")[0] == ("memset_d8", int(src), 1, 16000)
    launches = [e for e in drv.log if e[0] == "launch" and e[1] == "harness_mix1"]
    assert len(launches) == 2 + 20  # warm-up outside the samples, then one a sample
    _, _, grid, block, _, args = launches[0]
    assert block == (bandwidth.MIX_BLOCK, 1, 1) and grid == (4, 1, 1)
    assert args[:2] == (int(src), int(dst)) and (int(args[2]), int(args[3])) == (1000, 6)
    first_record = drv.log.index(drv.ops("record")[0])
    assert sum(1 for e in drv.log[:first_record] if e[:2] == ("launch", "harness_mix1")) == 2
    assert [a.nbytes for a in drv.live()] == [16]  # freed; the clock probe keeps its own


def test_a_mix_of_several_reads_counts_each_plane_and_writes_their_xor(
        drv: FakeDriver, runner: GpuRunner) -> None:
    """Four planes read to one written (activation_fused's pass 1): ``nbytes`` is every
    plane read, a unit a thread, so the grid covers one plane's units; both sides counted;
    the source filled whole."""
    cfg = TimingConfig(warmup=1, min_samples=20, max_samples=20, cold=False)
    _, gbps = runner.mix_bandwidth(4 * 16 * 1000, 4, 1, cfg)
    assert gbps == pytest.approx(16 * 1000 * 5 / (EVENT_MS * 1e-3) / 1e9)
    src, dst = drv.allocs[:2]
    assert (src.nbytes, dst.nbytes) == (64000, 16000)
    assert drv.ops("memset_d8")[0] == ("memset_d8", int(src), 1, 64000)
    launches = [e for e in drv.log if e[0] == "launch" and e[1] == "harness_mix4"]
    _, _, grid, _, _, args = launches[0]
    assert grid == (4, 1, 1) and (int(args[2]), int(args[3])) == (1000, 1)
    assert [a.nbytes for a in drv.live()] == [16]


def test_a_read_counts_the_bytes_read_and_keeps_a_plane_for_the_guarded_store(
        drv: FakeDriver, runner: GpuRunner) -> None:
    """No plane written: only the bytes read counted; the destination still one plane (the
    kernel's store on a value the source never holds)."""
    cfg = TimingConfig(warmup=1, min_samples=20, max_samples=20, cold=False)
    _, gbps = runner.mix_bandwidth(4 * 16 * 1000, 4, 0, cfg)
    assert gbps == pytest.approx(16 * 1000 * 4 / (EVENT_MS * 1e-3) / 1e9)
    src, dst = drv.allocs[:2]
    assert (src.nbytes, dst.nbytes) == (64000, 16000)
    assert [a.nbytes for a in drv.live()] == [16]


def test_the_fake_mix_writes_the_planes_xor(drv: FakeDriver) -> None:
    """The fake kernel the tests above launch does what timing.cu's does: the xor of a
    unit's planes, in every plane written."""
    import numpy as np

    from tests.backends.pycuda.fakes import mix_kernel

    src, dst = drv.mem_alloc(3 * 32), drv.mem_alloc(2 * 32)
    planes = np.arange(3 * 32, dtype=np.uint8).reshape(3, 32)
    drv.array_at(int(src), 96, np.uint8)[:] = planes.ravel()
    mix_kernel(3)(drv, (1, 1, 1), (2, 1, 1), int(src), int(dst), np.int64(2), np.int32(2))
    want = planes[0] ^ planes[1] ^ planes[2]
    assert (drv.array_at(int(dst), 64, np.uint8) == np.tile(want, 2)).all()


@pytest.mark.parametrize("kind", ["copy", "mix"])
def test_a_buffer_already_allocated_is_freed_when_the_next_is_refused(
        drv: FakeDriver, runner: GpuRunner, kind: str) -> None:
    """The source fits and the destination does not: the source is freed, the error stands."""
    before = [a.nbytes for a in drv.live()]
    left = drv.mem.size - drv._next
    nbytes = (left // 2 + 4096) // 16 * 16  # one fits, two do not
    cfg = TimingConfig(min_samples=1, max_samples=1, cold=False)
    with pytest.raises(drv.MemoryError):
        if kind == "copy":
            runner.copy_bandwidth(nbytes, cfg)
        else:
            runner.mix_bandwidth(nbytes, 1, 1, cfg)
    assert len(drv.allocs) == len(before) + 1  # the source was allocated, then freed
    assert [a.nbytes for a in drv.live()] == before


@pytest.mark.gpu
@pytest.mark.parametrize("reads, writes", [(1, 6), (2, 1), (3, 2), (4, 1), (4, 0), (7, 1), (8, 0)])
def test_the_mix_kernel_writes_the_xor_of_its_planes(gpu_runner, reads: int,  # type: ignore[no-untyped-def]
                                                     writes: int) -> None:
    """timing.cu's harness_mix<R> on the device: every plane written holds the xor of the
    planes read, unit by unit (a read left out of the xor, or a plane unwritten, fails);
    with none written (the read) the destination is left as it was."""
    import numpy as np

    from harness.backends.pycuda import bandwidth
    from harness.backends.pycuda.compile import compile_timing_kernels

    drv, units = gpu_runner.drv, 1000 + 3  # a partial last block
    kernel = compile_timing_kernels(gpu_runner.device.info.arch).get_function(
        f"harness_mix{reads}")
    planes = np.random.default_rng(reads).integers(0, 256, (reads, 16 * units), np.uint8)
    out = np.zeros((max(writes, 1), 16 * units), np.uint8)
    src, dst = drv.mem_alloc(planes.nbytes), drv.mem_alloc(out.nbytes)
    try:
        drv.memcpy_htod(src, planes)
        drv.memset_d8(dst, 0, out.nbytes)
        kernel.prepare("PPqi")
        kernel.prepared_call((-(-units // bandwidth.MIX_BLOCK), 1, 1),
                             (bandwidth.MIX_BLOCK, 1, 1), int(src), int(dst),
                             np.int64(units), np.int32(writes))
        drv.Context.synchronize()
        drv.memcpy_dtoh(out, dst)
    finally:
        src.free()
        dst.free()
    want = np.bitwise_xor.reduce(planes, axis=0)
    assert all((out[p] == want).all() for p in range(writes))
    assert writes or not out.any()
