"""How much a cold time leaves out by ending at the kernel's last instruction while its
written lines are still dirty in L2: each point timed three ways, cold (the L2 flushed
before each sample, as ``harness bench`` times it), in rounds of the three:

    kernel      the stage's run between the events, as a row's time;
    kernel+f    the run and then the L2 flush inside the events (the flush's reads evict
                the run's dirty lines, so their write-back is inside the interval);
    f           the flush alone between the events, behind a flush (clean lines only).

The drain of a round is (kernel+f) - f - kernel: the write-back a row's time does not hold.
Its median over the rounds and its standard error (from the IQR) are printed a point a
line, with the three medians. Needs the GPU (PyCUDA); a diagnostic, it writes no results
file.

    python scripts/drain.py STAGE [--variant V] --point k=v,k=v [--point ...] [--rounds N]

Exit status 0; 2 on bad input (one line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: Rounds of the three samples a point by default.
ROUNDS = 300


def _point(text: str) -> dict[str, int]:
    """``k=v,k=v`` as a dict of whole numbers."""
    out: dict[str, int] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"--point {text!r}: expected k=v,k=v with whole numbers")
        out[key.strip()] = int(value)
    return out


def spread(values: np.ndarray) -> tuple[float, float]:
    """The median and its standard error, from the IQR (a normal's 1.349 sigma; the median's
    error sqrt(pi/2) sigma / sqrt(n)), robust to the odd slow sample."""
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    sigma = (q3 - q1) / 1.349
    return float(med), float(1.2533 * sigma / np.sqrt(len(values)))


def rounds(forms: Sequence[Callable[[], Any]], n: int) -> np.ndarray:
    """``n`` rounds of one sample of each form (µs), the order rotated each round so that no
    form is always first after the previous round's last; shape (n, len(forms))."""
    out = np.empty((n, len(forms)))
    for r in range(n):
        for j in range(len(forms)):
            i = (j + r) % len(forms)
            out[r, i] = forms[i]().us
    return out


def measure_point(runner: Any, stage: Any, variant: Any, point: dict[str, Any],
                  n: int) -> dict[str, float]:
    """The three medians and the drain's median and error at one point (µs)."""
    from harness.contract.rng import point_rng

    inputs = stage.make_inputs(point_rng(0, stage.name, "normal", point), "normal", point)
    with runner.bound(stage, variant, inputs, point) as enqueue:
        for _ in range(3):
            enqueue()
        runner.stream.synchronize()

        def with_flush() -> None:
            enqueue()
            runner.prelude.flush()

        forms = [runner.sampler(f, cold=True)
                 for f in (enqueue, with_flush, runner.prelude.flush)]
        t = rounds(forms, n)
    kernel, both, flush = (spread(t[:, i])[0] for i in range(3))
    drain, err = spread(t[:, 1] - t[:, 2] - t[:, 0])
    return {"kernel": kernel, "kernel+f": both, "f": flush, "drain": drain, "err": err}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage")
    ap.add_argument("--variant", default=None)
    ap.add_argument("--point", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    args = ap.parse_args(argv)
    from harness.contract import registry
    from harness.errors import BadInput, GpuUnavailable

    try:
        if args.rounds < 5:
            raise ValueError(f"--rounds {args.rounds}: at least 5")
        points_text = [_point(p) for p in args.point]
        reg = registry.discover(entry_points=False, external=False)
        stage = reg.get(args.stage)
        variant = stage.variant(args.variant) if args.variant else stage.variants[0]
        if not variant.accepts("normal"):
            raise ValueError(f"{stage.name} [{variant.name}] takes no inputs of the family "
                             "'normal', which drain.py draws")
        points = [stage.point(variant, **p) for p in points_text]
    except KeyError as e:
        print(f"drain: {args.stage}: no variant or axis {e}", file=sys.stderr)
        return 2
    except (ValueError, LookupError, BadInput) as e:
        print(f"drain: {e}", file=sys.stderr)
        return 2
    from harness.backends.pycuda.context import Device
    from harness.backends.pycuda.runner import GpuRunner

    try:
        dev = Device(0)
    except GpuUnavailable as e:
        print(f"drain: {e}", file=sys.stderr)
        return 2
    try:
        _measure(GpuRunner(dev), dev, stage, variant, points, args.rounds)
    finally:
        dev.close()
    return 0


def _measure(runner: Any, dev: Any, stage: Any, variant: Any, points: list[Any],
             n: int) -> None:
    """Print the header and a line a point."""
    print(f"# {dev.info.name}, L2 {dev.info.l2_bytes / 2**20:.0f} MiB, "
          f"{n} rounds a point, {stage.name} [{variant.name}]")
    print("point | kernel µs | kernel+flush µs | flush µs | drain µs ± se | drain % of kernel")
    for p in points:
        m = measure_point(runner, stage, variant, p, n)
        at = " ".join(f"{k}={p[k]}" for k in sorted(p))
        print(f"{at} | {m['kernel']:.2f} | {m['kernel+f']:.2f} | {m['f']:.2f} | "
              f"{m['drain']:.2f} ± {m['err']:.2f} | {100 * m['drain'] / m['kernel']:.1f}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
