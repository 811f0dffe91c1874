"""ncu output parsing on a raw CSV recorded on the H200, and the profile command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.tools import child, ncu

RAW = Path(__file__).parents[1] / "fixtures" / "ncu" / "dynamic_spikes_raw.txt"


def test_parse_recorded_raw_csv() -> None:
    profs = ncu.parse_raw_csv(RAW.read_text())
    assert [p.kernel for p in profs] == ["dynamic_spikes"] * 3
    p = profs[0]
    assert p.units["gpu__time_duration.sum"] == "ns"
    assert p.duration_us() == pytest.approx(111.296)
    assert p.number("dram__throughput.avg.pct_of_peak_sustained_elapsed") == pytest.approx(83.23)
    assert p.number("launch__registers_per_thread") == 62
    assert p.number("sm__warps_active.avg.pct_of_peak_sustained_active") == \
        pytest.approx(46.23)
    assert p.number("lts__t_sector_hit_rate.pct") == pytest.approx(49.90)
    assert p.values["launch__grid_size"] == "16,384"


def test_no_table_is_a_clear_error() -> None:
    with pytest.raises(HarnessError, match="no profile table"):
        ncu.parse_raw_csv("==PROF== Disconnected from process 12\n")


def test_units_are_converted() -> None:
    p = ncu.KernelProfile("k", {"gpu__time_duration.sum": "1.5"},
                          {"gpu__time_duration.sum": "ms"})
    assert p.duration_us() == 1500.0


def test_command_line(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("shutil.which", lambda name: f"/opt/bin/{name}")
    st = reg.get("find_min_max")
    cmd = ncu.command(st, st.variants[0], st.point(batch=16384), "normal", None, "basic", 0,
                      sm_count=132)
    assert cmd[:3] == ["/opt/bin/ncu", "--clock-control", "none"]
    assert "regex:^(find_min_max)$" in cmd
    i = cmd.index("--launch-skip")
    assert cmd[i + 1] == str(ncu.WARMUP) and cmd[cmd.index("--launch-count") + 1] == "1"
    assert cmd[cmd.index("--set") + 1] == "basic"
    # What ncu runs: the child, one launch after the warm-up ones, on the sweep's inputs
    # (seed 0 unless given, as harness bench's).
    i = cmd.index(child.MODULE)
    assert cmd[i - 2:i] == [sys.executable, "-m"]
    assert child.parse(cmd[i + 1:]) == child.Launches(
        "find_min_max", st.variants[0].name, "normal", 0, (st.point(batch=16384),),
        ncu.WARMUP, 0)
    seeded = ncu.command(st, st.variants[0], st.point(), "llm", None, None, 1, sm_count=132,
                         seed=5)
    job = child.parse(seeded[seeded.index(child.MODULE) + 1:])
    assert (job.family, job.seed, job.device) == ("llm", 5, 1)
    with pytest.raises(HarnessError, match="unknown --set"):
        ncu.command(st, st.variants[0], st.point(), "normal", None, "huge", 0, sm_count=132)


def test_missing_ncu_and_forbidden_counters(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(HarnessError, match=r"ncu .* not found"):
        ncu.find_ncu()
    with pytest.raises(HarnessError, match="not permitted"):
        ncu.run(["sh", "-c", "echo '==ERROR== ERR_NVGPUCTRPERM - no access'; exit 1"])
    # Any other failure is ncu's exit status, with its output's tail kept as the detail,
    # even where what it printed parses as a table (nothing of a failed run is kept).
    with pytest.raises(HarnessError, match=r"ncu failed \(exit 2\)") as err:
        ncu.run(["sh", "-c", 'echo \'"ID","Metric Name"\'; echo "==ERROR== launch failed"; exit 2'])
    assert "launch failed" in (err.value.detail or "")


def test_command_counts_the_kernels_one_launch_enqueues(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A stage picks among its entry points by shape: ncu skips and counts what one call
    launches, not every entry point."""
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    fused = reg.get("activation_fused")
    v = fused.variants[0]
    assert ncu.launched_kernels(fused, v, fused.point(v, batch=1), sm_count=132) == ["act_one"]
    assert ncu.launched_kernels(fused, v, fused.point(v, batch=1, in_f=130),
                                sm_count=132) == ["act_small"]
    big = fused.point(v, batch=65536)
    assert ncu.launched_kernels(fused, v, big, sm_count=132) == ["act_stats", "act_encode"]
    cmd = ncu.command(fused, v, big, "normal", None, None, 0, sm_count=132)
    assert cmd[cmd.index("-k") + 1] == "regex:^(act_stats|act_encode)$"
    assert cmd[cmd.index("--launch-skip") + 1] == str(ncu.WARMUP * 2)
    assert cmd[cmd.index("--launch-count") + 1] == "2"
    wq = reg.get("weight_quant_fused")
    assert ncu.launched_kernels(wq, wq.variants[0], wq.point(out_f=18944),
                                sm_count=132) == ["wq_vec1"]


