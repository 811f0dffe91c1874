"""Every bad input answered with one line naming the problem and exit status 2 (or, inside
a sweep, a CSV row with a status and a reason while the sweep goes on)."""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.contract import registry
from harness.front.cli import app
from harness.results import rows as results

ROOT = Path(__file__).parents[2]
runner = CliRunner()


def one_line(res, text: str, code: int = 2) -> None:  # type: ignore[no-untyped-def]
    assert res.exit_code == code, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("error:") and text in lines[0], lines
    assert "Traceback" not in res.output


@pytest.mark.parametrize("args, text", [
    (["bench", "--sweep", "batch=0"], "batch must be >= 1"),
    (["bench", "--sweep", "in_f=0"], "in_f must be >= 1"),
    (["bench", "dynamic_spikes", "--k", "0"], "k must be >= 1e-30"),
    (["bench", "dynamic_spikes", "--k", "-2"], "k must be >= 1e-30"),
    (["bench", "spike_encode", "--mode", "ternary"], "unknown mode 'ternary'"),
    (["bench", "transform_absmax", "--mode", "ternary"], "unknown mode 'ternary'"),
    (["bench", "spike_encode", "--sweep", "planes=40"], "planes must be <= 31"),
    (["bench", "nope"], "unknown stage 'nope'"),
    (["bench", "--backend", "opencl"], "unknown backend 'opencl'"),
    (["bench", "--family", "zipf"], "unknown input family 'zipf'"),
    (["bench", "--sweep", "batch=1..x"], "bad value"),
    (["bench", "--sweep", "batch"], "bad --sweep 'batch'"),
    (["run", "--family", "zipf"], "unknown input family 'zipf'"),
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
                 inputs_nan: bool = False) -> None:
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
        "                            make_inputs=_mk)\n")


def test_nonfinite_input_is_a_row_with_a_reason(extra: Path, tmp_path: Path) -> None:
    _clone_stage(extra, "nan_spikes", inputs_nan=True)
    res = runner.invoke(app, ["bench", "nan_spikes", "--backend", "numpy", "--sweep",
                              "batch=2", "--sweep", "in_f=9", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    row = results.read_rows(tmp_path / "nan_spikes.csv")[0]
    assert row["status"] == "skipped"
    assert row["reason"] == "bad input: x has 6 non-finite value(s) (6 NaN, 0 inf) of 18"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_kernel_that_does_not_compile(extra: Path) -> None:
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
