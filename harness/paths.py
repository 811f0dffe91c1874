"""Where the built-in plugins, kernels and results live.

In a source checkout (editable install, or ``PYTHONPATH=$PWD``) they are the repository's
top-level ``plugins/``, ``kernels/`` and ``statistics/``; a non-editable install ships
``plugins/`` and ``kernels/`` as ``harness.builtin_plugins`` and ``harness.builtin_kernels``
and writes results under the current directory.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PKG = Path(__file__).resolve().parent
_SRC = _PKG.parent


def _is_checkout() -> bool:
    return (_SRC / "pyproject.toml").is_file() and (_SRC / "plugins").is_dir()


def _installed_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def plugins_dir() -> Path:
    """The folder scanned for built-in plugins."""
    return _SRC / "plugins" if _is_checkout() else _installed_dir("harness.builtin_plugins")


def kernels_dir() -> Path:
    """The folder holding built-in kernels (``*.cu``) and ``common/*.cuh``."""
    return _SRC / "kernels" if _is_checkout() else _installed_dir("harness.builtin_kernels")


def harness_cuda_dir() -> Path:
    """The PyCUDA backend's own CUDA helpers (delay and L2-flush kernels)."""
    return _PKG / "backends" / "pycuda"


def project_root() -> Path:
    """The repository root in a checkout, else the current directory."""
    return _SRC if _is_checkout() else Path.cwd()


def statistics_dir() -> Path:
    """Where results, the calibration and the validation ledger are kept."""
    return project_root() / "statistics"
