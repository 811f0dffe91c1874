"""Every bad input answered with one line naming the problem and exit status 2 (or, inside
a sweep, a CSV row with a status and a reason while the sweep goes on)."""

from __future__ import annotations

import shutil
import sys
import time
import types
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import harness
from harness.contract import registry
from harness.engine import memory
from harness.errors import GpuUnavailable
from harness.front.cli import app
from harness.results import rows as results

ROOT = Path(__file__).parents[2]
runner = CliRunner()


def one_line(res, text: str, code: int = 2) -> None:  # type: ignore[no-untyped-def]
    """Exit ``code`` and one line on stderr, the error naming ``text`` (what stdout holds
    is the command's: a table written before the error, say)."""
    assert res.exit_code == code, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and text in lines[0], lines
    assert "Traceback" not in res.output


def only_line(res, text: str) -> None:  # type: ignore[no-untyped-def]
    """Exit 2 and one line on stderr, nothing else on the terminal."""
    one_line(res, text)
    assert len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1, res.stderr
    assert res.stdout.strip() == "", res.stdout


@pytest.mark.parametrize("args, text", [
    (["bench", "--sweep", "batch=0"], "batch must be >= 1"),
    (["bench", "--sweep", "in_f=0"], "in_f must be >= 1"),
    (["bench", "dynamic_spikes", "--k", "0"], "k must be >= 1e-30"),
    (["bench", "dynamic_spikes", "--k", "-2"], "k must be >= 1e-30"),
    (["bench", "spike_encode", "--mode", "ternary"], "unknown mode 'ternary'"),
    (["bench", "transform_absmax", "--mode", "ternary"], "unknown mode 'ternary'"),
    (["bench", "spike_encode", "--sweep", "planes=40"], "planes must be <= 31"),
    (["bench", "nope"], "unknown stage or pipeline 'nope'"),
    (["bench", "--backend", "opencl"], "unknown backend 'opencl'"),
    (["bench", "--family", "zipf"], "unknown input family 'zipf'"),
    (["bench", "--sweep", "batch=1..x"], "bad value"),
    (["bench", "--sweep", "batch"], "bad --sweep 'batch'"),
    (["run", "--family", "zipf"], "unknown input family 'zipf'"),
    (["bench", "--resume", "--overwrite"], "--resume and --overwrite exclude each other"),
    (["bench", "dynamic_spikes", "--sweep", ""], "bad --sweep '': empty"),
    (["check", "dynamic_spikes", "dynamic_spikes"], "stage dynamic_spikes named twice"),
    (["bench", "dynamic_spikes", "--variant", "all", "--variant", "default"],
     "--variant all stands alone"),
    (["bench", "dynamic_spikes", "--sweep", " ; "], "bad --sweep ' ; ': empty"),
    (["bench", "dynamic_spikes", "--budget", "inf"], "--budget must be a finite number"),
    (["bench", "--cluster", "local", "--budget", "inf"], "--budget must be a finite number"),
    (["bench", "--cluster", "local", "--resume"], "--resume continues one process's sweep"),
    # A schedule of that many rounds is built before the first: memory, not a sweep.
    (["bench", "dynamic_spikes", "--repeats", "99999999999999999999"],
     "Invalid value for '--repeats'"),
    (["bench", "dynamic_spikes", "--sweep", "batch=1.." + "9" * 5000],
     "a range's bounds are sizes, at most 18 digits"),
    (["bench", "dynamic_spikes", "--max-noise", "0"], "--max-noise must be a finite "
                                                      "percentage above 0, not 0.0"),
    (["bench", "dynamic_spikes", "--max-noise", "nan"], "--max-noise must be a finite"),
    (["bench", "dynamic_spikes", "--min-samples", "30", "--max-samples", "20"],
     "--min-samples (30) must be at least 1 and at most --max-samples (20)"),
    (["bench", "dynamic_spikes", "--max-samples", "0"], "Invalid value for '--max-samples'"),
])
def test_bad_values(args: list[str], text: str) -> None:
    one_line(runner.invoke(app, args), text)


def test_profile_without_ncu(monkeypatch) -> None:  # type: ignore[no-untyped-def]

    monkeypatch.setattr("shutil.which", lambda name: None)
    one_line(runner.invoke(app, ["profile", "dynamic_spikes"]), "ncu (Nsight Compute) not found")


