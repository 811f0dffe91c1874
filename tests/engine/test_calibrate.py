"""``harness calibrate``: the copy or the fill measured and its record stored, as the GPU's
peak (the copy of the default size) or beside it."""

from __future__ import annotations

from harness.contract.timing import Timing
from harness.engine import calibrate
from harness.results import calibration


class _Info:
    name, slug = "NVIDIA H200", "h200"

    def as_dict(self) -> dict:
        return {"name": self.name}


class FakeGpu:
    device = type("D", (), {"info": _Info()})()
    free = 140 << 30  # an H200's

    def free_device_bytes(self) -> int:
        return self.free

    def copy_bandwidth(self, nbytes, cfg):  # type: ignore[no-untyped-def]
        self.asked = (nbytes, cfg.budget_s)
        return Timing(1000.0, 990.0, 1010.0, 0.1, 200, True), 2 * nbytes / 1e-3 / 1e9

    def write_bandwidth(self, nbytes, cfg):  # type: ignore[no-untyped-def]
        self.wrote = (nbytes, cfg.budget_s)
        return Timing(500.0, 490.0, 510.0, 0.1, 300, True), nbytes / 5e-4 / 1e9

    def mix_bandwidth(self, nbytes, reads, writes, cfg):  # type: ignore[no-untyped-def]
        self.mixed = (nbytes, writes, cfg.budget_s, reads)
        moved = nbytes + nbytes // reads * writes
        return Timing(700.0, 690.0, 710.0, 0.1, 250, True), moved / 7e-4 / 1e9


