"""``scripts/drain.py``: its point parsing, the median's error, the rotation of its rounds, and
bad input refused in one line with exit status 2 (the GPU part runs on the device only)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from harness import paths

ROOT = paths.project_root()
SCRIPT = ROOT / "scripts" / "drain.py"


def _module():
    spec = importlib.util.spec_from_file_location("drain", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


drain = _module()


def test_point_parses_whole_numbers_and_refuses_the_rest() -> None:
    assert drain._point("batch=1024, in_f=3584,k=4") == {"batch": 1024, "in_f": 3584, "k": 4}
    for bad in ("batch", "batch=", "batch=1.5", "batch=x", "=5"):
        with pytest.raises(ValueError, match="k=v"):
            drain._point(bad)


def test_spread_is_the_median_and_its_iqr_error() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(10.0, 2.0, 40_000)
    med, err = drain.spread(x)
    assert med == pytest.approx(10.0, abs=0.05)
    assert err == pytest.approx(1.2533 * 2.0 / np.sqrt(x.size), rel=0.05)
    # one wild sample moves neither
    med2, err2 = drain.spread(np.append(x, 1e9))
    assert med2 == pytest.approx(med, abs=0.01) and err2 == pytest.approx(err, rel=0.01)


def test_rounds_rotate_which_form_goes_first_and_keep_each_in_its_column() -> None:
    calls: list[int] = []

    def form(i: int):
        def f() -> SimpleNamespace:
            calls.append(i)
            return SimpleNamespace(us=float(100 * i + len(calls)))
        return f

    t = drain.rounds([form(0), form(1), form(2)], 4)
    assert calls == [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2]
    # each column holds its own form's samples (100 * i + the call's number)
    assert all(int(v) // 100 == i for i in range(3) for v in t[:, i])


@pytest.mark.parametrize("args, says", [
    (["activation_fused", "--point", "batch=x"], "k=v"),
    (["activation_fused", "--variant", "nope", "--point", "batch=1024"], "no variant or axis"),
    (["activation_fused", "--point", "bacth=1024"], "no variant or axis"),
    (["no_such_stage", "--point", "batch=1"], "unknown stage"),
    (["activation_fused", "--point", "batch=1", "--rounds", "2"], "at least 5"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
