"""SIGTERM raised as an interruption, like Ctrl-C; the exit status of each."""

from __future__ import annotations

import os
import signal
import time

import pytest

from harness.front import signals


def test_sigterm_raises_inside_and_not_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(signals.Terminated), signals.sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises first
    assert signal.getsignal(signal.SIGTERM) is before


def test_names_and_exit_codes() -> None:
    assert issubclass(signals.Terminated, KeyboardInterrupt)  # unwinds as Ctrl-C does
    assert (signals.name(signals.Terminated()), signals.exit_code(signals.Terminated())) == \
        ("SIGTERM", 143)
    assert (signals.name(KeyboardInterrupt()), signals.exit_code(KeyboardInterrupt())) == \
        ("SIGINT", 130)