def test_calibrate_measures_and_stores_the_record(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from harness import paths
    from harness.engine import devices

    gpu = FakeGpu()
    monkeypatch.setattr(devices, "open_gpu", lambda device: gpu)
    monkeypatch.setattr(paths, "statistics_dir", lambda: tmp_path)
    c = calibrate.calibrate(0)
    assert gpu.asked == (calibrate.COPY_BYTES, 3.0)
    assert c.is_peak and c.path == tmp_path / "h200" / "calibration.json"
    assert calibration.load("h200", tmp_path) == c.record
    r = c.record
    assert r["gpu"] == "NVIDIA H200" and r["bytes_each_way"] == calibrate.COPY_BYTES
    assert r["gbps"] == 2 * calibrate.COPY_BYTES / 1e-3 / 1e9 and r["samples"] == 200
    assert r["date"] and r["git_sha"] and r["method"].startswith("memcpy_dtod_async")
    assert r["kind"] == "copy"


def _gpu(monkeypatch, tmp_path) -> FakeGpu:  # type: ignore[no-untyped-def]
    from harness import paths
    from harness.engine import devices

    gpu = FakeGpu()
    monkeypatch.setattr(devices, "open_gpu", lambda device: gpu)
    monkeypatch.setattr(paths, "statistics_dir", lambda: tmp_path)
    return gpu


def test_only_the_default_copy_is_the_peak(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _gpu(monkeypatch, tmp_path)
    peak = calibrate.calibrate(0)
    assert peak.is_peak and peak.path == tmp_path / "h200" / "calibration.json"
    small = calibrate.calibrate(0, 1 << 20)
    assert small.path == tmp_path / "h200" / "calibration-copy-1048576.json"
    assert calibration.load("h200", tmp_path) == peak.record  # not replaced


def test_a_fill_counts_bytes_written_and_is_stored_beside(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gpu = _gpu(monkeypatch, tmp_path)
    c = calibrate.calibrate(0, calibrate.COPY_BYTES, "write")
    assert gpu.wrote == (calibrate.COPY_BYTES, 3.0) and not hasattr(gpu, "asked")
    assert not c.is_peak and c.path.name == f"calibration-write-{calibrate.COPY_BYTES}.json"
    r = c.record
    assert r["kind"] == "write" and r["bytes_written"] == calibrate.COPY_BYTES
    assert r["gbps"] == calibrate.COPY_BYTES / 5e-4 / 1e9 and r["method"].startswith("memset_d32")
    assert calibration.load("h200", tmp_path) is None  # no peak written


def test_an_unknown_kind_opens_no_gpu(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from harness.engine import devices
    from harness.errors import BadInput

    monkeypatch.setattr(devices, "open_gpu", lambda device: pytest.fail("opened the GPU"))
    with pytest.raises(BadInput, match="unknown --kind 'load'"):
        calibrate.calibrate(0, 1 << 20, "load")
    with pytest.raises(BadInput, match="--bytes 1048577: a fill writes 32-bit words"):
        calibrate.calibrate(0, (1 << 20) + 1, "write")


def test_the_mix_is_stored_beside_the_peak_with_its_writes(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gpu = _gpu(monkeypatch, tmp_path)
    c = calibrate.calibrate(0, 1 << 20, "mix")
    assert gpu.mixed == (1 << 20, calibrate.MIX_WRITES, 3.0, 1)
    assert not c.is_peak and c.path.name == f"calibration-mix6-{1 << 20}.json"
    r = c.record
    assert r["kind"] == "mix" and r["bytes_read"] == 1 << 20 and r["writes"] == 6
    assert r["reads"] == 1
    assert r["method"].startswith("harness_mix")
    c = calibrate.calibrate(0, 1 << 20, "mix", 2)
    assert gpu.mixed[1] == 2 and c.path.name == f"calibration-mix2-{1 << 20}.json"


def test_a_mix_of_several_reads_is_named_by_both(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Four planes read to one written (activation_fused's pass 1: a float in, a byte out):
    its own file, beside the one-read mixes, and the record says both."""
    gpu = _gpu(monkeypatch, tmp_path)
    c = calibrate.calibrate(0, 4 << 20, "mix", 1, 4)
    assert gpu.mixed == (4 << 20, 1, 3.0, 4)
    assert c.path.name == f"calibration-mix4to1-{4 << 20}.json"
    r = c.record
    assert (r["reads"], r["writes"], r["bytes_read"]) == (4, 1, 4 << 20)
    assert r["gbps"] == (5 << 20) / 7e-4 / 1e9


def test_a_read_writes_no_plane_and_counts_the_bytes_read(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The read is the mix's kernel with no plane written: four planes a thread by default,
    --reads to change it, --writes refused; its own file beside the peak."""
    import pytest

    from harness.errors import BadInput

    gpu = _gpu(monkeypatch, tmp_path)
    c = calibrate.calibrate(0, 64 << 20, "read")
    assert gpu.mixed == (64 << 20, 0, 3.0, calibrate.READ_PLANES)
    assert not c.is_peak and c.path.name == f"calibration-read-{64 << 20}.json"
    r = c.record
    assert (r["kind"], r["bytes_read"], r["reads"]) == ("read", 64 << 20, 4)
    assert "writes" not in r and r["gbps"] == (64 << 20) / 7e-4 / 1e9
    assert r["method"].startswith("harness_mix<reads> kernel, no plane written")
    c = calibrate.calibrate(0, 64 << 20, "read", None, 8)
    assert gpu.mixed[3] == 8 and c.path.name == f"calibration-read8-{64 << 20}.json"
    with pytest.raises(BadInput, match="--writes sets the mix's planes written: not for --kind "
                                       "read"):
        calibrate.calibrate(0, 64 << 20, "read", 1)
    with pytest.raises(BadInput, match=r"the read takes 4 plane\(s\) of 16-byte units, so a "
                                       r"multiple of 64"):
        calibrate.calibrate(0, (64 << 20) + 16, "read")
    gpu.free = (1 << 30) + calibrate.HEADROOM  # 0.8 GiB read, its guarded store's plane 0.2
    calibrate.calibrate(0, 4 * (1 << 30) // 5 // 64 * 64, "read")
    with pytest.raises(BadInput, match=r"--bytes 1073741824 --reads 4: the read needs "
                                       r"1\.25 GiB"):
        calibrate.calibrate(0, 1 << 30, "read")


def test_bad_mix_input_opens_no_gpu(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from harness.engine import devices
    from harness.errors import BadInput

    monkeypatch.setattr(devices, "open_gpu", lambda device: pytest.fail("opened the GPU"))
    with pytest.raises(BadInput, match="--writes sets the mix's planes written: not for --kind"):
        calibrate.calibrate(0, 1 << 20, "copy", 3)
    with pytest.raises(BadInput, match="--reads sets the planes read of the mix or the read: "
                                       "not for --kind write"):
        calibrate.calibrate(0, 1 << 20, "write", None, 2)
    with pytest.raises(BadInput, match=r"the mix takes 1 plane\(s\) of 16-byte units, so a "
                                       r"multiple of 16"):
        calibrate.calibrate(0, (1 << 20) + 4, "mix")
    with pytest.raises(BadInput, match=r"the mix takes 3 plane\(s\) of 16-byte units, so a "
                                       r"multiple of 48"):
        calibrate.calibrate(0, 1 << 20, "mix", 1, 3)
    for reads in (0, calibrate.MIX_MAX_READS + 1):
        with pytest.raises(BadInput, match=f"--reads {reads}: 1 to 8"):
            calibrate.calibrate(0, 48 << 20, "mix", 1, reads)
    with pytest.raises(BadInput, match="--writes 0: at least 1"):
        calibrate.calibrate(0, 1 << 20, "mix", 0)


def test_a_measurement_larger_than_the_free_memory_is_refused(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What the kind needs (the copy 2 N, the fill N, the mix N + N W / R) and the flush's
    headroom, against the device's free memory: refused in one line before a buffer is
    allocated, not an out-of-memory traceback mid-run."""
    import pytest

    from harness.errors import BadInput

    gpu = _gpu(monkeypatch, tmp_path)
    gpu.free = (7 << 30) + calibrate.HEADROOM  # the mix of 1 GiB at W = 6 just fits
    calibrate.calibrate(0, 1 << 30, "mix")
    with pytest.raises(BadInput, match=r"--bytes 1073741824 --writes 7: the mix needs 8\.00 GiB"):
        calibrate.calibrate(0, 1 << 30, "mix", 7)
    gpu.free = (2 << 30) + calibrate.HEADROOM  # 1.5 GiB read as four planes, one written
    calibrate.calibrate(0, 3 << 29, "mix", 1, 4)
    with pytest.raises(BadInput, match=r"--bytes 4294967296 --reads 4 --writes 2: the mix "
                                       r"needs 6\.00 GiB"):
        calibrate.calibrate(0, 4 << 30, "mix", 2, 4)
    assert not hasattr(gpu, "asked")
    gpu.free = 4 << 30
    with pytest.raises(BadInput, match=r"the copy needs 4\.00 GiB"):
        calibrate.calibrate(0, 2 << 30, "copy")
    assert not hasattr(gpu, "asked")
