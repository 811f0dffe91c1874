"""The random generator of a sweep point's inputs.

Every process that draws a stage's inputs at a point (a bench sweep, the child that ncu and
compute-sanitizer watch) takes its generator from here, so that a row measured by one and a
row profiled by the other, keyed alike, saw the same data.
"""

from __future__ import annotations

import json
import zlib

import numpy as np

from harness.contract.stage import Point


def point_rng(seed: int, name: str, family: str, point: Point) -> np.random.Generator:
    """A generator fixed by (seed, stage, family, point): a bench point's inputs."""
    key = json.dumps(dict(point), sort_keys=True, default=str)
    return np.random.default_rng([seed, zlib.crc32(name.encode()),
                                  zlib.crc32(family.encode()), zlib.crc32(key.encode())])
