"""A stage's kernel as it was, timed beside the current one (``harness bench --against``).

Rows measured in different processes or machine sessions carry more than their own noise:
on the H200 an unchanged kernel measured about 6 % apart from one session to the next
(kernels/NOTES.md), as much as many kernel changes are worth. So an A/B of a kernel edit is
read in one process: the earlier source is built from a folder holding the ``kernels/``
tree of another revision (a folder, or a git revision exported into one) and every chosen
variant gets a twin, ``<variant>@<label>``, built from it and measured beside it, rotated
with ``--repeats`` and checked against the same reference. Its row's ``kernel_hash`` is the
earlier source's.

The current plugin launches both builds, so each entry point must take the same
parameters in both: their number and PTX types are compared before anything runs (``nvcc
-ptx`` of each, no GPU needed), and a kernel whose launch changed so is refused rather than
launched with the wrong arguments. A twin shares its variant's reference and peers (the
peers are measured once, beside the variant).
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
    """The folder holding the earlier ``kernels/`` tree (absolute: PyCUDA compiles in a
    folder of its own, where a relative include folder would find nothing and the current
    headers would be used instead), and the label of its rows, for ``--against SPEC``: an
    existing folder (holding ``kernels/``, or being one), named by its name; else a revision
    of the git checkout that holds ``repo``, named by its short commit, whose ``kernels/``
    tree is exported into a new temporary folder (removed when the process ends)."""
    if not spec.strip():
        raise BadInput("--against '': give a git revision or a folder")
    given = Path(spec)
    if given.is_dir():
        root = (given / "kernels" if (given / "kernels").is_dir() else given).resolve()
        named = root.parent if root.name == "kernels" else root  # kernels/ by its holder
        return root, _label(named.name)
    if shutil.which("git") is None:
        raise BadInput(f"--against {spec!r}: not a folder, and git is not here to read a "
                       "revision")
    # Run at the checkout's top, wherever in it ``repo`` lies (git archive of a tree
    # narrows to the folder it is run in).
    top = subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True, check=False).stdout.strip() or repo
    rev = subprocess.run(["git", "-C", str(top), "rev-parse", "--verify", "--quiet",
                          "--short", f"{spec}^{{commit}}"],
                         capture_output=True, text=True, check=False)
    proc = subprocess.run(["git", "-C", str(top), "archive", "--format=tar",
                           "--prefix=kernels/", f"{spec}:kernels"],
                          capture_output=True, check=False)
    if rev.returncode != 0 or proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BadInput(f"--against {spec!r}: not a folder, nor a revision with kernels/ in "
                       f"{repo} ({why[-1] if why else 'git knows no such commit'})")
    dest = Path(tempfile.mkdtemp(prefix="harness-against-"))
    atexit.register(shutil.rmtree, dest, ignore_errors=True)  # the process's own copy
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        # The archive is this checkout's own; the "data" filter where Python has it.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # pragma: no cover - Python before 3.10.12
            tar.extractall(dest)
    return dest / "kernels", _label(rev.stdout.strip())


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


def check_launches(now: Stage, then: Stage, variants: Sequence[Variant]) -> None:
    """Refuse the earlier build where one of the stage's entry points takes other
    parameters than the current one (the current plugin launches both): their number and
    their PTX types (a pointer is a 64-bit word there, so what it points to is not
    compared)."""
    for v in variants:
        try:
            a, b = entry_params(now, v), entry_params(then, v)
        except HarnessError as exc:
            raise BadInput(f"--against: {now.name} [{v.name}]: {exc}") from exc
        for entry in now.entry_points:
            if a.get(entry) != b.get(entry):
                was = "missing" if entry not in b else f"{len(b[entry])} parameters"
                raise BadInput(f"--against: {now.name}'s {entry} takes other parameters in "
                               f"the earlier source ({was}; now {len(a.get(entry, ()))}): "
                               "the current plugin cannot launch it")


def with_twins(jobs: Sequence[Job], kernels: Path, label: str) -> list[Job]:
    """Each stage job followed by its twin from ``kernels`` (variant ``<name>@<label>``,
    ``twin_of`` its variant), the launches checked first; a pipeline is refused (its steps
    are the registry's)."""
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
            check_launches(st, twins[st.name], list(builds.values()))
    out: list[Job] = []
    for job in jobs:
        # Its declared variant stays its variant's: judged against the same answer.
        v = dataclasses.replace(job.variant, name=f"{job.variant.name}@{label}",
                                base=job.variant.declared)
        out += [job, Job(twins[job.target.name], v, job.point, twin_of=job.variant.name)]
    return out
