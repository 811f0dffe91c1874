"""What a plugin hands over on every run, whatever the backend: the inputs ``make_inputs``
drew and the outputs the reference gave, against the shapes and dtypes the stage declares.
A plugin is code the harness cannot vouch for: what it hands over is checked, not trusted
(what it declares is :mod:`.checks`' to check, when it loads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.contract.stage import Point, Stage


def _describe(a: np.ndarray) -> str:
    return f"{a.dtype}{list(a.shape)}"


def _declared(shape: Sequence[int], dtype: Any) -> str:
    return f"{np.dtype(dtype)}{list(shape)}"


def input_problems(stage: Stage, inputs: Mapping[str, Any], point: Point) -> list[str]:
    """What is wrong with the inputs ``make_inputs`` drew for ``point`` (an empty list when
    nothing is): each must be a NumPy array, of the declared name, shape and dtype where the
    stage declares its ``inputs``; an input an output is written into in place must be of
    that output's shape and dtype, declared or not."""
    problems = [f"input {k} is a {type(a).__name__}, not a NumPy array"
                for k, a in inputs.items() if not isinstance(a, np.ndarray)]
    if problems:
        return problems
    specs = dict(stage.inputs(point)) if stage.inputs is not None else {}
    if stage.inplace:
        outs = stage.outputs(point)
        specs.update({src: outs[out] for out, src in stage.inplace.items()
                      if src not in specs and out in outs})
    if stage.inputs is not None:
        missing = sorted(set(specs) - set(inputs))
        extra = sorted(set(inputs) - set(specs))
        if missing:
            problems.append(f"inputs not drawn: {', '.join(missing)}")
        if extra:
            problems.append(f"inputs not declared: {', '.join(extra)}")
    for name, (shape, dtype) in specs.items():
        a = inputs.get(name)
        if a is not None and (a.shape != tuple(shape) or a.dtype != np.dtype(dtype)):
            problems.append(f"input {name} is {_describe(a)}, declared "
                            f"{_declared(shape, dtype)}")
    return problems


def _fits(ref: np.ndarray, dtype: np.dtype) -> bool:
    """Whether an integer reference's values are all inside ``dtype``'s range."""
    if ref.size == 0 or dtype.kind not in "iu" or ref.dtype.kind not in "iu":
        return True
    info = np.iinfo(dtype)
    return int(ref.min()) >= info.min and int(ref.max()) <= info.max


def reference_problems(stage: Stage, point: Point, ref: Mapping[str, Any]) -> list[str]:
    """What is wrong with the reference's outputs at ``point`` (an empty list when nothing
    is), judged against the declared outputs: each one returned, an array of the declared
    shape (a ``trim`` stage's may have fewer leading planes), of a dtype that casts to the
    declared one within its kind (a float64 reference of a float32 output is fine, a float
    one of an integer output is not) and within its range, and free of NaN. The same check
    for every backend: the one whose result the reference is, and those judged against it.
    """
    if not isinstance(ref, Mapping):  # a bare array: `name in ref` would compare values
        return [f"reference returned a {type(ref).__name__}, not a dict of its outputs by "
                f"name ({', '.join(stage.outputs(point))})"]
    problems = []
    for name, (shape, dtype) in stage.outputs(point).items():
        if name not in ref:
            problems.append(f"reference gave no output {name}")
            continue
        try:
            a = np.asarray(ref[name])
        except Exception as exc:  # a plugin's object that is no array at all
            problems.append(f"reference output {name} is not an array: {exc}")
            continue
        want, shape = np.dtype(dtype), tuple(shape)
        trimmed = (stage.trim is not None and a.ndim == len(shape) and a.ndim > 0
                   and a.shape[0] <= shape[0] and a.shape[1:] == shape[1:])
        same_kind = a.dtype.kind in "biuf" and np.can_cast(a.dtype, want, "same_kind")
        if (a.shape != shape and not trimmed) or not same_kind:
            problems.append(f"reference output {name} is {_describe(a)}, declared "
                            f"{_declared(shape, want)}")
        elif a.dtype.kind == "f" and (nan := int(np.isnan(a).sum())):
            problems.append(f"reference output {name} has {nan} NaN value(s) of {a.size}")
        elif not _fits(a, want):
            problems.append(f"reference output {name} has values beyond {want} "
                            f"({int(a.min())}..{int(a.max())})")
    return problems
