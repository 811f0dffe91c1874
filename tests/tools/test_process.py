"""External tools: found on PATH or a one-line error; run to the end or a one-line error."""

from __future__ import annotations

import sys

import pytest

from harness.errors import HarnessError
from harness.tools import process


def test_executable(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("shutil.which", lambda name: f"/opt/bin/{name}")
    assert process.executable("ncu", "not found") == "/opt/bin/ncu"
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(HarnessError, match=r"^ncu not found on PATH$"):
        process.executable("ncu", "not found on PATH")


def test_run_captures_output_and_leaves_the_status_to_the_caller() -> None:
    proc = process.run([sys.executable, "-c", "print('out'); raise SystemExit(3)"], "tool", 60)
    assert (proc.stdout, proc.returncode) == ("out\n", 3)


def test_run_timeout_and_missing_program_are_one_line() -> None:
    with pytest.raises(HarnessError, match=r"^sleeper did not finish in 0 s$"):
        process.run([sys.executable, "-c", "import time; time.sleep(5)"], "sleeper", 0.2)
    with pytest.raises(HarnessError, match=r"^ghost could not be started: "):
        process.run(["/nonexistent/ghost"], "ghost", 5)
