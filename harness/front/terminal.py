"""How the command line answers what it cannot parse: one line on stderr, exit status 2.

typer draws an option-parse error as a usage line, a hint and a boxed panel (four to six
lines); the harness answers every other bad input with one ``error:`` line and exit 2, and
a parse error is bad input like any other. :class:`OneLineErrors` is the ``harness``
command group with that one rule changed; help, ``--version`` and every command run as
typer runs them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

#: The exit status of bad input, parse errors included.
BAD_INPUT = 2


def one_line(exc: typer.TyperException) -> str:
    """A parse error as one line: click's message, whitespace folded, and where the command
    has help, the command that shows it."""
    text = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        text += f" (see '{ctx.command_path} {max(ctx.help_option_names, key=len)}')"
    return text


def given_once(command: Any, args: Sequence[str]) -> None:
    """typer.BadParameter for an option of ``command`` that takes one value (or is a flag)
    given more than once in ``args``: click keeps the last in silence, so ``--family ramp
    --family normal`` would measure ``normal`` while the command line says both. Only the
    command's options count (a positional word is never one, whatever it reads), and the
    word after an option that takes a value is that value, whatever it reads."""
    options = {o: p for p in command.params if p.param_type_name == "option"
               for o in (*p.opts, *p.secondary_opts)}
    said: dict[str, list[str]] = {}
    value_at = -1  # the index of the word that is the last option's value
    for i, a in enumerate(args):
        if a == "--":  # what follows is no option
            break
        if i == value_at or not a.startswith("-"):
            continue
        p = options.get(a.split("=", 1)[0])
        if p is None:
            continue
        takes = not p.is_flag and not getattr(p, "count", False) and "=" not in a
        value_at = i + 1 if takes else -1
        if not p.multiple and not getattr(p, "count", False):
            said.setdefault(p.name, []).append(
                f"{a} {args[i + 1]}" if takes and i + 1 < len(args) else a)
    for given in said.values():
        if len(given) > 1:
            raise typer.BadParameter(f"given {len(given)} times ({', '.join(given)}): say it "
                                     "once", param_hint=f"'{given[0].split()[0].split('=')[0]}'")


class OneLineErrors(TyperGroup):
    """The ``harness`` group: a parse error is one ``error:`` line and exit 2; so is an
    option that takes one value given twice (:func:`given_once`)."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[Any, Any, list[str]]:
        """The subcommand and its arguments, each of its one-value options given once."""
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None:
            try:
                given_once(cmd, rest)
            except typer.BadParameter as exc:  # the command's help, not the group's
                exc.message += f" (see '{ctx.command_path} {name} --help')"
                raise
        return name, cmd, rest

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """Run as typer runs a group, but print parse errors as one line."""
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                              standalone_mode=False, **extra)
        except typer.TyperException as exc:  # typer's click: every parse error
            # ``harness`` alone prints the help (typer has printed it by now): no error line.
            if type(exc).__name__ != "NoArgsIsHelpError":
                Console(stderr=True, highlight=False).print(
                    f"[bold red]error:[/] {escape(one_line(exc))}", soft_wrap=True)
            rv = BAD_INPUT
        except typer.Abort:
            Console(stderr=True, highlight=False).print("aborted", markup=False)
            rv = 1
        if not standalone_mode:
            return rv
        # Outside standalone mode typer returns an Exit's status; a command returns None.
        sys.exit(rv if isinstance(rv, int) else 0)