def test_device_index_out_of_range(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With a driver that reports one device, --device 3 is a one-line error."""
    drv = types.ModuleType("pycuda.driver")
    drv.init = lambda: None  # type: ignore[attr-defined]
    drv.Device = type("Device", (), {"count": staticmethod(lambda: 1)})  # type: ignore[attr-defined]
    pkg = types.ModuleType("pycuda")
    pkg.driver = drv  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycuda", pkg)
    monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
    one_line(runner.invoke(app, ["validate", "--device", "3"]),
             "device index 3 is out of range: 1 CUDA device(s), 0..0")


def test_resume_says_what_it_left(tmp_path: Path) -> None:
    args = ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep", "batch=1,2",
            "--sweep", "in_f=64", "--out", str(tmp_path), "--budget", "0.05"]
    assert runner.invoke(app, args).exit_code == 0
    res = runner.invoke(app, [*args, "--resume"])
    assert res.exit_code == 0, res.output
    assert "resumed: 2 point(s) measured already by this command" in res.stdout
    assert len(results.read_rows(tmp_path / "dynamic_spikes.csv")) == 2


def test_q_overflow_is_a_skipped_row(tmp_path: Path) -> None:
    res = runner.invoke(app, ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep",
                              "batch=2", "--sweep", "vth_max=1e-12,inf", "--out",
                              str(tmp_path), "--budget", "0.05"])
    assert res.exit_code == 0, res.output
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [r["status"] for r in rows] == ["skipped", "ok"]  # the sweep went on
    assert "beyond int32" in rows[0]["reason"] and "vth clamped" in rows[0]["reason"]


@pytest.fixture
def extra(tmp_path: Path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """A $HARNESS_PLUGIN_PATH folder, its kernels beside its plugins."""
    d = tmp_path / "extra"
    d.mkdir()
    shutil.copytree(ROOT / "kernels" / "common", d / "common")
    monkeypatch.setenv(registry.PATH_ENV, str(d))
    return d


def _clone_stage(d: Path, name: str, kernel_text: str | None = None,
                 inputs_nan: bool = False, tail: str = "") -> None:
    """A copy of dynamic_spikes named ``name`` in ``d``; ``tail`` is code run after its
    ``STAGE`` is made (to replace a field of it, say)."""
    src = (ROOT / "kernels" / "dynamic_spikes.cu").read_text()
    (d / f"{name}.cu").write_text(kernel_text if kernel_text is not None else src)
    make = ("def _mk(rng, fam, p):\n    x = _ds.make_inputs(rng, fam, p)['x']\n"
            "    x.flat[::3] = float('nan')\n    return {'x': x}\n" if inputs_nan else
            "_mk = _ds.make_inputs\n")
    (d / f"{name}.py").write_text(
        "import dataclasses, importlib.util, pathlib\n"
        f"_p = pathlib.Path({str(ROOT / 'plugins' / 'dynamic_spikes.py')!r})\n"
        "_spec = importlib.util.spec_from_file_location('_ds_copy', _p)\n"
        "_ds = importlib.util.module_from_spec(_spec)\n_spec.loader.exec_module(_ds)\n"
        + make +
        f"STAGE = dataclasses.replace(_ds.STAGE, name={name!r}, kernel_dir=None,\n"
        "                            make_inputs=_mk)\n" + tail)


def test_nonfinite_input_is_a_row_with_a_reason(extra: Path, tmp_path: Path) -> None:
    _clone_stage(extra, "nan_spikes", inputs_nan=True)
    res = runner.invoke(app, ["bench", "nan_spikes", "--backend", "numpy", "--sweep",
                              "batch=2", "--sweep", "in_f=9", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    row = results.read_rows(tmp_path / "nan_spikes.csv")[0]
    assert row["status"] == "skipped"
    assert row["reason"] == "bad input: x has 6 non-finite value(s) (6 NaN, 0 inf) of 18"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_kernel_that_does_not_compile(extra: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nvcc runs, not the user's cache
    _clone_stage(extra, "broken", kernel_text='extern "C" __global__ void dynamic_spikes() '
                                              "{ undefined_name; }\n")
    res = runner.invoke(app, ["check"])
    assert res.exit_code == 1
    assert "error: broken [default] does not compile" in res.stderr
    assert 'identifier "undefined_name" is undefined' in res.stderr  # the nvcc log
    assert "dynamic_spikes" in res.stdout and "find_min_max" in res.stdout  # others ran


def test_missing_fields_and_missing_kernel(extra: Path) -> None:
    (extra / "half.py").write_text("from harness.contract.stage import Stage\n"
                                   "STAGE = Stage(name='half')\n")
    _clone_stage(extra, "nokernel")
    (extra / "nokernel.cu").unlink()
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 1
    assert "broken: plugin half" in res.stderr and "missing" in res.stderr
    assert "broken: plugin nokernel" in res.stderr and "nokernel.cu not found" in res.stderr
    assert "dynamic_spikes" in res.stdout


# -- the terminal ---------------------------------------------------------------------------

@pytest.mark.parametrize("args, text", [
    (["bench", "--budget", "x"], "Invalid value for '--budget'"),
    # click's range check would say "greater than or equal to 0.01" of a nan, as if a number
    (["bench", "--budget", "nan"], "Invalid value for '--budget': 'nan' is not a number"),
    (["bench", "--budget", "0.001"], "Invalid value for '--budget': 0.001 is less than 0.01"),
    (["compare", "a.csv", "b.csv", "--threshold", "nan"],
     "Invalid value for '--threshold': 'nan' is not a number"),
    (["compare", "a.csv", "b.csv", "--threshold", "-1"],
     "Invalid value for '--threshold': -1 is less than 0"),
    (["best", "a.csv", "--z", "NaN"], "Invalid value for '--z': 'NaN' is not a number"),
    (["bench", "--budgte", "1"], "No such option: --budgte"),
    (["benhc"], "No such command 'benhc'. Did you mean 'bench'?"),
    (["profile"], "Missing argument 'stage'."),
    (["bench", "--seed", "-1"], "Invalid value for '--seed': Input should be greater than or "
                                "equal to 0"),
    (["validate", "--seed", "-1"], "Invalid value for '--seed'"),
    (["run", "--batch", "0"], "Invalid value for '--batch'"),
    (["report", "statistics/h200", "--batch", "0"], "Invalid value for '--batch'"),
    (["report", "statistics/h200", "--batch", "-5"], "Invalid value for '--batch'"),
    (["report", "statistics/h200", "--out-f", "-1"], "Invalid value for '--out-f'"),
])
def test_a_parse_error_is_one_line(args: list[str], text: str) -> None:
    """Not typer's usage line, hint and boxed panel: one line, exit 2."""
    res = runner.invoke(app, args)
    only_line(res, text)
    assert "--help')" in res.stderr and "\u256d" not in res.output  # no box


def test_h_is_help_and_version_prints_the_version() -> None:
    for args in (["-h"], ["bench", "-h"], ["report", "-h"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0 and "Usage:" in res.stdout, (args, res.output)
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout == f"harness {harness.__version__}\n"


# -- one line, not a traceback --------------------------------------------------------------

def _stage_csv(folder: Path, median: str) -> Path:
    folder.mkdir(exist_ok=True)
    p = folder / "toy.csv"
    ok = {c: "" for c in results.COLUMNS} | {
        "stage": "toy", "backend": "pycuda", "variant": "default", "batch": "16384",
        "in_f": "3584", "status": "ok", "median_us": "10", "p10_us": "9", "p90_us": "11",
        "noise_pct": "0.5", "gbps": "100", "gpu": "H200", "git_sha": "abc"}
    rows = [ok, {**ok, "batch": "32768", "median_us": median}]
    p.write_text(",".join(results.COLUMNS) + "\n" + "".join(
        ",".join(r[c] for c in results.COLUMNS) + "\n" for r in rows))
    return p


def test_report_to_a_missing_readme_draws_nothing(tmp_path: Path) -> None:
    _stage_csv(tmp_path / "res", "20")
    res = runner.invoke(app, ["report", str(tmp_path / "res"), "--readme",
                              str(tmp_path / "nope.md")])
    only_line(res, f"no such README: {tmp_path / 'nope.md'}")
    assert not (tmp_path / "res" / "plots").exists()


@pytest.mark.parametrize(("median", "text"), [
    ("nan", "line 3: median_us is 'nan', not a positive number"),
    ("0", "line 3: median_us is '0', not a positive number"),
    ("-4", "line 3: median_us is '-4', not a positive number"),
    ("fast", "line 3: median_us is 'fast', not a positive number"),
])
def test_report_over_a_bad_median_is_one_line(tmp_path: Path, median: str, text: str) -> None:
    p = _stage_csv(tmp_path, median)
    only_line(runner.invoke(app, ["report", str(tmp_path)]), f"{p}, {text}")


def test_report_of_an_unknown_stage_is_one_line(tmp_path: Path) -> None:
    """A name that is no stage or pipeline of the harness and no CSV of the folder is bad
    input (one folder or several); a known stage the folder has no CSV of is a warning,
    and --out-f 0 (every weight row) still runs."""
    pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
    res = tmp_path / "res"
    _stage_csv(res, "10")
    for folders in ([res], [res, res]):
        out = runner.invoke(app, ["report", *map(str, folders), "--stage", "bogus"])
        only_line(out, "unknown stage 'bogus': no stage or pipeline of the harness")
    assert not (res / "plots").exists()
    known = runner.invoke(app, ["report", str(res), "--stage", "spike_encode", "--out-f", "0"])
    assert known.exit_code == 0, known.output
    assert "warning: the table is empty" in known.stderr and "of spike_encode" in known.stderr
    toy = runner.invoke(app, ["report", str(res), "--stage", "toy", "--out-f", "0"])
    assert toy.exit_code == 0 and "| toy | pycuda |" in toy.stdout, toy.output


def test_report_of_several_folders_one_missing_is_one_line(tmp_path: Path) -> None:
    _stage_csv(tmp_path / "res", "10")
    only_line(runner.invoke(app, ["report", str(tmp_path / "res"), str(tmp_path / "none")]),
              f"no such folder: {tmp_path / 'none'}")


def test_report_to_a_readme_with_its_markers_out_of_order(tmp_path: Path) -> None:
    _stage_csv(tmp_path / "res", "10")
    (tmp_path / "R.md").write_text("<!-- results:end -->\n<!-- results:begin -->\n")
    only_line(runner.invoke(app, ["report", str(tmp_path / "res"), "--readme",
                                  str(tmp_path / "R.md")]), "markers are out of order")
    assert not (tmp_path / "res" / "plots").exists()


def test_report_over_garbage_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_bytes(bytes(range(128, 256)) * 8)
    only_line(runner.invoke(app, ["report", str(tmp_path)]),
              f"{tmp_path / 'x.csv'}: not a readable CSV (UnicodeDecodeError)")


def test_ledger_rows_of_no_folder(tmp_path: Path) -> None:
    only_line(runner.invoke(app, ["ledger", "--rows", str(tmp_path / "none")]),
              f"--rows {tmp_path / 'none'}: no such results folder")
    # the second of two: said before any kernel is hashed or any folder judged
    (tmp_path / "there").mkdir()
    only_line(runner.invoke(app, ["ledger", "--rows", str(tmp_path / "there"), "--rows",
                                  str(tmp_path / "none")]),
              f"--rows {tmp_path / 'none'}: no such results folder")


def test_ledger_path_that_is_no_ledger(tmp_path: Path) -> None:
    only_line(runner.invoke(app, ["ledger", "--path", str(tmp_path / "none.csv")]),
              f"no such ledger: {tmp_path / 'none.csv'}")
    (tmp_path / "bin.csv").write_bytes(bytes(range(128, 256)))
    only_line(runner.invoke(app, ["ledger", "--path", str(tmp_path / "bin.csv")]),
              "bin.csv is not a ledger CSV (UnicodeDecodeError)")
    (tmp_path / "other.csv").write_text("stage,variant,status,gpu\ndynamic_spikes,default,"
                                        "pass,H200\n")
    only_line(runner.invoke(app, ["ledger", "--path", str(tmp_path / "other.csv")]),
              "other.csv is not a ledger CSV: no kernel_hash, date, cases, passed, "
              "worst_error column(s)")


@pytest.mark.parametrize(("column", "bad"), [("bytes", "inf"), ("bytes", "1e308"),
                                           ("peak_gbps", "inf")])
def test_fit_over_a_bytes_or_peak_cell_that_is_no_number_is_one_line(tmp_path: Path,
                                                                     column: str,
                                                                     bad: str) -> None:
    p = _stage_csv(tmp_path, "10")
    rows = results.read_rows(p)
    rows.append({**rows[1], "batch": "65536", "median_us": "40", "p10_us": "39",
                 "p90_us": "41"})
    for r in rows:
        r.update(bytes=str(4096 * int(r["batch"])), peak_gbps="4287")
    rows[0][column] = bad
    p.write_text(",".join(results.COLUMNS) + "\n" + "".join(
        ",".join(r[c] for c in results.COLUMNS) + "\n" for r in rows))
    # peak_gbps is a rate every reader checks (a finite number >= 0); bytes is fit's own.
    said = f"{p}, line 2: peak_gbps is inf; it must be a finite number >= 0" \
        if column == "peak_gbps" else f"{p}, line 2: {column} is '{bad}'; harness fit takes a"
    only_line(runner.invoke(app, ["fit", str(p), "--axis", "batch"]), said)


def test_fit_of_a_line_that_falls_to_zero_is_no_traceback(tmp_path: Path) -> None:
    """Medians 23, 11, 1 µs at batch 1, 2, 4: the line is 0 at batch 4, where the residual
    and the fixed share divided by zero."""
    p = _stage_csv(tmp_path, "20")
    ok = results.read_rows(p)[0]
    rows = [{**ok, "batch": b, "median_us": m, "p10_us": m, "p90_us": m}
            for b, m in (("1", "23"), ("2", "11"), ("4", "1"))]
    p.write_text(",".join(results.COLUMNS) + "\n" + "".join(
        ",".join(r[c] for c in results.COLUMNS) + "\n" for r in rows))
    res = runner.invoke(app, ["fit", str(p), "--axis", "batch"])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert "4: -; worst residual inf %" in res.stdout


def _pipeline_csvs(tmp_path: Path, **changed: str) -> list[Path]:
    """Two processes' spike_linear.csv, each one committed row; the second's ``changed``."""
    import csv

    with (ROOT / "statistics" / "h200" / "spike_linear.csv").open(newline="") as f:
        row = next(csv.DictReader(f))
    out = []
    for i, r in enumerate((row, {**row, "total_us": "27.5", **changed})):
        d = tmp_path / f"p{i}"
        d.mkdir()
        with (d / "spike_linear.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(r))
            w.writeheader()
            w.writerow(r)
        out.append(d / "spike_linear.csv")
    return out


@pytest.mark.parametrize(("changed", "text"), [
    ({"gemm_us": "nan"}, "gemm_us is nan; it must be a non-negative number"),
    ({"gemm_us": "inf"}, "gemm_us is inf; it must be a non-negative number"),
    ({"intervals": '{"activation": {"median_us": NaN, "noise_pct": 0.3}}'},
     "intervals' activation median_us is NaN; it must be a non-negative number"),
])
def test_merge_of_a_pipeline_row_with_a_nan_interval_is_one_line(
        tmp_path: Path, changed: dict[str, str], text: str) -> None:
    """merge widens every interval's noise by its spread across the processes: a NaN one
    is refused in one line before statistics.stdev could fail on it."""
    a, b = _pipeline_csvs(tmp_path, **changed)
    out = tmp_path / "m.csv"
    only_line(runner.invoke(app, ["merge", str(a), str(b), "--out", str(out)]),
              f"{b}, line 2: {text}")
    assert not out.exists()


def test_report_of_a_negative_interval_is_one_line(tmp_path: Path) -> None:
    _, b = _pipeline_csvs(tmp_path, gemm_us="-5")
    only_line(runner.invoke(app, ["report", str(b.parent)]),
              f"{b}, line 2: gemm_us is -5; it must be a non-negative number")
    assert not (b.parent / "plots").exists()


@pytest.mark.parametrize(("record", "why"), [
    ("{", "not JSON"),
    ('{"gbps": NaN}', "gbps is NaN; it must be a finite number above 0"),
    ('{"gbps": "fast"}', 'gbps is "fast", not a number'),
    ('{"gbps": -5}', "gbps is -5; it must be a finite number above 0"),
    ('{"gbps": 4000, "bytes_each_way": -3}', "bytes_each_way is -3"),
])
def test_a_gpu_whose_calibration_is_no_record_is_one_line(tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                          record: str, why: str) -> None:
    """The GPU's stored calibration is checked when a run reads it: its rate becomes each
    row's peak_gbps and pct_peak (a corrupt file was a JSONDecodeError)."""
    info = types.SimpleNamespace(name="NVIDIA H200", slug="h200", driver="580", cuda="13.0")
    gpu = types.SimpleNamespace(backend="pycuda", device=types.SimpleNamespace(info=info))
    monkeypatch.setattr("harness.engine.devices.open_gpu", lambda device: gpu)
    monkeypatch.setattr("harness.paths.statistics_dir", lambda: tmp_path)
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "calibration.json").write_text(record)
    only_line(runner.invoke(app, ["bench", "dynamic_spikes", "--sweep", "batch=2", "--out",
                                  str(tmp_path / "out")]),
              f"{tmp_path / 'h200' / 'calibration.json'}: not a calibration record ({why}")
    assert not (tmp_path / "out" / "dynamic_spikes.csv").exists()


@pytest.mark.parametrize("bound", ["vth_min=1e39", "vth_max=1e39"])
def test_a_clamp_beyond_float32_is_a_skipped_row(tmp_path: Path, recwarn, bound: str) -> None:  # type: ignore[no-untyped-def]
    """Finite in float64, inf in float32: a skipped row saying so, not an ok row and numpy's
    overflow warnings."""
    res = runner.invoke(app, ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep",
                              "batch=2", "--sweep", "in_f=64", "--sweep", bound, "--out",
                              str(tmp_path), "--budget", "0.05"])
    assert res.exit_code == 0, res.output
    (row,) = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert row["status"] == "skipped" and row["reason"].startswith(
        f"bad input: {bound.replace('1e39', '1e+39').replace('=', ' = ')} is beyond float32")
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    assert "RuntimeWarning" not in res.output


def test_run_checks_the_gpu_before_building_inputs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Batch 2^40 would be a MemoryError (a traceback) if the inputs came first."""

    def no_gpu(device: int) -> None:
        raise GpuUnavailable("no GPU here")

    monkeypatch.setattr("harness.engine.pipeline.open_gpu", no_gpu)
    start = time.monotonic()
    only_line(runner.invoke(app, ["run", "--batch", "1099511627776"]), "error: no GPU here")
    assert time.monotonic() - start < 20


def test_run_of_a_point_that_cannot_fit_is_one_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    class Gpu:
        backend = "pycuda"

        def free_device_bytes(self) -> int:
            return 140 << 30

    monkeypatch.setattr("harness.engine.pipeline.open_gpu", lambda device: Gpu())
    only_line(runner.invoke(app, ["run", "--batch", "1099511627776"]),
              "spike_quant_gemm at batch=1099511627776, in_f=3584, out_f=3584")
    res = runner.invoke(app, ["run", "--batch", "1099511627776"])
    assert "out of memory (estimated before the inputs were built): needs about " in res.stderr


# -- accepted silently no more --------------------------------------------------------------

@pytest.mark.parametrize("args, text", [
    (["bench", "dynamic_spikes", "--group-size", "64"],
     "--group-size: dynamic_spikes has no axis 'group_size'"),
    (["bench", "compute_scales", "--k", "2"], "--k: compute_scales has no axis 'k'"),
    (["bench", "find_min_max", "--mode", "bidirectional"],
     "--mode: find_min_max has no axis 'mode'"),
    (["bench", "compute_scales", "weight_quantize", "--k", "2"],
     "--k: no selected stage has an axis 'k'"),
    (["validate", "compute_scales", "--mode", "bidirectional"],
     "--mode: compute_scales has no axis 'mode'"),
    (["profile", "compute_scales", "--batch", "4"], "--batch: compute_scales has no axis"),
    (["profile", "dynamic_spikes", "--top", "5"],
     "--top lists the instructions of --stalls: give --stalls too"),
    (["run", "activation_path", "--out-f", "8"], "--out-f: activation_path has no axis 'out_f'"),
    (["bench", "dynamic_spikes", "dynamic_spikes"], "stage dynamic_spikes named twice"),
    (["validate", "find_min_max", "find_min_max"], "stage find_min_max named twice"),
    (["bench", "dynamic_spikes", "--variant", "away", "--variant", "away"],
     "dynamic_spikes: variant away named twice"),
])
def test_options_that_would_be_dropped_or_doubled(args: list[str], text: str) -> None:
    only_line(runner.invoke(app, args), text)


def test_a_plugin_path_that_points_nowhere(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(registry.NO_EXTERNAL_ENV, "0")
    monkeypatch.setenv(registry.PATH_ENV, str(tmp_path / "nowhere"))
    only_line(runner.invoke(app, ["list"]), f"HARNESS_PLUGIN_PATH names {tmp_path}/nowhere, "
                                            "which is not a folder")
    res = runner.invoke(app, ["--no-external-plugins", "list"])
    assert res.exit_code == 0 and "dynamic_spikes" in res.stdout, res.output


# -- memory ---------------------------------------------------------------------------------

def test_a_cpu_sweep_to_batch_2_40_ends_in_oom_rows(tmp_path: Path) -> None:
    start = time.monotonic()
    res = runner.invoke(app, ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep",
                              "batch=68719476736..1099511627776", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [r["batch"] for r in rows] == [str(2**i) for i in range(36, 41)]
    assert all(r["status"] == "oom" and r["reason"].startswith(
        "out of memory (estimated before the inputs were built): needs about ")
        and "of host memory" in r["reason"] for r in rows)
    assert time.monotonic() - start < 30


def test_points_beyond_free_memory_are_oom_rows_and_the_rest_run(tmp_path: Path,
                                                                monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(memory, "host_available", lambda: 64 << 20)
    res = runner.invoke(app, ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep",
                              "batch=1,65536", "--out", str(tmp_path), "--budget", "0.05"])
    assert res.exit_code == 0, res.output
    rows = results.read_rows(tmp_path / "dynamic_spikes.csv")
    assert [(r["batch"], r["status"]) for r in rows] == [("1", "ok"), ("65536", "oom")]
    assert rows[1]["reason"].endswith("of host memory, 0.1 GiB available")


# -- plugins that cannot take the harness down or lie ---------------------------------------

@pytest.fixture
def quiet_extra(extra: Path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """The $HARNESS_PLUGIN_PATH folder, external plugins on (the variable restored after)."""
    monkeypatch.setenv(registry.NO_EXTERNAL_ENV, "0")
    return extra


def test_a_plugin_that_exits_at_import_is_a_broken_plugin(quiet_extra: Path,
                                                          tmp_path: Path) -> None:
    (quiet_extra / "quitter.py").write_text("import sys\nsys.exit(0)\n")
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 1
    assert "broken: plugin quitter" in res.stderr
    assert "exited while being imported (SystemExit: 0)" in res.stderr
    res = runner.invoke(app, ["bench", "dynamic_spikes", "--backend", "numpy", "--sweep",
                              "batch=2", "--sweep", "in_f=9", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "warning: plugin quitter" in res.stderr
    assert results.read_rows(tmp_path / "o" / "dynamic_spikes.csv")[0]["status"] == "ok"


def test_a_broken_plugin_the_command_names_is_said_once(quiet_extra: Path) -> None:
    """Asked for by name, a plugin that failed to load is one error line (the warning every
    command gives for it would say the same again)."""
    (quiet_extra / "quitter.py").write_text("import sys\nsys.exit(0)\n")
    res = runner.invoke(app, ["check", "quitter"])
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code != 0 and len(lines) == 1, lines
    assert lines[0].startswith("error:") and "plugin quitter" in lines[0]


def test_external_plugins_switched_off(quiet_extra: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _clone_stage(quiet_extra, "copied")
    (quiet_extra / "quitter.py").write_text("import sys\nsys.exit(0)\n")
    assert "copied" in runner.invoke(app, ["list"]).stdout
    res = runner.invoke(app, ["--no-external-plugins", "list"])
    assert res.exit_code == 0 and "copied" not in res.stdout and "quitter" not in res.output
    monkeypatch.setenv(registry.NO_EXTERNAL_ENV, "1")
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0 and "copied" not in res.stdout
    monkeypatch.setenv(registry.NO_EXTERNAL_ENV, "perhaps")
    only_line(runner.invoke(app, ["list"]), "HARNESS_NO_EXTERNAL_PLUGINS='perhaps': expected 1")


def test_a_name_that_would_be_a_formula_never_reaches_a_csv(quiet_extra: Path,
                                                           tmp_path: Path) -> None:
    _clone_stage(quiet_extra, "evil", tail="STAGE = dataclasses.replace(STAGE, variants=("
                 "dataclasses.replace(STAGE.variants[0], name='=HYPERLINK(\"x\")'),))\n")
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 1
    assert "variant name '=HYPERLINK(\"x\")' is not [a-z][a-z0-9_]*" in res.stderr
    res = runner.invoke(app, ["bench", "evil", "--backend", "numpy", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.stderr.splitlines()[-1].startswith("error: plugin evil (")  # after its warning
    assert not list(tmp_path.glob("*.csv"))


_REF = ("_ref = STAGE.reference\n"
        "def _liar(i, p, v, given=None):\n"
        "    r = dict(_ref(i, p, v, given))\n"
        "    {change}\n"
        "    return r\n"
        "STAGE = dataclasses.replace(STAGE, reference=_liar)\n")


@pytest.mark.parametrize(("change", "why"), [
    ("r['q'] = r['q'].astype('float64')", "reference output q is float64[2, 9], declared "
                                          "int32[2, 9]"),
    ("r['q'] = r['q'][:, :3]", "reference output q is int32[2, 3], declared int32[2, 9]"),
    ("r['vth'] = r['vth'] * float('nan')", "reference output vth has 2 NaN value(s) of 2"),
])
def test_a_reference_that_lies_is_a_failed_row(quiet_extra: Path, tmp_path: Path,
                                               change: str, why: str) -> None:
    _clone_stage(quiet_extra, "liar", tail=_REF.format(change=change))
    res = runner.invoke(app, ["bench", "liar", "--backend", "numpy", "--sweep", "batch=2",
                              "--sweep", "in_f=9", "--out", str(tmp_path)])
    assert res.exit_code == 1, res.output
    row = results.read_rows(tmp_path / "liar.csv")[0]
    assert (row["status"], row["reason"]) == ("failed", f"plugin liar: {why}")


@pytest.mark.parametrize(("make", "why"), [
    ("x.astype('float64')", "input x is float64[2, 9], declared float32[2, 9]"),
    ("x[:, :5].copy()", "input x is float32[2, 5], declared float32[2, 9]"),
    ("x.tolist()", "input x is a list, not a NumPy array"),
])
def test_inputs_unlike_their_declaration_are_a_failed_row(quiet_extra: Path, tmp_path: Path,
                                                          make: str, why: str) -> None:
    _clone_stage(quiet_extra, "odd", tail=(
        "_mk0 = STAGE.make_inputs\n"
        "def _odd(rng, fam, p):\n"
        "    x = _mk0(rng, fam, p)['x']\n"
        f"    return {{'x': {make}}}\n"
        "STAGE = dataclasses.replace(STAGE, make_inputs=_odd)\n"))
    res = runner.invoke(app, ["bench", "odd", "--backend", "numpy", "--sweep", "batch=2",
                              "--sweep", "in_f=9", "--out", str(tmp_path)])
    assert res.exit_code == 1, res.output
    row = results.read_rows(tmp_path / "odd.csv")[0]
    assert (row["status"], row["reason"]) == ("failed", f"plugin odd: {why}")


@pytest.mark.parametrize("args, said", [
    (["bench", "dynamic_spikes", "--family", "ramp", "--family", "normal"],
     "'--family': given 2 times (--family ramp, --family normal): say it once"),
    (["bench", "dynamic_spikes", "--out=a", "--budget", "1", "--out", "b"],
     "'--out': given 2 times (--out=a, --out b): say it once"),
    (["bench", "dynamic_spikes", "--verify", "--no-verify"],
     "'--verify': given 2 times (--verify, --no-verify): say it once"),
    (["validate", "dynamic_spikes", "--seeds", "1", "--seeds", "2"],
     "'--seeds': given 2 times"),
])
def test_an_option_of_one_value_given_twice_is_refused(args: list[str], said: str) -> None:
    """click keeps the last of an option given twice in silence: the run would measure one
    family while the command line, and the row's command, say two."""
    only_line(runner.invoke(app, args), said)
    assert f" {args[0]} --help')" in runner.invoke(app, args).stderr  # the command's help


def test_an_option_given_once_with_a_value_that_looks_like_one_is_taken() -> None:
    """The word after an option that takes a value is that value, even where it reads as an
    option (``--out --family`` names a folder called --family): only options count."""
    from harness.front import terminal
    from harness.front.cli import app as the_app

    cmd = typer.main.get_command(the_app).commands["bench"]  # type: ignore[attr-defined]
    terminal.given_once(cmd, ["--out", "--family", "--family", "x", "--sweep", "a=1",
                              "--sweep", "b=2", "--", "--family", "y"])
    # A repeatable option's value is a value too; a positional word named as a parameter
    # (bench's stages) is no option.
    terminal.given_once(cmd, ["stages", "--sweep", "--budget", "--budget", "1"])
    with pytest.raises(typer.BadParameter):
        terminal.given_once(cmd, ["--out", "--family", "--family", "x", "--family", "y"])


@pytest.mark.parametrize("args", [["compare", "old", "new"], ["fit", "csv", "--axis", "batch"],
                                  ["report", "folders"], ["run", "name"]])
def test_a_positional_word_named_as_a_parameter_is_no_option(tmp_path: Path,
                                                             args: list[str]) -> None:
    """``harness compare old new`` on files called old and new: the parameters' own names
    are words like any other, not options (nor a traceback)."""
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = runner.invoke(app, args)
    finally:
        os.chdir(cwd)
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "given 2 times" not in res.output


def test_stamp_outside_a_checkout_is_one_line(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import paths

    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    only_line(runner.invoke(app, ["stamp"]), "not a git checkout with a commit")


def test_stamp_that_cannot_be_written_is_one_line(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from tests.gitrepo import one_kernel_project

    if shutil.which("git") is None:
        pytest.skip("no git here")
    one_kernel_project(tmp_path, monkeypatch)
    only_line(runner.invoke(app, ["stamp", "--out", str(tmp_path / "no" / "f")]),
              "cannot write")
