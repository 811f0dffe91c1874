"""A non-editable install carries the built-in plugins and kernels and finds them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to copy the tree")
def test_installed_package_finds_builtin_stages(tmp_path: Path) -> None:
    # Build from a copy of the tracked tree, so the checkout gets no build/ folder.
    src = tmp_path / "src"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(src)],
                   check=True, capture_output=True)
    assert (target / "harness" / "builtin_kernels" / "common" / "reduce.cuh").is_file()
    assert (target / "harness" / "backends" / "pycuda" / "timing.cu").is_file()
    code = ("from harness import paths; from harness.contract import kernel, registry; "
            "r = registry.discover(); "
            "s = r.get('dynamic_spikes'); print(paths.plugins_dir()); "
            "print(kernel.kernel_path(s)); print(sorted(r.stages), r.problems)")
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith(str(target)) and out[1].startswith(str(target))
    assert "'dynamic_spikes'" in out[2] and out[2].endswith(" []")
