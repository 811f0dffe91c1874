"""``scripts/gpu-check.sh`` on the CPU: ``python3`` and ``tar`` are shims on PATH, so the
phases run their steps in order without a GPU. What is checked is the script's own
behaviour: every step in the summary with its exit status, a failure that cannot pass
unseen, and archives that stay whole when packing is cut short."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from harness import paths
from tests.bench.clock import EVENT_CLOCK

SCRIPT = paths.project_root() / "scripts" / "gpu-check.sh"

#: ``python3`` for the script: ``-m harness where`` prints $FAKE_STATS (or fails with
#: $FAKE_WHERE_FAIL), ``harness validate`` fails for the variant $FAKE_VALIDATE_FAIL,
#: replay copies the baseline's CSVs as its fresh rows, ``harness compare`` fails with
#: $FAKE_COMPARE_FAIL, other ``-m`` modules are logged and succeed, the registry listing
#: (``python3 -``) fails with $FAKE_FOUND_FAIL, anything else is the real interpreter.
PYTHON3 = """#!/usr/bin/env bash
if [ "$1" = "-m" ]; then
  echo "$*" >> "$FAKE_LOG"
  if [ "$2 $3" = "harness where" ]; then
    [ -z "${FAKE_WHERE_FAIL:-}" ] || { echo "error: no GPU" >&2; exit 3; }
    echo "$FAKE_STATS"
  fi
  if [ "$2 $3" = "harness bench" ]; then  # a bench leaves its stage's CSV in --out
    args=("$@")
    for i in "${!args[@]}"; do
      if [ "${args[$i]}" = "--out" ]; then
        mkdir -p "${args[$((i + 1))]}" && echo rows > "${args[$((i + 1))]}/$4.csv"
      fi
    done
    case " $* " in
      *" --no-verify "*) ;;
      *) [ -z "${FAKE_CHECK_FAIL:-}" ] || exit 1 ;;  # a checked bench with a wrong build
    esac
  fi
  if [ "$2 $3" = "harness validate" ] && [ "${7:-}" = "${FAKE_VALIDATE_FAIL:-none}" ]; then
    echo "validation failed" >&2; exit 1  # this variant's cases fail
  fi
  if [ "$2" = "harness.tools.replay" ]; then  # measured again: the same rows, in FRESH
    mkdir -p "$4" && cp "$3"/*.csv "$4"/
  fi
  if [ "$2 $3" = "harness compare" ] && [ -n "${FAKE_COMPARE_FAIL:-}" ]; then
    exit 1  # a slower row
  fi
  exit 0
fi
if [ "$1" = "-" ] && [ -n "${FAKE_FOUND_FAIL:-}" ]; then
  echo "ImportError: broken" >&2; exit 1
fi
exec "$REAL_PYTHON" "$@"
"""

#: ``tar`` for the script: the real one, except that the call numbered $FAKE_TAR_CUT writes
#: half an archive and dies, as a run killed while packing does.
TAR = """#!/usr/bin/env bash
n=$(( $(cat "$FAKE_TAR_COUNT" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$FAKE_TAR_COUNT"
if [ "$n" = "${FAKE_TAR_CUT:-0}" ]; then
  echo "half an archive" > "$2"; exit 137
fi
exec "$REAL_TAR" "$@"
"""

#: ``compute-sanitizer`` for the script: logged, and succeeds.
SANITIZER = """#!/usr/bin/env bash
echo "compute-sanitizer $*" >> "$FAKE_LOG"
"""

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("tar") is None,
                                reason="needs bash and tar")


def _run(tmp_path: Path, *phases: str, **env: str) -> tuple[int, str, Path]:
    """Run the script with the shims; its exit status, summary and $OUT."""
    bin_dir, out, stats = tmp_path / "bin", tmp_path / "out", tmp_path / "stats" / "h200"
    bin_dir.mkdir(exist_ok=True)
    stats.mkdir(parents=True, exist_ok=True)
    for name, text in (("python3", PYTHON3), ("tar", TAR), ("compute-sanitizer", SANITIZER)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    full = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out),
            "REAL_PYTHON": sys.executable, "REAL_TAR": str(shutil.which("tar")),
            "FAKE_STATS": str(stats), "FAKE_LOG": str(tmp_path / "calls.log"),
            "FAKE_TAR_COUNT": str(tmp_path / "tar.count"),
            # No stamp unless a test writes one (the checkout's own is not the test's).
            "HARNESS_SENT": str(tmp_path / "no-stamp"), **env}
    proc = subprocess.run(["bash", str(SCRIPT), *phases], env=full, capture_output=True,
                          text=True, timeout=120, check=False)
    summary = (out / "summary.txt").read_text() if (out / "summary.txt").exists() else ""
    return proc.returncode, summary, out


def _whole(archive: Path) -> list[str]:
    with tarfile.open(archive) as t:
        return t.getnames()


def test_every_step_is_summarised_and_packed(tmp_path: Path) -> None:
    rc, summary, out = _run(tmp_path, "validate", "sweep", "profile")
    assert rc == 0, summary
    for step in ("validate ", "calibrate ", "sweep-stages ", "sweep-pipelines ",
                 "profile-dynamic_spikes-default "):
        assert any(line.startswith(step) and " exit 0 " in line
                   for line in summary.splitlines()), (step, summary)
    assert "statistics" in _whole(out / "results.tgz")
    assert any(n.endswith("-validate.log") for n in _whole(out / "logs.tgz"))
    assert sorted(p.name for p in out.iterdir()) == ["logs.tgz", "results.tgz", "summary.txt"]


@pytest.mark.parametrize(("phase", "step"), [("profile", "profile"),
                                             ("sweep", "sweep-pipelines")])
def test_a_failing_listing_fails_the_phase(tmp_path: Path, phase: str, step: str) -> None:
    """The registry listing feeds a loop; its failure must not read as nothing to do."""
    rc, summary, _ = _run(tmp_path, phase, FAKE_FOUND_FAIL="1")
    assert rc == 1
    assert any(line.startswith(step) and "not run: the harness could not list" in line
               for line in summary.splitlines()), summary


def test_the_environment_log_names_the_peers_packages(tmp_path: Path) -> None:
    """env.log records the packages a peer's row depends on (torch.compile's code is its
    torch's and Triton's), which no row records."""
    from importlib import metadata

    rc, summary, out = _run(tmp_path, "validate")
    assert rc == 0, summary
    with tarfile.open(out / "logs.tgz") as t:
        name = next(n for n in t.getnames() if n.endswith("env.log"))
        text = t.extractfile(name).read().decode()  # type: ignore[union-attr]
    assert f"numpy=={metadata.version('numpy')}" in text.splitlines()


def test_no_gpu_folder_is_one_line_and_exit_1(tmp_path: Path) -> None:
    rc, summary, _ = _run(tmp_path, "validate", FAKE_WHERE_FAIL="1")
    assert rc == 1 and "`harness where` failed" in summary
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert [c for c in calls if "-m harness" in c] == ["-m harness where"]  # nothing ran


def test_packing_cut_short_keeps_the_last_archive_whole(tmp_path: Path) -> None:
    """The 3rd tar call (the closing pack's results.tgz, after the one step's) dies half-way:
    the archive in $OUT is still the step's, whole."""
    _, summary, out = _run(tmp_path, "validate", FAKE_TAR_CUT="3")
    assert (tmp_path / "tar.count").read_text().strip() == "4"
    assert "statistics" in _whole(out / "results.tgz")
    assert "validate" in summary


def _benches(tmp_path: Path) -> list[str]:
    return [c for c in (tmp_path / "calls.log").read_text().splitlines()
            if c.startswith("-m harness bench")]


def test_peers_stops_each_stage_at_its_own_largest_sweep(tmp_path: Path) -> None:
    """PEER_SWEEP's batches past a stage's default sweep are left out for it: int_gemm
    (to 8192) and gemm (to 4096) are timed beside their peers at batch 1 and 1024, the
    activation stages at all four; a weight stage takes out_f alone."""
    rc, summary, _ = _run(tmp_path, "peers")
    assert rc == 0, summary
    runs = _benches(tmp_path)
    gemms = next(c for c in runs if " int_gemm " in c)
    assert " gemm " in gemms and "--sweep batch=1,1024 --sweep out_f=3584,18944" in gemms
    spikes = next(c for c in runs if " dynamic_spikes " in c)
    assert "--sweep batch=1,1024,16384,65536" in spikes and "out_f" not in spikes
    weights = next(c for c in runs if " weight_quantize " in c)
    assert "--sweep out_f=3584,18944" in weights and "batch" not in weights
    assert all("--peers all" in c and "--overwrite" in c for c in runs[:3])
    assert "--graph" in runs[-1] and "--append" in runs[-1]  # the graph replays, then
    assert [ln.split()[0] for ln in summary.splitlines()] == [
        "calibrate", "peers-1", "peers-2", "peers-3", "peers-graph"]
    # Every stage in one of the groups, none twice.
    named = [w for c in runs[:3] for w in c.split()[3:c.split().index("--peers")]]
    assert len(named) == len(set(named)) >= 13


def test_peers_past_every_stage_are_said_and_a_bad_spec_fails_the_phase(tmp_path: Path) -> None:
    rc, summary, _ = _run(tmp_path, "peers", PEER_SWEEP="batch=131072")
    assert rc == 0, summary
    assert "peers-int_gemm" in summary and "left out: its default sweep of batch ends at " \
        "8192, below 131072" in summary
    rc, summary, _ = _run(tmp_path, "peers", PEER_SWEEP="batch=x")
    assert rc == 1 and "peers" in summary and "not run: the harness could not plan" in summary


def test_ab_checks_each_build_then_times_each_point_and_reads_them(tmp_path: Path) -> None:
    """The A/B phase: one checked bench of every build, then one timed bench a point (the
    check off, the repeats rotated, the first into a new CSV, the rest appended), then
    `harness best` on the CSV they wrote."""
    stats = tmp_path / "stats" / "h200"
    rc, summary, _ = _run(tmp_path, "ab", AB_STAGE="int_gemm", AB_VARIANT="int8",
                          AB_DEFINES="IG_A=0,1 IG_B=0,2", AB_CHECK="batch=1000 in_f=256",
                          AB_POINTS="batch=8192 out_f=18944;batch=8192 out_f=3584 in_f=18944",
                          AB_DIR="overlap")
    assert rc == 0, summary
    assert [ln.split()[0] for ln in summary.splitlines()] == ["ab-check", "ab-1", "ab-2",
                                                              "ab-best"]
    check, first, second = _benches(tmp_path)
    for c in (check, first, second):
        assert "bench int_gemm --variant int8 --define IG_A=0,1 --define IG_B=0,2" in c
    assert "--sweep batch=1000 --sweep in_f=256" in check and "--no-verify" not in check
    assert str(stats / "tuning") not in check  # the check's rows go to the logs
    for c, mode, sweep in ((first, "--overwrite", "--sweep batch=8192 --sweep out_f=18944"),
                           (second, "--append",
                            "--sweep batch=8192 --sweep out_f=3584 --sweep in_f=18944")):
        assert "--no-verify --repeats 3" in c and mode in c and sweep in c
        assert f"--out {stats / 'tuning' / 'overlap'}" in c
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[-1] == f"-m harness best {stats / 'tuning' / 'overlap' / 'int_gemm.csv'}"


def test_ab_flags_go_to_the_timed_points_only(tmp_path: Path) -> None:
    """AB_FLAGS (say --graph) reach every timed bench; the check runs as it always does."""
    rc, summary, _ = _run(tmp_path, "ab", AB_STAGE="activation_fused", AB_DEFINES="X=0,2",
                          AB_CHECK="batch=1", AB_POINTS="batch=1;batch=65536",
                          AB_FLAGS="--graph", AB_DIR="one")
    assert rc == 0, summary
    check, first, second = _benches(tmp_path)
    assert "--graph" not in check
    assert "--graph --sweep batch=1" in first and "--graph --sweep batch=65536" in second


def test_ab_against_another_revision_checks_and_times_both_builds(tmp_path: Path) -> None:
    """AB_AGAINST (a folder of another revision's kernels) reaches the check and every timed
    bench as --against, with or without defines; neither set is refused."""
    rc, summary, _ = _run(tmp_path, "ab", AB_STAGE="dynamic_spikes", AB_AGAINST="snap/k",
                          AB_CHECK="batch=1", AB_POINTS="batch=1;batch=16384", AB_DIR="aa")
    assert rc == 0, summary
    for c in _benches(tmp_path):
        assert "bench dynamic_spikes --variant all --against snap/k" in c and "--define" not in c
    rc, summary, _ = _run(tmp_path, "ab", AB_STAGE="dynamic_spikes", AB_CHECK="batch=1",
                          AB_POINTS="batch=1", AB_DIR="aa")
    assert rc == 1 and "AB_DEFINES or AB_AGAINST" in summary


def test_ab_appends_where_the_csv_is_there_and_fails_unset(tmp_path: Path) -> None:
    folder = tmp_path / "stats" / "h200" / "tuning" / "overlap"
    folder.mkdir(parents=True)
    (folder / "int_gemm.csv").write_text("rows\n")
    rc, summary, _ = _run(tmp_path, "ab", AB_STAGE="int_gemm", AB_DEFINES="IG_A=0,1",
                          AB_CHECK="batch=3", AB_POINTS="batch=8192", AB_DIR="overlap")
    assert rc == 0, summary
    _, timed = _benches(tmp_path)
    assert "--append" in timed and "--variant all" in timed
    for unset in ("AB_CHECK", "AB_POINTS"):
        env = {"AB_STAGE": "int_gemm", "AB_DEFINES": "IG_A=0,1", "AB_CHECK": "batch=3",
               "AB_POINTS": "batch=8192", "AB_DIR": "overlap"}
        del env[unset]
        rc, summary, _ = _run(tmp_path, "ab", **env)
        assert rc == 1 and ("not run: AB_STAGE, AB_DEFINES or AB_AGAINST, AB_CHECK, "
                            "AB_POINTS and AB_DIR must be set") in summary


def test_ab_times_nothing_when_a_build_fails_its_check(tmp_path: Path) -> None:
    rc, summary, _ = _run(tmp_path, "ab", AB_STAGE="int_gemm", AB_DEFINES="IG_A=0,1",
                          AB_CHECK="batch=3", AB_POINTS="batch=8192;batch=1024",
                          AB_DIR="overlap", FAKE_CHECK_FAIL="1")
    assert rc == 1
    assert [ln.split()[0] for ln in summary.splitlines()] == ["ab-check", "ab-points"]
    assert "not run: a build failed its check (above)" in summary
    assert len(_benches(tmp_path)) == 1  # the check alone


def test_stages_narrow_validate_and_sanitize(tmp_path: Path) -> None:
    rc, summary, _ = _run(tmp_path, "validate", "sanitize", STAGES="int_gemm spike_linear")
    # spike_linear is a pipeline: validate takes it; sanitize says so, sanitizes the stages
    # named, and runs memcheck over spike_linear's exact path as the whole phase does
    assert rc == 0, summary
    calls = [c for c in (tmp_path / "calls.log").read_text().splitlines()
             if c.startswith(("-m harness", "compute-sanitizer")) and "where" not in c]
    # a process a variant, side by side (in any order)
    validations = sorted(c for c in calls if c.startswith("-m harness validate"))
    assert validations == [f"-m harness validate --record {n} --variant {v}" for n, v in (
        ("int_gemm", "int8"), ("int_gemm", "wide"), ("spike_linear", "any"),
        ("spike_linear", "default"), ("spike_linear", "operand"),
        ("spike_linear", "operand_adjacent"), ("spike_linear", "operand_early"),
        ("spike_linear", "packed"))]
    calls = [c for c in calls if not c.startswith("-m harness validate")]
    assert calls == ["-m harness sanitize --append int_gemm",
                     "compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m harness "
                     "validate spike_linear --variant any --seeds 1 --family normal --family "
                     "edge --family llm"]
    assert "sanitize-spike_linear" in summary and "a pipeline" in summary


def test_a_failed_validation_fails_the_phase_and_the_others_still_run(tmp_path: Path) -> None:
    """Side by side, one variant's failed validation fails the step (and the run), each
    variant is said in the log with its exit status, and every other variant still ran."""
    rc, summary, out = _run(tmp_path, "validate", STAGES="dynamic_spikes spike_linear",
                            FAKE_VALIDATE_FAIL="away", VALIDATE_JOBS="2")
    assert rc == 1 and any(line.startswith("validate ") and " exit 123 " in line
                           for line in summary.splitlines()), summary
    calls = [c for c in (tmp_path / "calls.log").read_text().splitlines()
             if c.startswith("-m harness validate")]
    assert len(calls) == 8  # dynamic_spikes' two variants, spike_linear's six
    with tarfile.open(out / "logs.tgz") as t:
        names = t.getnames()
        step = next(n for n in names if n.endswith("-validate.log"))
        text = t.extractfile(step).read().decode()  # type: ignore[union-attr]
        assert "dynamic_spikes [away]: exit 1" in text and "spike_linear [any]: exit 0" in text
        fail = next(n for n in names if n.endswith("validate/dynamic_spikes-away.log"))
        assert "validation failed" in t.extractfile(fail).read().decode()  # type: ignore[union-attr]


def test_an_unknown_name_in_stages_fails_validate(tmp_path: Path) -> None:
    rc, summary, _ = _run(tmp_path, "validate", STAGES="int_gem")
    assert rc == 1 and "validate" in summary and "could not list" in summary
    assert not [c for c in (tmp_path / "calls.log").read_text().splitlines()
                if c.startswith("-m harness validate")]


def test_a_name_in_stages_that_is_nothing_fails_sanitize(tmp_path: Path) -> None:
    rc, summary, _ = _run(tmp_path, "sanitize", STAGES="int_gem")
    assert rc == 1 and "sanitize-int_gem" in summary and "no stage or pipeline" in summary
    assert not [c for c in (tmp_path / "calls.log").read_text().splitlines()
                if c.startswith("-m harness sanitize")]


def _machine() -> str:
    import platform as p

    return "-".join((p.system(), p.python_implementation(),
                     ".".join(p.python_version_tuple()[:2]), p.architecture()[0]))


def _baseline(tmp_path: Path, names: list[str], timer: str = EVENT_CLOCK) -> None:
    """A saved pytest-benchmark run holding these stages' benchmarks, timed by ``timer``."""
    import json

    folder = tmp_path / "stats" / "h200" / "pytest-benchmark" / _machine()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0001_run.json").write_text(json.dumps(
        {"benchmarks": [{"name": f"test_stage[{n}]", "options": {"timer": timer}}
                        for n in names]}))


def test_regress_compares_the_committed_rows_first_and_fails_on_a_slower_one(
        tmp_path: Path) -> None:
    """`harness compare OLD NEW`: the rows as committed first, the fresh ones second (the
    other way round a slowdown reads as a speed-up); a slower row fails the phase."""
    from harness.contract.registry import discover

    (tmp_path / "stats" / "h200").mkdir(parents=True)
    (tmp_path / "stats" / "h200" / "find_min_max.csv").write_text("rows\n")
    _baseline(tmp_path, sorted(discover(entry_points=False).stages))
    rc, summary, _ = _run(tmp_path, "regress")
    assert rc == 0, summary
    calls = (tmp_path / "calls.log").read_text().splitlines()
    compare = [c.split() for c in calls if c.startswith("-m harness compare")]
    assert len(compare) == 1
    old, new = compare[0][3:5]
    assert old.endswith("/baseline/find_min_max.csv") and new.endswith(
        "/regress/find_min_max.csv")
    bench = [c for c in calls if c.startswith("-m pytest")]
    assert len(bench) == 1 and "--benchmark-compare-fail=median:10%" in bench[0]
    assert "--benchmark-compare" in bench[0].split() and "--benchmark-save" not in bench[0]
    rc, summary, _ = _run(tmp_path, "regress", FAKE_COMPARE_FAIL="1")
    assert rc == 1
    assert any(line.startswith("regress-find_min_max ") and " exit 1 " in line
               for line in summary.splitlines()), summary


def test_regress_without_a_full_benchmark_baseline_fails_and_says_so(tmp_path: Path) -> None:
    """pytest-benchmark passes where it has nothing to compare: no baseline, or a stage
    the newest baseline lacks, is a step not run (the phase fails), with how to save one."""
    (tmp_path / "stats" / "h200").mkdir(parents=True)
    rc, summary, _ = _run(tmp_path, "regress")
    assert rc == 1 and "regress-benchmarks" in summary and "not run: no pytest-benchmark " \
        "baseline" in summary
    _baseline(tmp_path, ["find_min_max"])
    rc, summary, _ = _run(tmp_path, "regress")
    assert rc == 1
    line = next(x for x in summary.splitlines() if x.startswith("regress-benchmarks-names"))
    assert "not run: no entry in 0001_run.json for: " in line and " int_gemm " in line
    assert "find_min_max" not in line and "REGRESS_SAVE=1" in line
    rc, summary, _ = _run(tmp_path, "regress", REGRESS_SAVE="1", HARNESS_GIT_SHA="abc1234")
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert "--benchmark-save=abc1234" in [c for c in calls if c.startswith("-m pytest")][-1]


def test_regress_compares_no_benchmark_against_a_baseline_of_another_clock(
        tmp_path: Path) -> None:
    """A baseline timed by the host's clock (launch and synchronisation inside) against
    rounds timed by the CUDA events: no comparison is made, the phase fails and says why,
    and REGRESS_SAVE=1 saves this run's as the next baseline."""
    from harness.contract.registry import discover

    (tmp_path / "stats" / "h200").mkdir(parents=True)
    _baseline(tmp_path, sorted(discover(entry_points=False).stages), timer="perf_counter")
    rc, summary, _ = _run(tmp_path, "regress")
    assert rc == 1
    line = next(x for x in summary.splitlines() if x.startswith("regress-benchmarks "))
    assert "not run: 0001_run.json was timed by perf_counter, not by cuda_event_clock" in line
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert not [c for c in calls if c.startswith("-m pytest")]
    # Asked to save: the remedy is the step, and the phase passes with a note.
    rc, summary, _ = _run(tmp_path, "regress", REGRESS_SAVE="1", HARNESS_GIT_SHA="abc1234")
    assert rc == 0, summary
    assert "timed by perf_counter, not by cuda_event_clock: no baseline for these rounds; " \
        "this run's saved as the next" in summary
    bench = [c for c in (tmp_path / "calls.log").read_text().splitlines()
             if c.startswith("-m pytest")]
    assert len(bench) == 1 and "--benchmark-save=abc1234" in bench[0]
    assert "--benchmark-compare" not in bench[0].split()


def test_ceilings_calibrate_each_pass_at_its_own_bytes(tmp_path: Path) -> None:
    """The copy first, then pass 2's mix (q8 read, six planes), pass 1's (x read as four
    planes, q8 written) at batch x 3584 values, and a read of each shape's int8 weights and
    fp32 group scales in whole 64-byte units; a shape that is not NxK, or whose operand is
    under 1 MiB, is a failed step, said, and the rest run."""
    rc, summary, _ = _run(tmp_path, "ceilings", CEILING_BATCH="2",
                          CEILING_WEIGHTS="18944x3584 1001x3584 7x130 wide 3584x 09x3584")
    calls = [c for c in (tmp_path / "calls.log").read_text().splitlines()
             if "calibrate" in c]
    assert calls == [
        "-m harness calibrate",
        "-m harness calibrate --kind mix --writes 6 --bytes 7168",
        "-m harness calibrate --kind mix --reads 4 --writes 1 --bytes 28672",
        f"-m harness calibrate --kind read --bytes {18944 * 3584 + 18944 * 28 * 4}",
        f"-m harness calibrate --kind read --bytes {(1001 * 3584 + 1001 * 28 * 4) // 64 * 64}",
    ]
    assert rc == 1
    assert "ceiling-read-wide" in summary and "CEILING_WEIGHTS: 'wide' is not NxK" in summary
    assert "'3584x' is not NxK" in summary and "'09x3584' is not NxK" in summary
    assert "7x130's operand is under 1 MiB" in summary


@pytest.mark.parametrize("batch", ["64k", "0", "010"])
def test_a_bad_ceiling_batch_fails_the_phase_and_the_run_goes_on(tmp_path: Path,
                                                                 batch: str) -> None:
    """A CEILING_BATCH that is no positive whole number is said as a failed step, and the
    phases after it still run (an arithmetic error would end bash's phase loop unsaid)."""
    rc, summary, _ = _run(tmp_path, "ceilings", "tune", CEILING_BATCH=batch)
    assert rc == 1
    assert f"CEILING_BATCH: '{batch}' is not a positive whole number" in summary
    assert "tune " in summary  # the next phase ran (and says why it had nothing to do)


def test_layer_times_each_gemm_and_the_spike_layer_beside_their_peers(tmp_path: Path) -> None:
    """The layer's targets are ratios against peers measured in the same run: every int_gemm
    and spike_linear bench of the phase names its peers (the float layer, F.linear in fp32
    and bf16, among them), and the FP32 gemm is compared against the integer one."""
    rc, summary, _ = _run(tmp_path, "layer")
    assert rc == 0, summary
    calls = (tmp_path / "calls.log").read_text().splitlines()
    benches = [c for c in calls if c.startswith("-m harness bench int_gemm ")
               or c.startswith("-m harness bench spike_linear ")]
    assert {c.split()[3] for c in benches} == {"int_gemm", "spike_linear"}, calls
    for c in benches:
        peers = c.split("--peers ", 1)[1].split()[0].split(",") if "--peers " in c else []
        assert {"linear_fp32", "linear_bf16"} <= set(peers), c
    assert any(c.startswith("-m harness compare ") and "gemm.csv" in c for c in calls), calls


def _env_log(out: Path) -> list[str]:
    with tarfile.open(out / "logs.tgz") as t:
        name = next(n for n in t.getnames() if n.endswith("env.log"))
        return t.extractfile(name).read().decode().splitlines()  # type: ignore[union-attr]


def test_the_stamp_names_the_commit_and_its_sources(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no HARNESS_GIT_SHA is set, the stamp file `harness stamp` wrote gives the commit
    and its sources' digest (the harness adds -dirty where the sources there differ);
    where one is set, the stamp is not read."""
    from harness.results import sent_tree

    sent = tmp_path / "sent"
    sent.write_text(sent_tree.Stamp("ab" * 20, "0123456789abcdef").text())
    monkeypatch.delenv("HARNESS_GIT_SHA", raising=False)
    monkeypatch.delenv("HARNESS_GIT_TREE", raising=False)
    rc, summary, out = _run(tmp_path, "validate", HARNESS_SENT=str(sent))
    assert rc == 0, summary
    log = _env_log(out)
    assert f"HARNESS_GIT_SHA={'ab' * 20}" in log and "HARNESS_GIT_TREE=0123456789abcdef" in log
    rc, summary, out = _run(tmp_path, "validate", HARNESS_SENT=str(sent),
                            HARNESS_GIT_SHA="c0ffee")
    assert rc == 0, summary
    log = _env_log(out)
    assert "HARNESS_GIT_SHA=c0ffee" in log and "HARNESS_GIT_TREE=" in log


@pytest.mark.parametrize("text", ["HARNESS_GIT_SHA=\nHARNESS_GIT_TREE=0123\n",
                                  "HARNESS_GIT_TREE=0123\n", "nothing\n", None])
def test_a_stamp_without_a_commit_or_digest_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None) -> None:
    sent = tmp_path / "sent"
    if text is None:
        sent.mkdir()  # there, but no file to read
    else:
        sent.write_text(text)
    monkeypatch.delenv("HARNESS_GIT_SHA", raising=False)
    monkeypatch.delenv("HARNESS_GIT_TREE", raising=False)
    rc, summary, _ = _run(tmp_path, "validate", HARNESS_SENT=str(sent))
    assert rc == 2 and "names no commit or no digest" in summary
    calls = tmp_path / "calls.log"
    assert not calls.exists() or "harness" not in calls.read_text()  # nothing ran


def test_a_stamp_written_with_crlf_and_repeated_lines_gives_one_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = tmp_path / "sent"
    sent.write_bytes(b"HARNESS_GIT_SHA=abc1\r\nHARNESS_GIT_TREE=0f\r\nHARNESS_GIT_SHA=abc2\r\n")
    monkeypatch.delenv("HARNESS_GIT_SHA", raising=False)
    monkeypatch.delenv("HARNESS_GIT_TREE", raising=False)
    rc, summary, out = _run(tmp_path, "validate", HARNESS_SENT=str(sent))
    assert rc == 0, summary
    log = _env_log(out)
    assert "HARNESS_GIT_SHA=abc1" in log and "HARNESS_GIT_TREE=0f" in log
    assert "abc2" not in "\n".join(log)  # the first line of each, alone


def test_the_summary_says_when_the_sources_are_not_the_stamped_commits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp's digest against the sources here: the same, the rows name the commit and
    the summary is silent; another, the summary says the rows name <commit>-dirty."""
    from harness.results import sent_tree

    monkeypatch.delenv("HARNESS_GIT_SHA", raising=False)
    monkeypatch.delenv("HARNESS_GIT_TREE", raising=False)
    sent = tmp_path / "sent"
    here = sent_tree.tree_digest(paths.project_root())
    for tree, dirty in ((here, False), ("0" * 16, True)):
        sent.write_text(sent_tree.Stamp("ab" * 20, tree).text())
        rc, summary, out = _run(tmp_path, "validate", HARNESS_SENT=str(sent))
        assert rc == 0, summary
        assert ("rows name abababababab-dirty" in summary) == dirty, summary
        want = f"rows name: {'ab' * 20}" + ("-dirty" if dirty else "")
        assert want in _env_log(out)
