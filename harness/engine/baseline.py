"""A stage's kernel as it was, timed beside the current one (``harness bench --against``).

Rows measured in different processes or machine sessions carry more than their own noise:
on the H200 an unchanged kernel measured 4-6 % apart from one session to the next, as much
as many kernel changes are worth. So an A/B of a kernel edit is read in one process: the
earlier source is built from a folder holding the ``kernels/`` tree of another revision
(a folder, or a git revision exported into one) and every chosen variant gets a twin,
``<variant>@<label>``, built from it and measured beside it, rotated with ``--repeats``
and checked against the same reference. Its row's ``kernel_hash`` is the earlier
source's.

The current plugin launches both builds, so each entry point must take the same
parameters in both; that is checked before anything runs (``nvcc -ptx`` of each, no GPU
needed), and a kernel whose launch changed is refused rather than launched with the wrong
arguments.
"""

from __future__ import annotations

import atexit
import dataclasses
import io
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

from harness.contract.kernel import entry_params
from harness.contract.stage import Stage, Variant
from harness.engine.jobs import Job
from harness.errors import BadInput, HarnessError

#: A label as it may stand in a variant's name: what a revision or folder name keeps.
_LABEL = re.compile(r"[^\w.-]+")


def kernels_from(spec: str, repo: Path) -> tuple[Path, str]:
    """The folder holding the earlier ``kernels/`` tree, and the label of its rows, for
    ``--against SPEC``: an existing folder (holding ``kernels/``, or being one), else a
    revision of the git checkout ``repo``, whose ``kernels/`` tree is exported into a new
    temporary folder."""
    given = Path(spec)
    if given.is_dir():
        if (given / "kernels").is_dir():
            return given / "kernels", _label(given.resolve().name)
        named = given.resolve()  # a kernels/ folder itself is named by what holds it
        return given, _label(named.parent.name if named.name == "kernels" else named.name)
    if shutil.which("git") is None:
        raise BadInput(f"--against {spec!r}: not a folder, and git is not here to read a "
                       "revision")
    proc = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", spec, "kernels"],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BadInput(f"--against {spec!r}: not a folder, nor a revision with kernels/ in "
                       f"{repo} ({why[-1] if why else 'git archive failed'})")
    dest = Path(tempfile.mkdtemp(prefix="harness-against-"))
    atexit.register(shutil.rmtree, dest, ignore_errors=True)  # the process's own copy
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        # The archive is this checkout's own; the "data" filter where Python has it.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # pragma: no cover - Python before 3.10.12
            tar.extractall(dest)
    return dest / "kernels", _label(spec)


def _label(text: str) -> str:
    """``text`` as a variant-name suffix: runs of other characters become ``-``."""
    label = _LABEL.sub("-", text).strip("-")
    if not label:
        raise BadInput(f"--against {text!r} gives no label for its rows")
    return label


def twin(stage: Stage, kernels: Path) -> Stage:
    """The stage built from ``kernels`` (its ``<name>.cu`` there, its headers from there
    first, then the built-in ``kernels/common``)."""
    if not (kernels / stage.kernel_file).is_file():
        raise BadInput(f"--against: {kernels} has no {stage.kernel_file}")
    return dataclasses.replace(stage, kernel_dir=kernels)


def check_launches(now: Stage, then: Stage, variants: Sequence[Variant],
                   arch: str = "sm_90") -> None:
    """Refuse the earlier build where one of the stage's entry points takes other
    parameters than the current one (the current plugin launches both)."""
    for v in variants:
        try:
            a, b = entry_params(now, v, arch), entry_params(then, v, arch)
        except HarnessError as exc:
            raise BadInput(f"--against: {now.name} [{v.name}]: {exc}") from exc
        for entry in now.entry_points:
            if a.get(entry) != b.get(entry):
                was = "missing" if entry not in b else f"{len(b[entry])} parameters"
                raise BadInput(f"--against: {now.name}'s {entry} takes other parameters in "
                               f"the earlier source ({was}; now {len(a.get(entry, ()))}): "
                               "the current plugin cannot launch it")


def with_twins(jobs: Sequence[Job], kernels: Path, label: str,
               arch: str = "sm_90") -> list[Job]:
    """Each stage job followed by its twin from ``kernels`` (variant ``<name>@<label>``),
    the launches checked first; a pipeline is refused (its steps are the registry's)."""
    if any(j.is_pipeline for j in jobs):
        raise BadInput("--against times a stage's kernel beside its earlier source; a "
                       "pipeline's steps keep the current builds")
    twins: dict[str, Stage] = {}
    for job in jobs:
        st = job.target
        assert isinstance(st, Stage)
        if st.name not in twins:
            twins[st.name] = twin(st, kernels)
            builds = {j.variant.name: j.variant for j in jobs if j.target.name == st.name}
            check_launches(st, twins[st.name], list(builds.values()), arch)
    out: list[Job] = []
    for job in jobs:
        v = dataclasses.replace(job.variant, name=f"{job.variant.name}@{label}")
        out += [job, Job(twins[job.target.name], v, job.point)]
    return out
