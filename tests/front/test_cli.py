"""CLI behaviour: listings, one-line errors with exit status 2, the CPU fallback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness import paths
from harness.backends.pycuda.context import gpu_available
from harness.front.cli import app
from harness.results import rows as results

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def one_line_error(res, text: str) -> None:  # type: ignore[no-untyped-def]
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and text in lines[0], lines
    assert "Traceback" not in res.output


def test_list_shows_the_stages_and_the_pipeline() -> None:
    res = run("list")
    assert res.exit_code == 0 and "default, away" in res.stdout
    for name in ("dynamic_spikes", "find_min_max", "transform_absmax", "spike_encode",
                 "spike_decode", "dynamic_spikes_reverse", "compute_scales", "weight_quantize",
                 "gemm", "spike_quant_gemm"):
        assert name in res.stdout, name
    assert "pipeline" in res.stdout


@pytest.mark.parametrize("args, text", [
    (["bench", "--sweep", "batch="], "bad --sweep 'batch='"),
    (["bench", "dynamic_spikes", "--sweep", "batch=1..x"],
     "bad value for dynamic_spikes axis 'batch'"),
    (["bench", "nope"], "unknown stage or pipeline 'nope'"),
    (["bench", "--family", "zipf"], "unknown input family 'zipf'"),
    (["bench", "--backend", "cuda"], "unknown backend 'cuda'"),
    (["bench", "--variant", "fast"], "no variant 'fast'"),
    (["bench", "--sweep", "in_f=0"], "in_f must be >= 1"),
    (["validate", "nope"], "unknown stage or pipeline 'nope'"),
    (["run", "nope"], "unknown pipeline 'nope'"),
    (["run", "--family", "zipf"], "unknown input family 'zipf'"),
    (["bench", "spike_quant_gemm", "--backend", "numpy"], "needs a GPU"),
    (["bench", "--mode", "ternary"], "unknown mode 'ternary'"),
    (["bench", "weight_quant_fused", "--define", "UNROLL"], "bad --define 'UNROLL'"),
    (["bench", "weight_quant_fused", "--define", "UNROLL=2,"], "bad --define"),
    (["bench", "weight_quant_fused", "--define", "2X=1"], "bad --define '2X=1'"),
    (["bench", "--define", "A=1", "--define", "A=2"], "'A' given twice"),
    (["bench", "activation_path", "--define", "A=1"], "--define tunes a stage's kernel"),
    (["bench", "compute_scales", "--sweep", "batch=1"], "no selected stage has an axis"),
    (["sanitize", "dynamic_spikes", "find_min_max", "--define", "A=1"], "name one stage"),
    (["sanitize", "dynamic_spikes", "--variant", "nope"], "no variant 'nope'"),
    (["sanitize", "dynamic_spikes", "--define", "A=1", "--define", "A=2"], "'A' given twice"),
    (["bench", "dynamic_spikes", "--graph", "--backend", "numpy"],
     "--graph times CUDA graph replays"),
    (["bench", "dynamic_spikes", "--drain", "--hot", "--backend", "numpy"],
     "--drain and --hot exclude each other"),
    (["calibrate", "--kind", "load"], "unknown --kind 'load' (kinds: copy, write, mix, read)"),
    (["calibrate", "--kind", "read", "--writes", "1"],
     "--writes sets the mix's planes written: not for --kind read"),
    (["calibrate", "--kind", "mix", "--reads", "9"], "--reads 9: 1 to 8"),
    (["calibrate", "--reads", "2"],
     "--reads sets the planes read of the mix or the read: not for --kind copy"),
    (["check", "find_min_max", "--arch", "sm_bogus"], "--arch 'sm_bogus': a GPU target"),
    (["sass", "find_min_max", "--arch", "90"], "--arch '90': a GPU target"),
    (["sass", "find_min_max", "--define", "UNITZ=2"], "--define UNITZ: stage find_min_max"),
    (["bench", "spike_encode", "--backend", "numpy", "--variant", "unidirectional",
      "--sweep", "mode=bidirectional"], "leaves out the variant(s) named (unidirectional)"),
    # An empty path is not the current folder; a device index is not negative.
    (["bench", "dynamic_spikes", "--out", ""], "an empty path names no file or folder"),
    (["compare", "", "b.csv"], "an empty path names no file or folder"),
    (["merge", "a.csv", "", "--out", "m.csv"], "an empty path names no file or folder"),
    (["report", "statistics/h200", "--readme", " "], "an empty path names no file or folder"),
    (["bench", "dynamic_spikes", "--device", "-3"], "'--device'"),
    (["bench", "find_min_max", "--against", "no-such-revision-anywhere"],
     "not a folder, nor a revision"),
    (["bench", "find_min_max", "--against", "HEAD", "--cluster", "local"],
     "not with --cluster"),
])
def test_bad_input_is_one_line_exit_2(args: list[str], text: str) -> None:
    one_line_error(run(*args), text)


@pytest.mark.skipif(gpu_available()[0], reason="checks the message on a machine without GPU")
def test_gpu_commands_say_why_without_a_gpu() -> None:
    one_line_error(run("validate"), "pycuda is not importable")
    one_line_error(run("bench", "--backend", "pycuda", "--sweep", "batch=1"),
                   "pycuda is not importable")
    one_line_error(run("calibrate"), "pycuda is not importable")
    one_line_error(run("run"), "pycuda is not importable")


def test_numpy_bench_writes_csv(tmp_path: Path) -> None:
    res = run("bench", "--backend", "numpy", "--sweep", "batch=1,2", "--sweep", "in_f=8",
              "--budget", "0.05", "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    assert "timing the NumPy references on the CPU instead" in res.stderr
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [(r["backend"], r["batch"], r["in_f"], r["status"]) for r in rows] == [
        ("numpy", "1", "8", "ok"), ("numpy", "2", "8", "ok")]
    assert "median µs" in res.stdout and "± noise" in res.stdout


def test_the_cpu_fallback_says_how_many_default_points_it_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --sweep the CPU fallback keeps the default sweep's points under CPU_BYTES
    (here made small, so the run is short) and says how many it left out."""
    from harness.engine import bench as benches
    from harness.spikes import axes

    monkeypatch.setattr(benches, "CPU_BYTES", 1 << 17)
    res = run("bench", "dynamic_spikes", "--backend", "numpy", "--budget", "0.02",
              "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    points = len(axes.BATCH_SWEEP["batch"])  # of the default variant, which bench runs
    kept = len(rows)
    assert 0 < kept < points
    assert f"{points - kept} point(s) of the default sweep moving more than 0 MiB " \
           "left out on the CPU (--sweep times them)" in res.stdout


def test_define_sweeps_compiled_parameters(tmp_path: Path) -> None:
    """Each --define value is its own variant row, named after it (numpy: the reference
    stands in, so the rows differ only in name, and both the run and each row say so)."""
    res = run("bench", "weight_quant_fused", "--backend", "numpy", "--define", "BPS=2,4",
              "--sweep", "out_f=3", "--sweep", "in_f=8", "--budget", "0.02",
              "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    rows = results.read_rows(tmp_path / "weight_quant_fused.csv")
    assert [r["variant"] for r in rows] == ["default[BPS=2]", "default[BPS=4]"]
    # The row's reason may also say the noise stayed above target on a loaded machine (the
    # budget is short); the reference's note must be its last clause.
    assert all(r["reason"].endswith(f"the NumPy reference: no build of its own: {r['variant']} "
                                    "is timed as default") for r in rows), \
        [r["reason"] for r in rows]
    assert "--define names kernel builds, which the NumPy reference does not have" in \
        " ".join(res.stderr.split())
    res = run("bench", "weight_quant_fused", "--backend", "numpy", "--define", "UNROLL=2,4",
              "--sweep", "out_f=3", "--out", str(tmp_path / "b"))
    assert res.exit_code == 2 and "kernel never reads it" in res.stderr


def test_restrict_leaves_builds_out_and_names_them(tmp_path: Path) -> None:
    """--restrict: the builds that fail it are not measured, and the run says which; a
    condition that is no expression is one line and exit 2."""
    res = run("bench", "weight_quant_fused", "--backend", "numpy", "--define", "BPS=2,4,8",
              "--restrict", "BPS * 2 <= 8", "--sweep", "out_f=3", "--sweep", "in_f=8",
              "--budget", "0.02", "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    rows = results.read_rows(tmp_path / "weight_quant_fused.csv")
    assert [r["variant"] for r in rows] == ["default[BPS=2]", "default[BPS=4]"]
    assert "--restrict left out 1 build(s): weight_quant_fused default[BPS=8]" in res.stdout
    res = run("bench", "weight_quant_fused", "--backend", "numpy", "--define", "BPS=2",
              "--restrict", "open('x')", "--out", str(tmp_path / "b"))
    assert res.exit_code == 2 and "only -D names, numbers, text" in res.stderr


def test_ledger_check(tmp_path: Path) -> None:
    assert run("ledger", "--check").exit_code == 0
    # --drift lists, never fails: every line it adds is a `changed` or `unknown` unit. A
    # ledger whose rows name no commit makes every validated unit one it cannot compare.
    res = run("ledger", "--drift")
    assert res.exit_code == 0, res.output
    extra = [ln for ln in res.stdout.splitlines() if not ln.startswith(("ok ", "MISSING"))]
    assert all(ln.startswith(("changed ", "unknown ")) for ln in extra), extra
    real = (paths.project_root() / "statistics" / "validation_ledger.csv").read_text()
    lines = real.splitlines()
    assert lines[0].endswith(",git_sha")
    (tmp_path / "nosha.csv").write_text("\n".join(
        [lines[0], *(ln.rsplit(",", 1)[0] + "," for ln in lines[1:])]) + "\n")
    res = run("ledger", "--check", "--drift", "--path", str(tmp_path / "nosha.csv"))
    assert res.exit_code == 0, res.output
    oks = [ln for ln in res.stdout.splitlines() if ln.startswith("ok ")]
    unknown = [ln for ln in res.stdout.splitlines() if ln.startswith("unknown ")]
    assert oks and len(unknown) == len(oks), res.stdout
    assert all("its validation names no commit" in ln for ln in unknown)
    (tmp_path / "empty.csv").write_text("")
    res = run("ledger", "--check", "--path", str(tmp_path / "empty.csv"))
    # A check that found a fault is exit 1 (as a failed validation); bad input stays 2.
    assert res.exit_code == 1 and "without a passing GPU validation" in res.stderr
    assert "MISSING" in res.stdout
    torn = tmp_path / "torn.csv"
    torn.write_text("stage,variant\nx,y,z\n")
    assert run("ledger", "--check", "--path", str(torn)).exit_code == 2
    # With --rows, a row timed at a source that never passed a validation fails it too.
    stats = paths.project_root() / "statistics" / "h200"
    assert run("ledger", "--check", "--rows", str(stats)).exit_code == 0
    res = run("ledger", "--check", "--rows", str(stats / "processes-a"))
    assert res.exit_code == 1 and "timed at a kernel source with no passing GPU " \
        "validation: int_gemm [int8]" in res.stderr
    # Rows the ledger cannot speak for (here bench --against's twins) are listed, and pass.
    res = run("ledger", "--check", "--rows", str(stats / "tuning" / "against-aa"))
    assert res.exit_code == 0, res.output
    assert "unjudged dynamic_spikes [default@" in res.stdout
    assert "a build of another source (bench --against)" in res.stdout
    # Several folders in one run: each folder's rows under its name, and the check fails
    # for the one folder that should, named in the error.
    res = run("ledger", "--check", "--rows", str(stats / "tuning" / "against-aa"),
              "--rows", str(stats / "processes-a"))
    assert res.exit_code == 1
    assert f"rows of {stats / 'tuning' / 'against-aa'}:" in res.stdout
    assert f"rows of {stats / 'processes-a'}:" in res.stdout
    assert res.stdout.index("unjudged dynamic_spikes [default@") \
        < res.stdout.index(f"rows of {stats / 'processes-a'}:")
    assert f"row(s) in {stats / 'processes-a'} timed at a kernel source" in res.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_check_prints_registers(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nvcc runs, not the user's cache
    res = run("check")
    assert res.exit_code == 0, res.output
    assert "regs" in res.stdout and "dynamic_spikes" in res.stdout


def _sweep(reg, fail_after: int | None = None, status: str = "ok",  # type: ignore[no-untyped-def]
           stop: BaseException | None = None):
    """A BenchRun of one stage row and one pipeline row (the library replaced); ``stop``
    raised in place of the row ``fail_after`` (a Ctrl-C by default)."""
    from harness.engine.bench import BenchRun, Measured
    from harness.engine.jobs import plan

    st, pipe = reg.get("dynamic_spikes"), reg.pipelines["spike_quant_gemm"]
    js = plan([st, pipe], ["batch=4", "in_f=64"], None, {"out_f": "8"})
    stage_row = {"stage": st.name, "backend": "pycuda", "variant": "default", "batch": 4,
                 "in_f": 64, "out_f": "", "status": status, "reason": "q: FAILED",
                 "median_us": 12.5, "noise_pct": 0.5, "gbps": 7.0, "pct_peak": "",
                 "speedup_vs_best_peer": ""}
    pipe_row = {"stage": pipe.name, "batch": 4, "out_f": 8, "planes": 6, "status": "ok",
                "reason": "", "total_us": 33.25, "total_noise_pct": 0.5,
                "encoding_total_us": 20.0}

    def rows():  # type: ignore[no-untyped-def]
        for i, (j, r) in enumerate(zip(js, (stage_row, pipe_row), strict=True)):
            if i == fail_after:
                raise stop or KeyboardInterrupt
            yield Measured(j, r)

    return BenchRun(rows(), 2, Path("out"), True, "")


@pytest.mark.parametrize("status, code", [("ok", 0), ("failed", 1)])
def test_bench_shows_stage_and_pipeline_rows_apart(reg, monkeypatch, status, code) -> None:  # type: ignore[no-untyped-def]
    from harness.engine import bench as benches

    monkeypatch.setattr(benches, "bench", lambda *a, **k: _sweep(reg, status=status))
    res = run("bench")
    assert res.exit_code == code, res.output
    stage_table, pipe_table = res.stdout.split("enc kern µs")[0], res.stdout
    assert "dynamic_spikes" in stage_table and "spike_quant_gemm" not in stage_table
    assert "33.2 ±0.5%" in pipe_table and "wrote 2 row(s) to out/" in res.stdout
    # a failed row shows why, not a time
    assert ("12.50" in stage_table) == (status == "ok")
    assert ("failed: q: FAILED" in stage_table) == (status == "failed")


def test_a_bench_stopped_by_a_lost_context_shows_its_rows_and_one_line(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The sweep's rows so far drawn as a table, then the stop as one line, exit 1."""
    from harness.engine import bench as benches
    from harness.errors import ContextLost

    stop = ContextLost("stopped: the device's context was lost at x; the 1 job(s) after it "
                       "were not run: run them again in a new process")
    monkeypatch.setattr(benches, "bench", lambda *a, **k: _sweep(reg, fail_after=1,
                                                                 stop=stop))
    res = run("bench")
    assert res.exit_code == 1, res.output
    assert "dynamic_spikes" in res.stdout and "12.50" in res.stdout
    assert res.stderr.strip().splitlines()[-1] == f"error: {stop}"


def test_an_interrupted_bench_keeps_its_rows_and_says_so(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.engine import bench as benches

    monkeypatch.setattr(benches, "bench", lambda *a, **k: _sweep(reg, fail_after=1))
    res = run("bench")
    assert res.exit_code == 130
    assert "interrupted: 1 finished row(s) kept in out/" in res.stderr
    assert "12.50" in res.stdout and "enc kern µs" not in res.stdout  # the one row landed


def test_an_interrupt_inside_rich_printing_is_still_said(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A SIGTERM that lands inside rich's printing, between a print's entering and leaving
    its output buffer (here the progress bar's last render), leaves that console holding
    every later print: the interruption's line must reach stderr all the same, with the
    signal's status (a run stopped so once printed nothing and exited 143)."""
    from rich.console import Console
    from rich.live import Live

    from harness.engine import bench as benches
    from harness.front import app as front_app
    from harness.front import measure_commands, signals

    # A console of this test's own: the one it breaks is thrown away after it.
    monkeypatch.setattr(measure_commands, "err", Console(stderr=True, highlight=False))
    monkeypatch.setattr(front_app, "err", measure_commands.err)
    monkeypatch.setattr(benches, "bench", lambda *a, **k: _sweep(reg))
    stop, exit_buffer = Live.stop, Console._exit_buffer
    landed: list[str] = []

    def stop_marked(self):  # type: ignore[no-untyped-def]
        landed.append("stop")
        stop(self)

    def exit_buffer_once(self):  # type: ignore[no-untyped-def]
        if landed == ["stop"]:  # before the buffer's depth comes down, as a signal there
            landed.append("raised")
            signals._terminated.set()
            raise signals.Terminated
        exit_buffer(self)

    monkeypatch.setattr(Live, "stop", stop_marked)
    monkeypatch.setattr(Console, "_exit_buffer", exit_buffer_once)
    res = run("bench")
    assert landed == ["stop", "raised"]
    assert res.exit_code == 143, res.output
    assert "interrupted: 2 finished row(s) kept in out/" in res.stderr


def test_an_interrupt_after_rich_was_left_buffering_is_still_said(monkeypatch, capfd) -> None:  # type: ignore[no-untyped-def]
    """The same through any command's own handler (``cli_errors``): ``err`` left holding its
    prints (a SIGTERM landed in its buffer, as above, in a command whose progress bar has
    no handler of its own), the interruption's line is still written, exit status 143."""
    from rich.console import Console

    from harness.front import app as front_app
    from harness.front import signals

    broken = Console(stderr=True, highlight=False)
    broken._enter_buffer()  # never left: what an interrupt inside _exit_buffer leaves
    monkeypatch.setattr(front_app, "err", broken)

    @front_app.cli_errors
    def command() -> None:
        broken.print("lost")  # held in the buffer, as every print on it now is
        raise signals.Terminated

    with pytest.raises(typer.Exit) as stop:
        command()
    assert stop.value.exit_code == 143
    err = capfd.readouterr().err
    assert "interrupted (SIGTERM): stopped; every file written so far is whole" in err
    assert "lost" not in err


def test_a_row_written_before_an_interrupt_is_counted(reg, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A row is written before it is handed out: an interrupt between the two keeps it in
    the file, and the message counts the file's rows, not the rows drawn."""
    from harness.engine import bench as benches
    from harness.engine.bench import BenchRun

    class Written(BenchRun):
        def written(self) -> int | None:
            return 2  # both rows in the files, one drawn before the interrupt

    def sweep(*a, **k):  # type: ignore[no-untyped-def]
        s = _sweep(reg, fail_after=1)
        return Written(s.rows, s.total, s.out_dir, s.on_gpu, s.note)

    monkeypatch.setattr(benches, "bench", sweep)
    res = run("bench")
    assert res.exit_code == 130
    assert "interrupted: 2 finished row(s) kept in out/" in res.stderr


def test_bench_table_fits_80_columns(tmp_path: Path) -> None:
    """COLUMNS=80, as a narrow terminal says: every line of the table fits, no cell cut."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.run(
        [sys.executable, "-m", "harness.front.cli", "bench", "dynamic_spikes", "spike_encode",
         "--backend", "numpy", "--sweep", "batch=4,16", "--sweep", "in_f=64", "--budget",
         "0.02", "--out", str(tmp_path)], env=env, capture_output=True, text=True,
        check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    assert "…" not in proc.stdout
    assert "spike_encode" in proc.stdout and "numpy unidirectional" in proc.stdout
    assert "batch 16" in proc.stdout and "in_f 64" in proc.stdout


@pytest.mark.parametrize("columns", ["0", "-3", "wide", "²", "999999999"])
def test_a_columns_that_is_no_width_still_shows_the_error(columns: str) -> None:
    """Taken as a width, COLUMNS=0 prints every line as nothing, the error line included
    (exit 2 and a blank terminal): a COLUMNS that is no positive width is taken as unset,
    a huge one as the widest."""
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "harness.front.cli", "compare", "/no/such.csv", "/no/b.csv"],
        env={**os.environ, "COLUMNS": columns}, capture_output=True, text=True, check=False,
        timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: no such results file: /no/such.csv"


def test_check_reads_the_cache_and_no_cache_compiles(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from harness.contract.kernel import KernelResources
    from harness.engine import kernels

    calls: list[str] = []
    monkeypatch.setattr(kernels, "nvcc_report", lambda st, v, arch: calls.append(v.name)
                        or [KernelResources(st.name, 33, 0, 0, 0, 0)])
    monkeypatch.setattr(kernels, "nvcc_version", lambda nvcc=None: "V13.0.88")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = run("check", "dynamic_spikes")
    assert first.exit_code == 0, first.output
    assert calls == ["default", "away"] and "from the cache" not in first.stderr
    assert "2/2" in first.stderr  # the progress bar's count
    again = run("check", "dynamic_spikes")
    assert again.exit_code == 0 and calls == ["default", "away"]
    assert "2 of 2 variant(s) from the cache" in again.stderr and "33" in again.stdout
    assert list((tmp_path / "spike-harness" / "check").glob("*.json"))
    forced = run("check", "dynamic_spikes", "--no-cache")
    assert forced.exit_code == 0 and calls == ["default", "away"] * 2
    assert "from the cache" not in forced.stderr


def test_report_out_and_why_a_table_is_empty(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
    h200 = Path(__file__).parents[2] / "statistics" / "h200"
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    shutil.copy(h200 / "dynamic_spikes.csv", src)
    res = run("report", str(src), "--out", str(dest))
    assert res.exit_code == 0, res.output
    assert f"wrote {dest / 'dynamic_spikes.png'}" in res.stdout
    assert f"wrote {dest / 'results.md'}" in res.stdout and "warning" not in res.stderr
    assert "| dynamic_spikes | pycuda |" in (dest / "results.md").read_text()
    empty = run("report", str(src), "--batch", "3")
    assert empty.exit_code == 0, empty.output
    lines = [ln for ln in empty.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: the table is empty: no row at "
                                                   "batch 3"), lines
    assert "dynamic_spikes: batch 1, 1024, 16384, 65536 at in_f 3584" in lines[0]
    one_line_error(run("report", str(src), "--out", str(src / "dynamic_spikes.csv")),
                   "is a file: it takes a folder")


def test_sass_without_cuobjdump_is_one_line(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("CUOBJDUMP", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    one_line_error(run("sass", "int_gemm"), "cuobjdump not found on PATH")


def test_sass_prints_the_counts_the_note_and_writes_the_listing(  # type: ignore[no-untyped-def]
        monkeypatch, tmp_path: Path) -> None:
    from harness.engine import sass
    from tests.engine.test_sass import WGMMA_REMOVED

    monkeypatch.setattr(sass, "compile_cubin", lambda st, v, cubin, arch: "")
    monkeypatch.setattr(sass.disasm, "find", lambda: "cuobjdump")
    monkeypatch.setattr(sass.disasm, "disassemble", lambda cubin, exe: WGMMA_REMOVED)
    out = tmp_path / "k.sass"
    res = run("sass", "int_gemm", "--variant", "int8", "--define", "IG_PROMOTE=0",
              "--listing", str(out))
    assert res.exit_code == 0, res.output
    assert "int_gemm_wgmma" in res.stdout and "int8[IG_PROMOTE=0]" in res.stdout
    assert "warning: int_gemm_wgmma has no tensor-core MMA instruction" in res.stderr
    assert out.read_text() == WGMMA_REMOVED
    one_line_error(run("sass", "int_gemm", "--listing", str(tmp_path / "no" / "k.sass")),
                   "cannot write --listing")
    kept = tmp_path / "int_gemm.csv"
    kept.write_text("stage,backend\n")
    one_line_error(run("sass", "int_gemm", "--listing", str(kept)), "exists: a listing is "
                   "written to a new file")
    assert kept.read_text() == "stage,backend\n"


def test_help_lists_the_commands_in_their_order() -> None:
    """From finding a kernel to reading its rows, whichever module a command lives in."""
    from harness.front import cli

    res = run("--help")
    listed = [line.split()[1] for line in res.stdout.splitlines()
              if line.startswith("│ ") and len(line.split()) > 1 and line.split()[1] in
              cli.ORDER]
    assert listed == list(cli.ORDER)


def test_a_validation_stopped_by_a_lost_context_draws_its_table_first(reg, monkeypatch,  # type: ignore[no-untyped-def]
                                                                     tmp_path) -> None:
    """The variants validated so far and the failed case are drawn, then the stop as one
    line, exit 1 (where the stop once took the table with it)."""
    from harness.backends.numpy import NumpyRunner
    from harness.engine import validate

    class _Info:
        name, uuid, cc, driver, cuda = "Fake GPU", "GPU-0", "9.0", "0", "13.0"

    class Lost(NumpyRunner):
        device = type("D", (), {"info": _Info()})()

        def run(self, stage, variant, inputs, point):  # type: ignore[no-untyped-def]
            if variant.name == "away":
                raise RuntimeError("an illegal memory access was encountered")
            return super().run(stage, variant, inputs, point)

    monkeypatch.setattr(validate, "open_gpu", lambda device: Lost())
    res = run("validate", "dynamic_spikes", "--family", "normal", "--seeds", "1")
    assert res.exit_code == 1, res.output
    assert "default" in res.stdout and "away" in res.stdout  # the table, both variants
    assert "the run lost the device context" in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(
        "error: stopped: the run lost the device context: RuntimeError: an illegal memory "
        "access was encountered, at dynamic_spikes [away] family=normal seed=0")


def test_stamp_writes_the_commit_and_its_digest_and_names_what_differs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`harness stamp --out F` names HEAD and its sources' digest in F, silent on a clean
    tree; on a changed one a warning names the file and the ``-dirty`` the rows will say."""
    if shutil.which("git") is None:
        pytest.skip("no git here")
    from harness.results import sent_tree
    from tests.gitrepo import one_kernel_project

    one_kernel_project(tmp_path, monkeypatch)
    f = tmp_path / "sent"
    res = runner.invoke(app, ["stamp", "--out", str(f)])
    assert res.exit_code == 0, res.output
    st = sent_tree.stamp(tmp_path)
    assert f.read_text() == st.text() and not st.dirty
    assert res.stdout.strip() == f"{st.sha[:12]} (sources {st.tree}) -> {f}"
    assert res.stderr.strip() == ""
    (tmp_path / "kernels" / "k.cu").write_text("changed\n")
    res = runner.invoke(app, ["stamp", "--out", str(f)])
    assert res.exit_code == 0, res.output
    assert f.read_text() == st.text()  # the commit's digest still: the GPU side judges
    assert "kernels/k.cu" in res.stderr and f"{st.sha[:12]}-dirty" in res.stderr
