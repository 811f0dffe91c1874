"""The child process that ncu and compute-sanitizer watch: one stage variant launched on the
GPU at each of its points, on the very inputs a sweep draws there.

    python -m harness.tools.child STAGE --variant V --family F --seed S \\
        --point JSON [--point JSON ...] [--warmup N] [--device D] [--define NAME=V ...]

At each point (a JSON object of the stage's axes) the inputs come from
:func:`harness.contract.rng.point_rng` with the seed, stage, family and point that
``harness bench`` uses, so a profile row keyed like a timing row measured the same data.
``--define`` compiles the variant with those ``-D`` values set over its own, the build a
tuning sweep (``harness bench --define``) names ``V[NAME=V]``.
The stage is launched ``warmup + 1`` times back to back at each point (ncu skips the
warm-up launches by count), then the process exits. :func:`command` writes this command
line and :func:`parse` reads it back; bad arguments are one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from harness.contract.defines import one_build
from harness.contract.registry import Registry, discover
from harness.contract.rng import point_rng
from harness.contract.stage import Point, Stage, Variant
from harness.errors import BadInput, HarnessError

MODULE = "harness.tools.child"


@dataclass(frozen=True)
class Launches:
    """What the child does: ``warmup + 1`` launches of one stage variant at each point, on
    the inputs a sweep of this family and seed draws there, on GPU ``device``."""

    stage: str
    variant: str
    family: str
    seed: int
    points: tuple[dict[str, Any], ...]
    warmup: int = 0
    device: int = 0
    #: ``-D`` values set over the variant's own (a tuning build); empty: as declared.
    defines: tuple[tuple[str, str], ...] = ()


def launches(stage: Stage, variant: Variant, family: str, seed: int,
             points: Sequence[Mapping[str, Any]], warmup: int = 0,
             device: int = 0) -> Launches:
    """The child's job for one build: the variant as its plugin declares it, with a tuning
    run's ``-D`` values (``Variant.tuning``) passed on, so the child compiles that build."""
    return Launches(stage.name, variant.declared, family, seed,
                    tuple(dict(p) for p in points), warmup, device, variant.tuning)


def command(job: Launches, python: str = sys.executable) -> list[str]:
    """The child's command line, for an external tool to run."""
    cmd = [python, "-m", MODULE, job.stage, "--variant", job.variant, "--family", job.family,
           "--seed", str(job.seed)]
    for p in job.points:
        cmd += ["--point", json.dumps(p)]
    cmd += ["--warmup", str(job.warmup), "--device", str(job.device)]
    for k, v in job.defines:
        cmd += ["--define", f"{k}={v}"]
    return cmd


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        raise BadInput(f"{MODULE}: {message}")


def _point(text: str) -> dict[str, Any]:
    try:
        p = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc.msg}): {text!r}") from None
    if not isinstance(p, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object of axes: {text!r}")
    return p


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"negative: {n}")
    return n


def parse(argv: Sequence[str]) -> Launches:
    """The job of a :func:`command` line (its arguments after ``-m harness.tools.child``);
    BadInput in one line when they are malformed."""
    ap = _Parser(prog=f"python -m {MODULE}", add_help=False)
    ap.add_argument("stage")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--family", required=True)
    ap.add_argument("--seed", type=_count, required=True)
    ap.add_argument("--point", type=_point, action="append", required=True)
    ap.add_argument("--warmup", type=_count, default=0)
    ap.add_argument("--device", type=_count, default=0)
    ap.add_argument("--define", action="append", default=[])
    a = ap.parse_args(list(argv))
    return Launches(a.stage, a.variant, a.family, a.seed, tuple(a.point), a.warmup, a.device,
                    tuple(one_build(a.define).items()))


def resolve(job: Launches, reg: Registry) -> tuple[Stage, Variant, list[Point]]:
    """The stage, variant and full points the job names; BadInput when one is unknown."""
    st = reg.get(job.stage)
    try:
        v = st.variant(job.variant)
    except KeyError:
        known = ", ".join(x.name for x in st.variants)
        raise BadInput(f"stage {st.name} has no variant {job.variant!r} (variants: {known})"
                       ) from None
    v = v.tuned(dict(job.defines))
    try:
        points = [st.point(v, **p) for p in job.points]
    except KeyError as exc:
        raise BadInput(f"stage {st.name} has no axis {exc.args[0]} (axes: "
                       f"{', '.join(a.name for a in st.axes)})") from None
    return st, v, points


def inputs(stage: Stage, family: str, seed: int, point: Point) -> dict[str, np.ndarray]:
    """The inputs a sweep draws for the stage at this point (same generator, seed, family)."""
    return stage.make_inputs(point_rng(seed, stage.name, family, point), family, point)


def launch(job: Launches, stage: Stage, variant: Variant, points: Sequence[Point],
           runner: Any) -> None:
    """``warmup + 1`` launches at each point, back to back, on the runner's GPU."""
    for p in points:
        runner.launches(stage, variant, inputs(stage, job.family, job.seed, p), p,
                        job.warmup + 1)


def open_runner(device: int) -> Any:
    """The pycuda backend on GPU ``device`` (GpuUnavailable, one line, when there is none)."""
    from harness.backends.pycuda.context import Device
    from harness.backends.pycuda.runner import GpuRunner

    return GpuRunner(Device(device))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the child; 0 when every launch ran, else the error's status (one line printed)."""
    try:
        job = parse(sys.argv[1:] if argv is None else argv)
        st, v, points = resolve(job, discover())
        launch(job, st, v, points, open_runner(job.device))
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
