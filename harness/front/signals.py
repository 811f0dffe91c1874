"""SIGTERM handled as Ctrl-C (SIGINT) is: the command stops where it is, by an exception.

A process manager, a CI timeout or ``kill`` sends SIGTERM, whose default action ends the
process at once; raised as an exception instead, it unwinds like Ctrl-C's
``KeyboardInterrupt``: files are closed and their locks released, every finished row is
kept (each was written whole), the CLI says so in one line and exits with the signal's
conventional status, 128 + its number (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwind as Ctrl-C does."""


#: Whether SIGTERM arrived inside the current command: a library (rich's live display,
#: say) may catch the Terminated and raise a plain KeyboardInterrupt in its place, and the
#: exit status must still say SIGTERM.
_terminated = threading.Event()


def _raise(signum: int, frame: FrameType | None) -> None:
    _terminated.set()
    raise Terminated


#: Seconds after a SIGTERM lost in a finalizer before it is sent again.
RESEND_S = 0.01


def _unraisable(hook: object) -> object:
    """``sys.unraisablehook`` that delivers SIGTERM again where it landed in a finalizer (a
    file lock's ``__del__``, say): there its Terminated cannot propagate, and Python would
    print its traceback and go on. Sent again from another thread a moment later (sent at
    once, it would be handled while the hook still runs), it is raised in the main thread's
    code, where it can unwind (or, landing in a finalizer again, sent again)."""

    def deliver(args: object) -> None:
        if isinstance(getattr(args, "exc_value", None), Terminated):
            resend = threading.Timer(RESEND_S, os.kill, (os.getpid(), signal.SIGTERM))
            resend.daemon = True
            resend.start()
            return
        hook(args)  # type: ignore[operator]

    return deliver


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within: SIGTERM raises :class:`Terminated` in the main thread (a handler can only be
    set there; elsewhere nothing changes). The previous handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated.clear()
    previous = signal.signal(signal.SIGTERM, _raise)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable(previous_hook)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        signal.signal(signal.SIGTERM, previous)
        _terminated.clear()


def name(exc: KeyboardInterrupt) -> str:
    """The signal behind an interruption: ``SIGTERM`` or ``SIGINT``."""
    return "SIGTERM" if isinstance(exc, Terminated) or _terminated.is_set() else "SIGINT"


def exit_code(exc: KeyboardInterrupt) -> int:
    """128 + the signal's number: 143 for SIGTERM, 130 for SIGINT (Ctrl-C)."""
    return 128 + (signal.SIGTERM if name(exc) == "SIGTERM" else signal.SIGINT)
