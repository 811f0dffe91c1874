"""``--define`` specs: a kernel's ``-D`` parameters given on a command line, as a tuning
sweep (``NAME=V1,V2``) or as one build (``NAME=V``); read the same way by ``bench``,
``profile``, ``sass`` and the child process the external tools watch. ``--restrict``
conditions leave a sweep's builds out that no kernel could be (``BLOCK*UNITS <= 1024``)."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
        # A plugin reads a value back as Python's int() does; and 4 and 04, 16 and 0x10
        # would be one build under two labels.
        for v in out[m.group(1)]:
            if _C_INT.match(v) and not _DECIMAL.fullmatch(v):
                raise BadInput(f"bad --define {spec!r}: write {v} as a plain decimal integer "
                               "(a plugin reads a -D value back in decimal, where C reads "
                               "010 as 8 and 0x10 as 16)")
    return out


#: An integer as C and Python's int() read it alike: no octal 0, no 0x or 0b, no suffix.
_DECIMAL = re.compile(r"[+-]?(0|[1-9][0-9]*)")


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
    chosen = [n for n in names if n in selectors(st)]
    if chosen:
        raise BadInput(f"--define {', '.join(chosen)}: stage {st.name}'s variants are told "
                       f"apart by {'it' if len(chosen) == 1 else 'them'} (the buffers a "
                       "build is given follow its variant): choose --variant instead")
    text = code_of(st)  # a name only a comment mentions changes no build
    declared = {k for v in st.variants for k, _ in v.defines}
    unread = [n for n in names
              if n not in declared and not re.search(rb"\b" + re.escape(n.encode()) + rb"\b", text)]
    if unread:
        raise BadInput(f"--define {', '.join(unread)}: stage {st.name}'s kernel never reads "
                       f"{'it' if len(unread) == 1 else 'them'} (a misspelt macro would "
                       "build the same kernel under another name)")


def selectors(st: Stage) -> set[str]:
    """The defines that go with the axes a variant pins (``LAYOUT`` with ``layout``,
    ``MODE`` with ``mode``, ``PACKED_WIDE`` with ``q_type``): a value that differs between
    two variants that pin different values. The buffers a build is given follow its
    variant's pins, so such a ``--define`` would hand a kernel built for one layout the
    buffers of another. (A define that differs between variants pinning nothing, such as
    ``ROUNDING_AWAY``, changes the answer, not the buffers: the build's check fails it.) A
    tuning default set differently in variants of different pins counts as one too, so a
    stage with one declares its selectors (``Stage.selectors``), which stand as given."""
    if st.selectors is not None:
        return set(st.selectors)
    names = {k for v in st.variants for k, _ in v.defines}
    return {k for v in st.variants for w in st.variants
            if v.pins != w.pins for k in names
            if dict(v.defines).get(k) != dict(w.defines).get(k)}


# -- restrictions of a tuning sweep (``--restrict``) ----------------------------------------
_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.USub: operator.neg,
    ast.UAdd: operator.pos, ast.Not: operator.not_,
}
#: The largest exponent, and base, a restriction's ``**`` takes (sizes, not numbers to
#: compute), and the most syntax nodes a restriction may have: enough for any condition
#: over a few -D values, few enough that nothing it evaluates is large or deep.
_MAX_POW, _MAX_BASE, _MAX_NODES = 64, 2**64, 200
#: A C integer literal as nvcc reads a -D value (hex, binary, octal by a leading 0,
#: decimal; u/l suffixes) and a C floating literal (f/l suffix); nan and inf are not C.
_C_INT = re.compile(r"^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)"
                    r"(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?$")
_C_FLOAT = re.compile(r"^([+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?)"
                      r"[fFlL]?$")


@dataclass(frozen=True)
class Restriction:
    """A condition every build of a tuning sweep must meet (``--restrict 'BLOCK*UNITS <=
    1024'``, Kernel Tuner's restrictions): arithmetic, comparisons, ``and``/``or``/``not``
    over the build's ``-D`` values (numbers where they read as numbers, else text) and
    constants; nothing else is evaluated."""

    text: str
    tree: ast.Expression
    names: frozenset[str]

    def holds(self, build: str, defines: Mapping[str, str]) -> bool:
        """Whether the build with these ``-D`` values meets it; BadInput where a name is not
        one of the build's values or the arithmetic fails (a division by zero)."""
        missing = sorted(self.names - set(defines))
        if missing:
            raise BadInput(f"--restrict {self.text!r}: build {build} has no -D value "
                           f"{', '.join(missing)}")
        values = {k: _number(v) for k, v in defines.items()}
        try:
            return bool(_evaluate(self.tree.body, values))
        except (ArithmeticError, TypeError, ValueError, RecursionError, MemoryError) as exc:
            raise BadInput(f"--restrict {self.text!r} cannot be evaluated for build {build}: "
                           f"{exc}") from None


def parse_restrictions(specs: Sequence[str]) -> list[Restriction]:
    """``--restrict`` expressions, checked for what they may hold; BadInput otherwise."""
    out = []
    for spec in specs:
        try:
            tree = ast.parse(spec.strip(), mode="eval")
        except (SyntaxError, ValueError):
            raise BadInput(f"bad --restrict {spec!r}: not an expression (e.g. "
                           "'BLOCK*UNITS <= 1024')") from None
        except (RecursionError, MemoryError):
            raise BadInput(f"bad --restrict {spec[:40]!r}...: nested too deep") from None
        nodes = list(ast.walk(tree))
        if len(nodes) > _MAX_NODES:
            raise BadInput(f"bad --restrict {spec[:40]!r}...: {len(nodes)} terms, at most "
                           f"{_MAX_NODES}")
        names: set[str] = set()
        for node in nodes:
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif not isinstance(node, (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp,
                                       ast.UnaryOp, ast.Compare, ast.Load, ast.Constant,
                                       *_OPS)) or (isinstance(node, ast.Constant) and
                                                   not isinstance(node.value, (int, float, str))):
                raise BadInput(f"bad --restrict {spec!r}: only -D names, numbers, text, "
                               "arithmetic, comparisons and and/or/not")
        if not names:
            raise BadInput(f"bad --restrict {spec!r}: it names no -D value, so it holds for "
                           "every build or for none")
        out.append(Restriction(spec.strip(), tree, frozenset(names)))
    return out


def _number(text: str) -> int | float | str:
    """A ``-D`` value as a restriction reads it, as C reads it: an integer literal (``0x10``
    16, ``010`` 8, ``256u`` 256), a floating one (``1.5f``), else text."""
    if m := _C_INT.match(text):
        sign, digits = m.group(1), m.group(2)
        base = 16 if digits[:2] in ("0x", "0X") else 2 if digits[:2] in ("0b", "0B") else \
            8 if len(digits) > 1 and digits[0] == "0" else 10
        try:
            value = int(digits[2:] if base in (16, 2) else digits, base)
        except ValueError:  # past Python's digit limit for int(): no -D value of a build
            return text
        return -value if sign == "-" else value
    if m := _C_FLOAT.match(text):
        return float(m.group(1))
    return text


def _evaluate(node: ast.AST, values: Mapping[str, Any]) -> Any:
    """The value of a checked restriction's node (see :func:`parse_restrictions`)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_evaluate(v, values) for v in node.values)
        return any(_evaluate(v, values) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _OPS[type(node.op)](_evaluate(node.operand, values))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, values), _evaluate(node.right, values)
        if isinstance(left, str) or isinstance(right, str):
            raise TypeError("arithmetic on text (a -D value that is not a number)")
        if isinstance(node.op, ast.Pow) and (abs(right) > _MAX_POW or abs(left) > _MAX_BASE):
            raise ValueError(f"a power past (2^64) ** {_MAX_POW}, which no -D value needs")
        return _OPS[type(node.op)](left, right)
    assert isinstance(node, ast.Compare)
    left = _evaluate(node.left, values)
    for op, comp in zip(node.ops, node.comparators, strict=True):
        right = _evaluate(comp, values)
        if not _OPS[type(op)](left, right):
            return False
        left = right
    return True
