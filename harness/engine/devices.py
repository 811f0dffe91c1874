"""Which backend a command runs on: the GPU, or the NumPy references where there is none,
the torch peers beside it, and the provenance its rows carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.contract.backend import Backend
from harness.errors import BadInput, GpuUnavailable
from harness.results import calibration as cal
from harness.results import provenance
from harness.results.provenance import RunMeta

#: ``--backend`` values.
CHOICES = ("auto", "pycuda", "numpy")


def open_gpu(device: int) -> Any:
    """A GpuRunner on ``device`` (the context is created by harness.backends.pycuda.context)."""
    from harness.backends.pycuda.context import Device
    from harness.backends.pycuda.runner import GpuRunner

    return GpuRunner(Device(device))


@dataclass
class Chosen:
    """The backend of a run and the provenance of its rows."""

    runner: Backend
    meta: RunMeta
    #: The GPU's folder name under statistics/ (``cpu`` for the NumPy references).
    slug: str
    #: Why the GPU is not used, or that it is not calibrated ('' when neither).
    note: str = ""

    @property
    def on_gpu(self) -> bool:
        """Whether the runner is the GPU."""
        return self.runner.backend != "numpy"


def choose(backend: str, device: int) -> Chosen:
    """The GPU when there is one (or ``--backend pycuda`` demands it), else the NumPy
    references; ``note`` says why the GPU is not used."""
    from harness.backends.numpy import NumpyRunner

    if backend not in CHOICES:
        raise BadInput(f"unknown backend {backend!r} (known: {', '.join(CHOICES)})")
    cpu_meta = RunMeta(gpu="cpu", git_sha=provenance.git_sha(),
                       command=provenance.command_line())
    if backend == "numpy":
        return Chosen(NumpyRunner(), cpu_meta, "cpu", "backend numpy asked for")
    try:
        runner = open_gpu(device)
    except GpuUnavailable as exc:
        if backend == "pycuda":
            raise
        return Chosen(NumpyRunner(), cpu_meta, "cpu", f"no GPU ({exc})")
    info = runner.device.info
    c = cal.load(info.slug)
    m = RunMeta(info.name, info.driver, info.cuda, provenance.git_sha(),
                provenance.command_line(), c["gbps"] if c else None)
    note = "" if c else f"no calibration for {info.name}: pct_peak left empty " \
                        "(run `harness calibrate`)"
    return Chosen(runner, m, info.slug, note)


def named_peers(targets: Sequence[object]) -> list[str]:
    """The peers the targets name beyond ``torch`` and ``torch_compile`` (``Stage.peers``),
    in the order they first appear."""
    return list(dict.fromkeys(n for t in targets for n in getattr(t, "peers", {})))


def peers(chosen: Chosen, which: str, named: Sequence[str] = ()) -> list[Backend]:
    """The peer backends asked for with ``--peers``: none, all, or names among torch,
    torch_compile and the ``named`` peers of the run's stages (``all``: every one)."""
    from harness.backends.torch import BACKENDS, TorchRunner

    known = (*BACKENDS, *named)
    names = {"none": (), "all": known}.get(which, tuple(which.split(",")))
    for n in names:
        if n in ("none", "all"):  # a list of peers names peers
            raise BadInput(f"--peers {which}: {n} stands alone, not in a list of peers")
        if n not in known:
            raise BadInput(f"unknown peer {n!r} (known: none, all, {', '.join(known)})")
    if names and not chosen.on_gpu:
        raise GpuUnavailable(f"the torch peers are timed on the GPU ({chosen.note})")
    return [TorchRunner(n, chosen.runner, named) for n in names]


def serves(peer: Backend, target: object) -> bool:
    """Whether ``peer`` runs ``target`` (the stage has that peer)."""
    from harness.backends.torch import serves

    return serves(peer.backend, target)


def sm_count(device: int) -> int:
    """The SMs of ``device``, without a CUDA context in this process (the driver's
    attribute): a child process runs the kernels, this one predicts their launches."""
    from harness.backends.pycuda import cudriver

    return cudriver.multiprocessors(device)


def device_meta(device: int) -> RunMeta:
    """The provenance of rows about a child process's run on ``device`` (profiles,
    sanitizer outcomes): the GPU's name (from nvidia-smi: no CUDA context here), the
    commit, this command."""
    from harness.backends.pycuda.context import smi_query

    return RunMeta(gpu=smi_query(device, "name"), git_sha=provenance.git_sha(),
                   command=provenance.command_line())
