"""``scripts/stage-cutlass-wheel.py``: the wheel it stages installs offline as the same
``nvidia-cutlass`` version, with the headers int_gemm includes."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from harness import paths
from harness.contract.kernel import HEADER_LIBRARIES

SCRIPT = paths.project_root() / "scripts" / "stage-cutlass-wheel.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=300)


def test_the_staged_wheel_installs_offline_with_the_headers(tmp_path: Path) -> None:
    try:
        version = metadata.version("nvidia-cutlass")
    except metadata.PackageNotFoundError:
        pytest.skip("nvidia-cutlass is not installed here (the cutlass or test extra)")
    stale = tmp_path / "whl" / "nvidia_cutlass-0.0.1-py3-none-any.whl"
    stale.parent.mkdir()
    stale.write_bytes(b"an older version's wheel")
    res = _run(str(tmp_path / "whl"))
    assert res.returncode == 0, res.stderr
    wheels = list((tmp_path / "whl").glob("*.whl"))
    assert [w.name for w in wheels] == [f"nvidia_cutlass-{version}-py3-none-any.whl"]
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--target", str(site), str(wheels[0])], check=True, capture_output=True,
                   timeout=300)
    # The same version, read from the installed copy alone.
    found = [d.version for d in metadata.distributions(path=[str(site)])
             if d.metadata["Name"] == "nvidia-cutlass"]
    assert found == [version]
    _, module, sub = HEADER_LIBRARIES["cutlass"]
    include = site.joinpath(module, *sub)
    assert (include / "cute" / "tensor.hpp").is_file()
    assert (include / "cutlass" / "cutlass.h").is_file()


def test_bad_usage_is_one_line_and_exit_2() -> None:
    res = _run("a", "b")
    assert res.returncode == 2 and res.stderr.strip().startswith("usage:")
