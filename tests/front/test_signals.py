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


def test_a_sigterm_reraised_as_a_plain_interrupt_still_exits_143() -> None:
    """A library that catches the Terminated and raises KeyboardInterrupt instead (as a
    live display may) must not turn SIGTERM's status into Ctrl-C's."""
    import os
    import signal as sig

    from harness.front import signals

    with signals.sigterm_interrupts():
        try:
            try:
                os.kill(os.getpid(), sig.SIGTERM)
                for _ in range(1000):  # the handler runs between bytecodes
                    pass
            except signals.Terminated:
                raise KeyboardInterrupt from None
        except KeyboardInterrupt as exc:
            assert not isinstance(exc, signals.Terminated)
            assert signals.exit_code(exc) == 143 and signals.name(exc) == "SIGTERM"
        else:
            pytest.fail("SIGTERM raised nothing")
    with signals.sigterm_interrupts():
        assert signals.exit_code(KeyboardInterrupt()) == 130


def test_a_sigterm_in_a_finalizer_is_raised_after_it(capfd) -> None:  # type: ignore[no-untyped-def]
    """Where SIGTERM lands inside a ``__del__`` (a file lock's, in a run stopped at its end),
    Python cannot propagate the Terminated and would print its traceback and go on: it is
    delivered again and raised in the code that follows, and no traceback is printed."""
    import gc
    import sys

    class Lock:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, inside the finalizer
                pass

    hook = sys.unraisablehook
    with pytest.raises(signals.Terminated), signals.sigterm_interrupts():
        Lock()
        gc.collect()
        time.sleep(5)  # the signal sent again raises first
    assert sys.unraisablehook is hook
    assert "Traceback" not in capfd.readouterr().err
