"""``--define`` specs: a kernel's ``-D`` parameters given on a command line, as a tuning
sweep (``NAME=V1,V2``) or as one build (``NAME=V``); read the same way by ``bench``,
``profile``, ``sass`` and the child process the external tools watch."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.errors import BadInput

_DEFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.+)$")


def parse_defines(specs: Sequence[str]) -> dict[str, list[str]]:
    """``["UNROLL=2,4"]`` -> ``{"UNROLL": ["2", "4"]}``; BadInput on a malformed spec."""
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
