"""harness.engine.baseline: twins built from another revision's kernels, checked first."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness import paths
from harness.contract.kernel import parse_entry_params
from harness.engine import baseline
from harness.engine.jobs import plan
from harness.errors import BadInput

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")

PTX = """
.visible .entry act_one(
\t.param .u64 .ptr .align 1 act_one_param_0,
\t.param .u32 act_one_param_1,
\t.param .f32 act_one_param_2
)
.explicitcluster
{ ret; }
.visible .entry gemm(
\t.param .align 64 .b8 gemm_param_0[128],
\t.param .u64 gemm_param_1
)
{ ret; }
.visible .entry none()
{ ret; }
"""


def test_entry_params_are_the_types_in_order() -> None:
    got = parse_entry_params(PTX)
    assert got == {"act_one": (".u64 .ptr .align 1", ".u32", ".f32"),
                   "gemm": (".align 64 .b8[128]", ".u64"), "none": ()}


def copy_kernels(dest: Path) -> Path:
    """The built-in kernels/ tree copied under ``dest``."""
    shutil.copytree(paths.kernels_dir(), dest / "kernels")
    return dest / "kernels"


def test_a_folder_names_its_rows(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    snap = tmp_path / "before change"
    k = copy_kernels(snap).resolve()
    assert baseline.kernels_from(str(snap), tmp_path) == (k, "before-change")
    assert baseline.kernels_from(str(k), tmp_path) == (k, "before-change")
    # Given relative, the folder comes back absolute: PyCUDA compiles in a folder of its
    # own, where a relative include folder would leave the current headers to be found.
    monkeypatch.chdir(tmp_path)
    got, _ = baseline.kernels_from("before change", tmp_path)
    assert got.is_absolute() and got == k


def test_a_revision_is_exported_from_git(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (paths.project_root() / ".git").exists():
        pytest.skip("needs git and this project's checkout")
    head = subprocess.run(["git", "-C", str(paths.project_root()), "rev-parse", "--short",
                           "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    folder, label = baseline.kernels_from(head, paths.project_root())
    assert label == head and (folder / "activation_fused.cu").is_file()
    assert (folder / "common" / "threshold.cuh").is_file()
    # Named by the commit, however the revision was written, from anywhere in the checkout.
    assert baseline.kernels_from("HEAD~0", paths.project_root() / "tests")[1] == head


def test_neither_folder_nor_revision_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not a folder, nor a revision"):
        baseline.kernels_from("no-such-revision-anywhere", paths.project_root())
    with pytest.raises(BadInput, match="give a git revision or a folder"):
        baseline.kernels_from(" ", paths.project_root())


@needs_nvcc
def test_twins_follow_each_job_and_name_their_source(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    k = copy_kernels(tmp_path / "snap")
    st = reg.get("find_min_max")
    jobs = plan([st], ["batch=1,8"])
    out = baseline.with_twins(jobs, k, "snap")
    assert [(j.variant.name, j.point["batch"]) for j in out] == [
        ("default", 1), ("default@snap", 1), ("default", 8), ("default@snap", 8)]
    assert out[1].target.kernel_dir == k and out[0].target.kernel_dir != k
    assert out[1].target.name == st.name  # the same CSV, the same reference
    assert [j.twin_of for j in out] == ["", "default", "", "default"]
    # The twin's check uses its variant's reference, kept once for both.
    from harness.engine.measure import PointMemo

    memo = PointMemo()
    assert memo.reference_slot(out[1], None) is memo.reference_slot(out[0], None)
    # Its peers are measured once, beside the variant, not again beside the twin.
    from harness.engine import bench

    monkey_peer = object()
    assert bench._serving([monkey_peer], out[1]) == []  # type: ignore[list-item]


@needs_nvcc
def test_a_changed_launch_is_refused(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An earlier source whose entry point takes one more parameter than now is refused
    before anything runs: the current plugin would launch it with the wrong arguments."""
    k = copy_kernels(tmp_path / "snap")
    src = (k / "find_min_max.cu").read_text()
    changed = src.replace("find_min_max(", "find_min_max(int unused, ", 1)
    assert changed != src
    (k / "find_min_max.cu").write_text(changed)
    with pytest.raises(BadInput, match="find_min_max takes other parameters"):
        baseline.with_twins(plan([reg.get("find_min_max")], ["batch=1"]), k, "snap")


def test_a_missing_kernel_or_a_pipeline_is_refused(reg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "kernels").mkdir()
    with pytest.raises(BadInput, match=r"has no find_min_max\.cu"):
        baseline.with_twins(plan([reg.get("find_min_max")], ["batch=1"]),
                            tmp_path / "kernels", "x")
    with pytest.raises(BadInput, match="a pipeline's steps keep the current builds"):
        baseline.with_twins(plan([reg.pipelines["activation_path"]], ["batch=1"]),
                            tmp_path / "kernels", "x")


@pytest.mark.gpu
@needs_nvcc
def test_a_twin_runs_on_the_gpu_beside_its_variant(reg, gpu_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """On the GPU: find_min_max beside its twin built from a copy of the same kernels (an
    A/A): both rows checked ok and timed, the same kernel hash (the same sources), and the
    twin compiled from the copy (its module is another compile of the same text)."""
    from harness.contract.kernel import kernel_hash
    from harness.contract.timing import TimingConfig
    from harness.engine import bench
    from harness.engine.measure import BenchConfig
    from harness.results.provenance import RunMeta

    k = copy_kernels(tmp_path / "same")
    jobs = baseline.with_twins(plan([reg.get("find_min_max")], ["batch=1,1024"]), k, "same")
    cfg = BenchConfig(timing=TimingConfig(budget_s=0.05))
    rows = [m.row for m in bench.run(jobs, gpu_runner, cfg, RunMeta(gpu="gpu"),
                                     tmp_path / "out")]
    assert [r["variant"] for r in rows] == ["default", "default@same"] * 2
    assert all(r["status"] == "ok" and float(r["median_us"]) > 0 for r in rows), rows
    assert rows[0]["kernel_hash"] == rows[1]["kernel_hash"] == kernel_hash(
        jobs[1].target, jobs[1].variant)
