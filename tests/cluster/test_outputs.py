"""The driver's files: a folder per GPU model (the first model in --out itself, the others
beside it under their names; under statistics/, every model in its own), cluster columns
on stage rows only, each GPU's calibration record kept, every file locked while open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cluster.outputs import ClusterOutputs
from harness.engine.jobs import plan
from harness.results import files
from harness.results.rows import CLUSTER_COLUMNS, CsvWriter, read_rows


def _jobs(reg):  # type: ignore[no-untyped-def]
    return plan([reg.stages["dynamic_spikes"]], ["batch=1"])


def _row(job, gpu: str, uuid: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return {"stage": job.target.name, "backend": "pycuda", "variant": job.variant.name,
            "status": "ok", "median_us": 1.0, "gpu": gpu, "host": "n1", "gpu_uuid": uuid,
            "worker": "0"}


def test_models_get_folders_of_their_own(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = _jobs(reg)
    out = ClusterOutputs(jobs, tmp_path, per_model=False)
    assert out.folder("h200") == tmp_path  # --out with one model: the folder itself
    with pytest.raises(files.ResultFileError, match="another harness run"):
        files.RowFile(tmp_path / "dynamic_spikes.csv", ["x"])  # locked while open
    out.write("h200", jobs[0], _row(jobs[0], "NVIDIA H200", "GPU-a"))
    out.write("h100", jobs[0], _row(jobs[0], "NVIDIA H100", "GPU-b"))  # joined later
    assert out.written == 2  # both models' rows, what an interrupt would keep
    kept = out.calibration("h100", {"gpu_uuid": "GPU-b", "gbps": 3000.0})
    out.close()
    assert kept == tmp_path / "h100" / "calibration" / "GPU-b.json"
    assert json.loads(kept.read_text())["gbps"] == 3000.0
    a, b = read_rows(tmp_path / "dynamic_spikes.csv"), read_rows(tmp_path / "h100" /
                                                                  "dynamic_spikes.csv")
    assert [r["gpu_uuid"] for r in a] == ["GPU-a"] and [r["gpu_uuid"] for r in b] == ["GPU-b"]
    assert list(a[0]) == list(CLUSTER_COLUMNS)


def test_under_statistics_every_model_has_its_folder(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = _jobs(reg)
    out = ClusterOutputs(jobs, tmp_path, per_model=True)
    out.write("h200", jobs[0], _row(jobs[0], "NVIDIA H200", "GPU-a"))
    out.close()
    assert len(read_rows(tmp_path / "h200" / "dynamic_spikes.csv")) == 1
    assert not (tmp_path / "dynamic_spikes.csv").exists()


def test_existing_rows_are_refused_before_a_point(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = _jobs(reg)
    out = ClusterOutputs(jobs, tmp_path, per_model=True)
    out.write("h200", jobs[0], _row(jobs[0], "NVIDIA H200", "GPU-a"))
    out.close()
    with pytest.raises(files.ResultFileError, match="exists: --append adds to it"):
        ClusterOutputs(jobs, tmp_path, per_model=True).folder("h200")
    again = ClusterOutputs(jobs, tmp_path, per_model=True, existing=files.APPEND)
    again.write("h200", jobs[0], _row(jobs[0], "NVIDIA H200", "GPU-c"))
    again.close()
    assert len(read_rows(tmp_path / "h200" / "dynamic_spikes.csv")) == 2


def test_every_calibration_record_of_a_run_is_kept(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A GPU measured again in the same run (the worker that replaced a dead one), or two
    GPUs of a host without UUIDs: each record is kept, the first under its name, the later
    ones beside it; the next run's first record replaces the first, as harness calibrate
    replaces its own."""
    out = ClusterOutputs(_jobs(reg), tmp_path, per_model=False)
    kept = [out.calibration("h200", {"gpu_uuid": "GPU-a", "gbps": 4000.0}),
            out.calibration("h200", {"gpu_uuid": "GPU-a", "gbps": 3900.0}),
            out.calibration("h200", {"gpu_uuid": "GPU-a", "gbps": 3950.0}),
            out.calibration("h200", {"host": "n1", "gbps": 1.0}),
            out.calibration("h200", {"gpu_uuid": "", "host": "n1", "gbps": 2.0})]
    out.close()
    assert [p.name for p in kept] == ["GPU-a.json", "GPU-a.2.json", "GPU-a.3.json", "n1.json",
                                      "n1.2.json"]
    assert [json.loads(p.read_text())["gbps"] for p in kept] == [4000.0, 3900.0, 3950.0, 1.0,
                                                                  2.0]
    folder = kept[0].parent
    # A host named n1-2 (its first record is n1-2.json, never n1's second), and a file
    # of n1's name not numbered: neither is n1's, and both stay.
    assert out.calibration("h200", {"host": "n1-2", "gbps": 3.0}).name == "n1-2.json"
    (folder / "n1.x.json").write_text("{}")
    again = ClusterOutputs(_jobs(reg), tmp_path, per_model=False, existing=files.APPEND)
    assert again.calibration("h200", {"gpu_uuid": "GPU-a", "gbps": 4100.0}) == kept[0]
    assert again.calibration("h200", {"host": "n1", "gbps": 5.0}) == kept[3]
    again.close()
    assert json.loads(kept[0].read_text())["gbps"] == 4100.0
    assert json.loads((folder / "n1-2.json").read_text())["gbps"] == 3.0
    # The earlier run's later records went with its first; the others stay.
    assert sorted(p.name for p in folder.glob("*.json")) == ["GPU-a.json", "n1-2.json",
                                                             "n1.json", "n1.x.json"]


def test_an_interrupt_as_a_row_lands_still_counts_it(reg, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch) -> None:
    """Ctrl-C caught after the row is in its file but before the write returns: the
    driver's count is the files', so the message says as many rows as the file holds."""
    jobs = _jobs(reg)
    out = ClusterOutputs(jobs, tmp_path, per_model=False)
    real = CsvWriter.write

    def landed_then_interrupted(self, row):  # type: ignore[no-untyped-def]
        real(self, row)
        raise KeyboardInterrupt

    monkeypatch.setattr(CsvWriter, "write", landed_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        out.write("h200", jobs[0], _row(jobs[0], "NVIDIA H200", "GPU-a"))
    assert out.written == 1
    out.close()
    assert len(read_rows(tmp_path / "dynamic_spikes.csv")) == 1
