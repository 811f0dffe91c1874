"""What a command acts on: its targets (stages and pipelines, by name), their variants, the
option values that apply to them, and the input families they accept.

A *target* is a :class:`Stage` or a :class:`Pipeline`: the engine validates and times both
through the same loops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.contract.registry import Registry, named_once
from harness.contract.stage import Axis, Pipeline, Stage, Variant
from harness.errors import BadInput

#: A stage or a pipeline.
Target = Stage | Pipeline


@dataclass(frozen=True)
class Targets:
    """The stages and pipelines a command acts on."""

    stages: list[Stage]
    pipelines: list[Pipeline]

    @property
    def all(self) -> list[Target]:
        """Stages first, then pipelines (the order rows are measured in)."""
        return [*self.stages, *self.pipelines]


def resolve(reg: Registry, names: Sequence[str] | None, with_pipelines: bool) -> Targets:
    """Named stages and pipelines; none named: every stage, and every pipeline if asked.
    A name given twice is BadInput."""
    if not names:
        pipes = [reg.pipelines[n] for n in sorted(reg.pipelines)] if with_pipelines else []
        return Targets(reg.select(None), pipes)
    named_once("stage", names)
    stages, pipes = [], []
    for n in names:
        if n in reg.pipelines:
            pipes.append(reg.pipelines[n])
        elif n in reg.stages or any(p.plugin == n for p in reg.problems):
            stages.append(reg.get(n))  # (a plugin that failed to load: its own error)
        else:  # every name the command takes, pipelines with the stages
            raise BadInput(f"unknown stage or pipeline {n!r} (stages: "
                           f"{', '.join(sorted(reg.stages)) or 'none'}; pipelines: "
                           f"{', '.join(sorted(reg.pipelines)) or 'none'})")
    return Targets(stages, pipes)


def options(**values: Any) -> dict[str, str]:
    """The ``--mode/--k/--group-size`` values given (None means not given), as text."""
    return {k: str(v) for k, v in values.items() if v is not None}


def flag(axis: str) -> str:
    """The command-line option that sets ``axis``: ``group_size`` -> ``--group-size``."""
    return "--" + axis.replace("_", "-")


def check_options(targets: Sequence[Target], options: Mapping[str, str]) -> None:
    """BadInput when an option sets an axis that no chosen target has (as a ``--sweep`` of
    such an axis is): ``--k`` for a weight stage would otherwise be dropped in silence.
    Where several targets are chosen, each option applies to those that have the axis."""
    for key in options:
        if not targets or any(key in {a.name for a in t.axes} for t in targets):
            continue
        if len(targets) == 1:
            t = targets[0]
            raise BadInput(f"{flag(key)}: {t.name} has no axis {key!r} (axes: "
                           f"{', '.join(a.name for a in t.axes)})")
        raise BadInput(f"{flag(key)}: no selected stage has an axis {key!r}")


def check_families(targets: Sequence[Target], families: Sequence[str]) -> None:
    """BadInput unless every chosen target accepts every family asked for (each target
    declares its own ``families``), each asked for once."""
    named_once("family", families)
    for fam in families:
        lacking = [t for t in targets if fam not in t.families]
        if not lacking:
            continue
        if len(lacking) == len(targets):
            known = dict.fromkeys(f for t in targets for f in t.families)
            raise BadInput(f"unknown input family {fam!r} (known: {', '.join(known)})")
        t = lacking[0]
        raise BadInput(f"{t.name} has no input family {fam!r} (its families: "
                       f"{', '.join(t.families)})")


def select_variants(st: Target, names: Sequence[str] | None,
                    options: Mapping[str, str]) -> list[Variant]:
    """The variants named (or the default, or all); options that match pins filter them."""
    if names and "all" in names and len(names) > 1 and "all" not in \
            {v.name for v in st.variants}:
        raise BadInput("--variant all stands alone: it names every variant")
    if names and list(names) == ["all"]:
        chosen = list(st.variants)
    elif names:
        named_once(f"{st.name}: variant", names)
        chosen = []
        for name in names:
            try:
                chosen.append(st.variant(name))
            except KeyError:
                known = ", ".join(v.name for v in st.variants)
                raise BadInput(f"{_kind(st)} {st.name} has no variant {name!r} "
                               f"(variants: {known})") from None
    else:
        chosen = list(st.variants)
        if not any(pinned(v, key) is not None for v in chosen for key in options):
            return chosen[:1]
    for key, val in options.items():
        if any(pinned(v, key) is not None for v in chosen):
            wanted = pin_values(st, key, [val])
            chosen = [v for v in chosen if pinned(v, key) in wanted]
            if not chosen:
                known = ", ".join(dict.fromkeys(str(pinned(v, key)) for v in st.variants))
                raise BadInput(f"{_kind(st)} {st.name} has no variant with {key}={val} "
                               f"(known: {known})")
    return chosen


def pinned(v: Variant, key: str) -> str | None:
    """The value ``v`` pins axis ``key`` to, as text; None where it leaves the axis free."""
    pins = dict(v.pins)
    return str(pins[key]) if key in pins else None


def pin_values(t: Target, key: str, texts: Sequence[Any]) -> set[str]:
    """The values ``texts`` give axis ``key`` of ``t``, parsed as the axis parses them and
    written as a pin is (:func:`pinned`), so that an option or a sweep chooses the variants
    that pin them; one that does not parse is bad input."""
    try:
        return {str(t.axis(key).parse(str(text))) for text in texts}
    except ValueError as exc:
        raise BadInput(f"{t.name}: {exc}") from None


def _kind(t: Target) -> str:
    """What ``t`` is called in a message: a stage or a pipeline."""
    return "pipeline" if isinstance(t, Pipeline) else "stage"


def fixed_axes(axes: Sequence[Axis], options: Mapping[str, str],
               variant: Variant) -> dict[str, str]:
    """The option values for the axes a target has and ``variant`` does not pin, as text
    (what a sweep holds fixed)."""
    names = {a.name for a in axes}
    pins = dict(variant.pins)
    return {k: v for k, v in options.items() if k in names and k not in pins}


def parsed_options(axes: Sequence[Axis], options: Mapping[str, str],
                   variant: Variant) -> dict[str, Any]:
    """``fixed_axes``, parsed: what replaces those axes in every validation case."""
    out = {}
    by_name = {a.name: a for a in axes}
    for k, text in fixed_axes(axes, options, variant).items():
        try:
            out[k] = by_name[k].parse(text)
        except ValueError as exc:
            raise BadInput(str(exc)) from exc
    return out
