"""The ``harness`` command line: thin typer commands over the library.

Each command parses its options, calls one library function (which returns data and never
prints), and renders what came back (:mod:`harness.front.render`, and
:mod:`harness.front.render_results` for the commands over result files). A
:class:`harness.errors.HarnessError` becomes one line on stderr and the error's exit status.
The app and what the commands share are in :mod:`harness.front.app`; the commands, by
concern, in kernel_commands (list, check, validate, sass, sanitize, ledger),
measure_commands (bench, run, calibrate, where, stamp, profile) and result_commands (report,
compare, best, fit, merge). Importing them here registers them; ``ORDER`` orders
them.
"""

from __future__ import annotations

from typing import Any

from harness.front import kernel_commands, measure_commands, result_commands
from harness.front.app import app

__all__ = ["app", "main"]
_COMMANDS = (kernel_commands, measure_commands, result_commands)  # registered on import
#: The order ``harness --help`` lists them in: from finding a kernel to reading its rows
#: (a command not named here comes last).
ORDER = ("list", "check", "validate", "bench", "run", "calibrate", "where", "stamp", "profile",
         "sass", "sanitize", "report", "compare", "best", "fit", "merge", "ledger")


def _name(info: Any) -> str:
    return info.name or info.callback.__name__.removesuffix("_cmd").replace("_", "-")


app.registered_commands.sort(
    key=lambda c: ORDER.index(_name(c)) if _name(c) in ORDER else len(ORDER))


def main() -> None:
    """Entry point of the ``harness`` console script."""
    app()


if __name__ == "__main__":
    main()
