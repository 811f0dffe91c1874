"""Planning a sweep: the (target, variant, point) jobs of a ``harness bench`` run.

Stages and pipelines are planned alike: the chosen variants, each at every point of the
sweep (or the target's default sweep), the ``--mode/--k/--group-size`` values held fixed
where the target has the axis and the variant does not pin it. Stages may also be tuned
(``--define``): each variant compiled once per combination of ``-D`` values.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.contract.defines import (
    check_defines,
    one_build,
    parse_defines,
    parse_restrictions,
)
from harness.contract.stage import Pipeline, Stage, Variant
from harness.engine import sweep
from harness.engine.targets import Target, fixed_axes, flag, pin_values, pinned, select_variants
from harness.errors import BadInput


@dataclass(frozen=True)
class Job:
    """One row to measure: a target's variant at a point."""

    target: Target
    variant: Variant
    point: dict[str, Any]
    #: For a build of the kernel's earlier source (``bench --against``): the variant it is
    #: the twin of, whose reference and peers it shares; '' for any other job.
    twin_of: str = ""
    #: Whether the peers are timed with this job. A ``--define`` sweep times them with the
    #: first build of a declared variant at a point alone: they run the declared variant,
    #: the same work for every build, and the builds after it are set against those rows.
    times_peers: bool = True

    @property
    def is_pipeline(self) -> bool:
        """Whether the target is a pipeline (its rows have the pipeline columns)."""
        return isinstance(self.target, Pipeline)

    def as_peers_run_it(self) -> Job:
        """The job a peer runs: a ``--define`` build's declared variant (a peer reads the
        variant's defines, ``ROUNDING_AWAY`` say, and a tuning value is not its to read),
        any other job as it is. Its rows are named after that variant."""
        if not self.variant.tuning or not isinstance(self.target, Stage):
            return self
        return Job(self.target, self.target.variant(self.variant.declared), self.point)

    @property
    def peer_key(self) -> tuple[str, str, str]:
        """What the jobs that share one set of peer rows have in common: the target, the
        declared variant and the point."""
        return self.target.name, self.variant.declared, repr(sorted(self.point.items()))


def plan(targets: Sequence[Target], sweep_specs: Sequence[str],
         variants: Sequence[str] | None = None,
         options: Mapping[str, str] | None = None,
         define_specs: Sequence[str] = (), restrict_specs: Sequence[str] = (),
         dropped: list[str] | None = None) -> list[Job]:
    """Every job of the sweep, the stages' first, then the pipelines'.

    ``variants`` None means each stage's first (default) variant, ``["all"]`` every one;
    a pipeline runs every variant side by side (staged vs fused, say) unless variants are
    named, and then those (a name it lacks is bad input, as for a stage). ``options``
    (``--mode``, ``--k``, ``--group-size``) apply to the targets that have the axis; where
    a stage's variants pin that axis (a compiled-in mode), they choose the variant instead,
    and so does a ``--sweep`` of such an axis (:func:`pinned_by_sweep`).
    ``define_specs`` (``NAME=V1,V2``, ``--define``) compile each chosen stage variant once
    per combination of the values, a tuning sweep over the kernel's ``-D`` parameters;
    ``restrict_specs`` (``--restrict``) leave out the combinations that fail one, their
    build names added to ``dropped`` where given.
    """
    stages = [t for t in targets if isinstance(t, Stage)]
    pipes = [t for t in targets if isinstance(t, Pipeline)]
    opts = dict(options or {})
    grid = sweep.parse(sweep_specs)
    _set_once(grid, opts)
    tuning = parse_defines(define_specs)
    limits = parse_restrictions(restrict_specs)
    if limits and not tuning:
        raise BadInput("--restrict limits the builds of a --define sweep: give --define "
                       "NAME=V1,V2 as well")
    if tuning and pipes:
        raise BadInput("--define tunes a stage's kernel; a pipeline's steps keep their "
                       "declared variants")
    for axis in grid:
        if stages and not any(axis in {a.name for a in st.axes} for st in stages):
            raise BadInput(f"no selected stage has an axis {axis!r}")
    jobs = []
    named = bool(variants) and list(variants or []) != ["all"]
    for st in stages:
        check_defines(st, tuning)
        # Unnamed, a sweep over a pinned axis chooses among all the variants.
        base = select_variants(st, ["all"] if not named and swept_pins(st, grid) else variants,
                               opts)
        chosen = [t for v in pinned_by_sweep(st, base, grid, named) for t in tuned(v, tuning)]
        kept = [v for v in chosen if all(r.holds(v.name, dict(v.defines)) for r in limits)]
        if dropped is not None:
            dropped += [f"{st.name} {v.name}" for v in chosen if v not in kept]
        if limits and not kept:
            raise BadInput(f"--restrict {' --restrict '.join(r.text for r in limits)} leaves "
                           f"none of {st.name}'s {len(chosen)} build(s)")
        built = [Job(st, v, p) for v in kept
                 for p in sweep.points(st, grid, fixed_axes(st.axes, opts, v), v, lenient=True)]
        jobs += point_major(built) if tuning else built
    for pipe in pipes:
        base = select_variants(pipe, variants, opts) if named else list(pipe.variants)
        for v in pinned_by_sweep(pipe, base, grid, named):
            fixed = fixed_axes(pipe.axes, opts, v)
            jobs += [Job(pipe, v, p) for p in sweep.points(pipe, grid, fixed, v)]  # type: ignore[arg-type]
    return jobs