def test_the_prediction_follows_the_devices_sm_count(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """act_grid takes the rows its resident grid holds (4 rows a block, 4 blocks an SM), so
    batch 2000 is one launch on 132 SMs and the two passes on 114: the command profiles
    what the device it runs on launches."""
    fused = reg.get("activation_fused")
    v = fused.variants[0]
    p = fused.point(v, batch=2000)
    assert ncu.launched_kernels(fused, v, p, sm_count=132) == ["act_grid"]
    assert ncu.launched_kernels(fused, v, p, sm_count=114) == ["act_stats", "act_encode"]
    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    cmd = ncu.command(fused, v, p, "normal", None, None, 0, sm_count=114)
    assert cmd[cmd.index("-k") + 1] == "regex:^(act_stats|act_encode)$"


def test_stall_sampling_writes_a_report_and_reads_it_back(reg, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With a report path the profiling run samples each instruction (the two sections),
    writes the report and prints no table; the report is then read back twice: its metrics
    table and its SASS source page."""
    import subprocess
    from pathlib import Path

    fixtures = Path(__file__).parents[1] / "fixtures" / "ncu"
    monkeypatch.setattr("shutil.which", lambda name: f"/opt/bin/{name}")
    st = reg.get("find_min_max")
    rep = tmp_path / "p.ncu-rep"
    cmd = ncu.command(st, st.variants[0], st.point(batch=16384), "normal", None, None, 0,
                      sm_count=132, report=rep)
    assert "--csv" not in cmd and "--page" not in cmd
    assert cmd[cmd.index("-o") + 1] == str(rep) and "-f" in cmd
    sections = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--section"]
    assert sections == ["SourceCounters", "WarpStateStats"]
    assert "regex:^(find_min_max)$" in cmd and child.MODULE in cmd
    ran: list[list[str]] = []

    def run(c, what, timeout_s):  # type: ignore[no-untyped-def]
        ran.append(list(c))
        out = ""
        if "raw" in c:
            out = (fixtures / "dynamic_spikes_raw.txt").read_text()
        elif "source" in c:
            out = (fixtures / "source_page.csv").read_text()
        return subprocess.CompletedProcess(c, 0, out, "")

    monkeypatch.setattr(ncu.process, "run", run)
    ncu.collect(cmd)
    profs, pages, text = ncu.read_report(rep)
    assert ran[0] == cmd
    assert ran[1] == ["/opt/bin/ncu", "--import", str(rep), "--page", "raw", "--csv"]
    assert ran[2] == ["/opt/bin/ncu", "--import", str(rep), "--page", "source", "--csv",
                      "--print-source", "sass"]
    assert profs and profs[0].kernel
    assert [p.kernel for p in pages] == ["int_gemm_packed_wgmma", "int_gemm_packed_wgmma_refill"]
    assert text == (fixtures / "source_page.csv").read_text()
