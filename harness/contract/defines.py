"""``--define`` specs: a kernel's ``-D`` parameters given on a command line, as a tuning
sweep (``NAME=V1,V2``) or as one build (``NAME=V``); read the same way by ``bench``,
``profile``, ``sass`` and the child process the external tools watch."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from harness.contract.kernel import code_of
from harness.contract.stage import Pipeline, Stage
from harness.errors import BadInput

_DEFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.+)$")


def parse_defines(specs: Sequence[str]) -> dict[str, list[str]]:
    """``["LANES=2,4"]`` -> ``{"LANES": ["2", "4"]}``; BadInput on a malformed spec."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        m = _DEFINE.match(spec.strip())
        values = [v.strip() for v in m.group(2).split(",")] if m else []
        if not m or not all(v and not any(c.isspace() for c in v) for v in values):
            raise BadInput(f"bad --define {spec!r}: expected NAME=V1,V2,... (a C macro name "
                           "and non-empty values)")
        if m.group(1) in out:
            raise BadInput(f"bad --define: {m.group(1)!r} given twice")
        out[m.group(1)] = list(dict.fromkeys(values))
    return out


def one_build(specs: Sequence[str]) -> dict[str, str]:
    """``--define`` specs of one build (``NAME=V``, one value each): ``{"NAME": "V"}``;
    BadInput on a malformed spec or one with several values."""
    tuning = parse_defines(specs)
    several = [f"{k}={','.join(v)}" for k, v in tuning.items() if len(v) > 1]
    if several:
        raise BadInput(f"--define takes one value here (one build): {', '.join(several)}")
    return {k: v[0] for k, v in tuning.items()}


def check_defines(st: Stage | Pipeline, names: Iterable[str]) -> None:
    """BadInput for a ``--define`` name that neither the stage's kernel code (the ``.cu``
    and the headers it includes, comments left out) nor its variants' declared defines (the
    ones a plugin reads back) mention: a misspelt macro compiles the same build under another
    label, and a tuning sweep over it would time one kernel several times."""
    names = list(names)
    if not names or not isinstance(st, Stage):
        return
    text = code_of(st)  # a name only a comment mentions changes no build
    declared = {k for v in st.variants for k, _ in v.defines}
    unread = [n for n in names
              if n not in declared and not re.search(rb"\b" + re.escape(n.encode()) + rb"\b", text)]
    if unread:
        raise BadInput(f"--define {', '.join(unread)}: stage {st.name}'s kernel never reads "
                       f"{'it' if len(unread) == 1 else 'them'} (a misspelt macro would "
                       "build the same kernel under another name)")
