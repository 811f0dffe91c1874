"""Errors the library raises; the CLI prints each as one line and exits with its code."""

from __future__ import annotations


class HarnessError(Exception):
    """A problem the user can fix: printed as one line, exit status ``exit_code``."""

    exit_code = 2

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        #: Extra text shown under the one-line message (an nvcc log, say).
        self.detail = detail


class BadInput(HarnessError):
    """Malformed command-line input: a sweep, an unknown stage, a bad option value."""


class PluginError(HarnessError):
    """A plugin that cannot be loaded or is malformed; names the plugin."""


class CompileError(HarnessError):
    """A kernel that does not compile; ``detail`` holds the compiler log."""


class GpuUnavailable(HarnessError):
    """No GPU to run on: pycuda missing, no driver, no device, or a bad device index."""


class ValidationFailed(HarnessError):
    """At least one validation case failed."""

    exit_code = 1


class CheckFailed(HarnessError):
    """A check ran on good input and found a fault (``ledger --check``): exit status 1,
    as a failed validation, where bad input is 2."""

    exit_code = 1


class ContextLost(HarnessError):
    """The device's context died (a sticky CUDA error: an illegal memory access, say), so no
    later job of the process can run: the sweep stops, its finished rows kept. Exit status
    1: a fault found on good input."""

    exit_code = 1