def point_major(built: Sequence[Job]) -> list[Job]:
    """A ``--define`` sweep's jobs with each declared variant's builds side by side at each
    point: one point's builds are timed together, share its draw and reference, and are
    set against one set of peer rows, timed with the first of them (``times_peers``) alone.
    The points keep their order; the builds' order turns by one from a point to the next
    (the variant's j-th point starts with build j), so the build right after the peers, or
    first, is not the same one at every point and an order effect is spread over them."""
    groups: dict[tuple[str, str, str], list[Job]] = {}
    for job in built:
        groups.setdefault(job.peer_key, []).append(job)
    seen: dict[str, int] = {}  # points met so far, by declared variant
    out: list[Job] = []
    for group in groups.values():
        j = seen.get(group[0].variant.declared, 0)
        seen[group[0].variant.declared] = j + 1
        turned = group[j % len(group):] + group[:j % len(group)]
        out += [dataclasses.replace(job, times_peers=i == 0) for i, job in enumerate(turned)]
    return out


def swept_pins(t: Target, grid: Mapping[str, list[str]]) -> list[str]:
    """The swept axes that some variant of ``t`` pins (a compiled-in mode, say)."""
    return [k for k in grid if any(pinned(v, k) is not None for v in t.variants)]


def pinned_by_sweep(t: Target, chosen: Sequence[Variant], grid: Mapping[str, list[str]],
                    named: bool) -> list[Variant]:
    """The variants whose pinned value of every swept axis is among the swept values: a
    sweep over an axis the variants pin chooses variants, as ``--mode`` does, instead of
    being overridden by the pin. A variant named on the command line that the sweep leaves
    out, or a swept value no variant pins, is bad input."""
    out = list(chosen)
    for key in swept_pins(t, grid):
        wanted = pin_values(t, key, grid[key])
        pins = {p for v in t.variants if (p := pinned(v, key)) is not None}
        if wanted - pins and all(pinned(v, key) is not None for v in out):
            raise BadInput(f"{t.name} has no variant with {key}="
                           f"{','.join(sorted(wanted - pins))} (its variants pin {key} to "
                           f"{', '.join(sorted(pins))})")
        left = [v for v in out if pinned(v, key) in wanted | {None}]
        if named and len(left) < len(out):
            dropped = ", ".join(v.name for v in out if v not in left)
            raise BadInput(f"{t.name}: --sweep {key}={','.join(grid[key])} leaves out the "
                           f"variant(s) named ({dropped}), which pin another {key}")
        out = left
    if not out:
        raise BadInput(f"{t.name}: no variant left for --sweep "
                       f"{' '.join(f'{k}={v}' for k, v in grid.items())} and the options given")
    return out


def tuned(v: Variant, tuning: Mapping[str, list[str]]) -> list[Variant]:
    """``v`` once per combination of the tuning values (:meth:`Variant.tuned`: its defines
    overridden or extended, named after them, ``default[LANES=4]``); ``[v]`` without."""
    if not tuning:
        return [v]
    return [v.tuned(dict(zip(tuning, combo, strict=True)))
            for combo in itertools.product(*tuning.values())]


def one_variant(st: Target, variant: str | None, options: Mapping[str, str],
                define_specs: Sequence[str] = ()) -> Variant:
    """The one build a command that looks at one build takes: the named variant (the first
    by default, or the one the options pin), with ``define_specs`` (``NAME=V``) over it."""
    build = one_build(define_specs)
    check_defines(st, build)
    return select_variants(st, [variant] if variant else None, options)[0].tuned(build)


def _set_once(grid: Mapping[str, Any], options: Mapping[str, str]) -> None:
    """BadInput where an option (``--k``, ``--batch``) and a ``--sweep`` set one axis: the
    option would win in silence."""
    both = [k for k in grid if k in options]
    if both:
        raise BadInput(f"{flag(both[0])} and --sweep {both[0]}=... both set {both[0]}: give one")


def one_point(st: Stage, variant: str | None, options: Mapping[str, str],
              sweep_specs: Sequence[str], define_specs: Sequence[str] = ()) -> Job:
    """The one job ``harness profile`` looks at: the axes' defaults, changed by the options
    and ``AXIS=V`` sweeps of one value; ``define_specs`` (``NAME=V``) compile that build."""
    v = one_variant(st, variant, options, define_specs)
    grid = sweep.parse(sweep_specs)
    _set_once(grid, options)
    pts = sweep.points(st, grid, fixed_axes(st.axes, options, v), v, default_sweep=False)
    if len(pts) != 1:
        raise BadInput(f"harness profile takes one point; the options give {len(pts)}")
    return Job(st, v, pts[0])
