"""Measuring one job of a sweep, a stage's or a pipeline's, into its CSV row.

Both kinds go the same way: the job's memory estimated first (a job that would not fit is
an ``oom`` row before anything is built: :mod:`harness.engine.memory`); inputs drawn by
``point_rng`` and checked against the stage's declaration (a plugin's mistake is a
``failed`` row); bad input a ``skipped`` row; samples until the noise target or the budget
(``contract.timing.measure``); running out of memory an ``oom`` row, any other error (a
plugin's ``sys.exit`` included) a ``failed`` one; the outputs then checked against the
reference at the row's own size, whole or, at a large point of a target that declares its
rows, on a sample of them (:mod:`harness.engine.rowcheck`), so a fast wrong kernel cannot
produce a number (a wrong answer is a ``failed`` row that keeps its time).
"""

from __future__ import annotations

import dataclasses
import sysconfig
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.contract.backend import Backend, RunResult
from harness.contract.handover import input_problems
from harness.contract.rng import point_rng
from harness.contract.stage import Peer, Pipeline, Stage
from harness.contract.timing import Timing, TimingConfig
from harness.engine import pipeline, rowcheck, rows
from harness.engine.jobs import Job
from harness.engine.memory import GUARD, MemoryGuard, host_available
from harness.engine.validate import input_problem, judge
from harness.errors import HarnessError
from harness.results.provenance import RunMeta
from harness.results.rows import (
    AT_FLOOR,
    NOT_CONVERGED,
    NOT_CONVERGED_CAP,
    drained_note,
    fit_notes,
    fit_reason,
    host_time,
    peer_host_time,
    ungated_note,
)

#: ``verified`` of a peer that is a speed reference, not judged against the reference.
NOT_JUDGED = "not judged"
#: A reason is cut to this many characters (a whole compiler log does not fit a cell).
REASON_CHARS = 500
#: A failed row's reason that keeps time notes stops this much short of REASON_CHARS: room
#: for the prefixes ``--repeats`` and ``harness merge`` put before it ("repeat 2 of 3: ",
#: "process 1 of 3: "), so that they need not cut the failure further (``fit_reason``
#: keeps the notes whole either way).
PREFIX_ROOM = 48
#: Of a failure with time notes beside it, at least this much is kept (the notes give way).
FAILURE_KEPT = 120
#: The reason of a NumPy row of a ``--define`` build: the reference has no -D values.
NUMPY_BUILD = "the NumPy reference: no build of its own"


@dataclass(frozen=True)
class BenchConfig:
    """What every job of a sweep shares."""

    family: str = "normal"
    seed: int = 0
    timing: TimingConfig = field(default_factory=TimingConfig)
    verify: bool = True


def _not_converged(timing: Timing, cfg: TimingConfig) -> str:
    """Why a point's sampling stopped above its noise target: the samples' cap (the
    throttled ones discarded count towards it) or the budget."""
    low = timing.clocks.throttled if timing.clocks is not None and timing.clocks.discarded \
        else 0
    return NOT_CONVERGED_CAP if timing.samples + low >= cfg.max_samples else NOT_CONVERGED


def job_inputs(job: Job, cfg: BenchConfig) -> dict[str, np.ndarray]:
    """The job's inputs: fixed by (seed, target, family, point), as every process draws
    them."""
    rng = point_rng(cfg.seed, job.target.name, cfg.family, job.point)
    return job.target.make_inputs(rng, cfg.family, job.point)


@dataclass
class PointMemo:
    """What the measurements of one point share: with ``harness bench --repeats`` its
    repeats, builds and peers, without it the jobs of the point that follow each other
    (its peers, ours, an ``--against`` twin). Its inputs are drawn once for each (target,
    point) and handed out as copies; its reference outputs are computed once for each
    (target, point, declared variant, rows checked): every ``--define`` build and
    ``--against`` twin of a variant is judged against the same answer. Each is still
    checked against the reference; only the host's drawing and its reference are not done
    again. A reference that reads the kernel's own outputs (``given``: activation_fused's,
    dynamic_spikes') is computed every time.

    What is kept stays within ``limit_bytes`` (default: a quarter of the host memory
    available when the memo is made, or 1 GiB where the system does not say): past it,
    inputs are drawn and references computed each time."""

    limit_bytes: int = -1
    inputs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    references: dict[tuple[Any, ...], dict[str, np.ndarray]] = field(default_factory=dict)
    kept_bytes: int = 0

    def __post_init__(self) -> None:
        if self.limit_bytes < 0:
            room = host_available()
            self.limit_bytes = room // 4 if room is not None else 1 << 30

    def room(self, arrays: Mapping[str, Any]) -> bool:
        """Whether ``arrays`` fit beside what is kept; counts them when they do."""
        n = sum(v.nbytes for v in arrays.values() if isinstance(v, np.ndarray))
        if self.kept_bytes + n > self.limit_bytes:
            return False
        self.kept_bytes += n
        return True

    def job_inputs(self, job: Job, cfg: BenchConfig) -> dict[str, Any]:
        """The job's inputs (:func:`job_inputs`), drawn on the first ask and copied after
        (arrays copied in their own memory layout; anything else handed on as drawn, for
        the plugin checks to judge)."""
        key = point_key(job)
        drawn = self.inputs.get(key)
        if drawn is None:
            drawn = job_inputs(job, cfg)
            if not self.room(drawn):
                return drawn
            self.inputs[key] = drawn
        return {k: np.array(v, copy=True, order="K") if isinstance(v, np.ndarray) else v
                for k, v in drawn.items()}

    def reference_slot(self, job: Job, rows: np.ndarray | None
                       ) -> dict[str, np.ndarray] | None:
        """Where the reference of the job's declared variant at this point and rows is kept
        (empty until the first check fills it): every ``--define`` build of a variant and
        every twin of ``bench --against`` shares it (``validate.judged_as``); None for a
        reference that reads the kernel's outputs."""
        if not isinstance(job.target, Stage) or job.target.reads_outputs:
            return None
        key = (*point_key(job), job.variant.declared, None if rows is None else rows.tobytes())
        return self.references.setdefault(key, {})


def point_key(job: Job) -> tuple[str, str]:
    """A job's target and point, as what is kept for it is filed (and as a sweep groups the
    jobs that follow each other at one point): a twin of ``--against`` shares its
    variant's (its target has the same name)."""
    return job.target.name, repr(sorted(job.point.items()))


def measure(job: Job, backend: Backend, cfg: BenchConfig, meta: RunMeta,
            stages: Mapping[str, Stage] | None = None,
            guard: MemoryGuard = GUARD, memo: PointMemo | None = None) -> dict[str, Any]:
    """Measure one job and return its row; failures become a status, not an exception (a
    pipeline runs through its steps, the registry's ``stages``). ``guard`` refuses a job
    that would not fit in memory, and learns from each job's peak; ``memo`` shares a
    point's inputs and references between its repeats (:class:`PointMemo`)."""
    row = rows.base(job, backend.backend, cfg.family, cfg.timing.l2, meta, stages,
                    cfg.timing.graph)
    if not job.variant.accepts(cfg.family):
        return {**row, "status": "skipped",
                "reason": f"variant {job.variant.name} takes the families "
                          f"{', '.join(job.variant.families)}, not {cfg.family}"}
    peer = _peer(job, backend.backend)
    if peer is not None and peer.skip is not None and (why := peer.skip(job.point)):
        return {**row, "status": "skipped", "reason": f"peer {backend.backend}: {why}"}
    try:
        if (refused := guard.refusal(backend, job.target, job.point)) is not None:
            return {**row, "status": "oom", "reason": refused[:REASON_CHARS]}
        with guard.watch(backend.backend, job.target, job.point):
            return _measure(job, backend, cfg, meta, row, stages, memo)
    except SystemExit as exc:  # a plugin's sys.exit: the sweep goes on without it
        return {**row, "status": "failed",
                "reason": f"the plugin exited (SystemExit: {exc.code!r})"[:REASON_CHARS]}


#: Where installed packages and the standard library live: a frame there is not where the
#: mistake is (numpy raising for a plugin's bad call names numpy's internals).
_LIBRARY_DIRS = tuple(str(Path(p)) for p in {sysconfig.get_paths()["stdlib"],
                                              sysconfig.get_paths()["purelib"],
                                              sysconfig.get_paths()["platlib"]})


def _library(filename: str) -> bool:
    """Whether a frame's file is a library's (installed, the standard library's, or code
    with no file of its own such as numpy's ``<__array_function__ internals>``)."""
    return (filename.startswith(_LIBRARY_DIRS) or filename.startswith("<")
            or "site-packages" in filename or "dist-packages" in filename)


def raised_at(exc: BaseException) -> str:
    """Where an unexpected exception was raised, `` at file.py:12 in name``: the innermost
    frame of the project's code, not of a library it called (a plugin's ``make_inputs`` or
    ``reference``, say), so a row's one-line reason says whose mistake it was; '' without
    a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if not _library(f.filename)]
    if not (ours or frames):
        return ""
    at = (ours or frames)[-1]
    return f" at {Path(at.filename).name}:{at.lineno} in {at.name}"


def _measure(job: Job, backend: Backend, cfg: BenchConfig, meta: RunMeta,
             row: dict[str, Any], stages: Mapping[str, Stage] | None,
             memo: PointMemo | None = None) -> dict[str, Any]:
    try:
        inputs = memo.job_inputs(job, cfg) if memo is not None else job_inputs(job, cfg)
        if isinstance(job.target, Stage) and \
                (wrong := input_problems(job.target, inputs, job.point)):
            return {**row, "status": "failed",
                    "reason": f"plugin {job.target.name}: {'; '.join(wrong)}"[:REASON_CHARS]}
        if (bad := input_problem(job.target, inputs, job.point)) is not None:
            return {**row, "status": "skipped", "reason": bad}
        # A stage's inputs are judged as they were before the run (an in-place kernel
        # changes them); a pipeline runs on device copies and is judged on the host's.
        pristine = {k: v.copy() for k, v in inputs.items()} \
            if cfg.verify and not job.is_pipeline else inputs
        got: pipeline.PipelineRun | RunResult
        if isinstance(job.target, Pipeline) and _peer(job, backend.backend) is not None:
            # A pipeline's peer is one PyTorch call, timed as the pipeline is: stream
            # launches (a pipeline's run is never a graph replay here), the same sampler.
            got, timing = backend.time(job.target, job.variant, inputs, job.point,
                                       dataclasses.replace(cfg.timing, graph=False))
        elif isinstance(job.target, Pipeline):
            got = pipeline.sample(backend, job.target, stages or {}, inputs, job.point,
                                  cfg.timing)
            timing = got.total
        else:
            got, timing = backend.time(job.target, job.variant, inputs, job.point,
                                       cfg.timing)
    except HarnessError as exc:
        return {**row, "status": "failed", "reason": str(exc)[:REASON_CHARS]}
    except Exception as exc:
        if isinstance(exc, MemoryError) or backend.is_oom(exc):
            return {**row, "status": "oom", "reason": f"out of memory: {exc}"[:REASON_CHARS]}
        return {**row, "status": "failed",
                "reason": f"{type(exc).__name__}{raised_at(exc)}: {exc}"[:REASON_CHARS]}
    reasons = [] if timing.converged else [_not_converged(timing, cfg.timing)]
    if timing.converged and timing.noise_pct >= cfg.timing.target_noise_pct:
        reasons.append(AT_FLOOR)
    if backend.backend == "numpy" and job.variant.tuning:  # a build's name on no build
        reasons.append(f"{NUMPY_BUILD}: {job.variant.name} is timed as "
                       f"{job.variant.declared}")
    if timing.clocks is not None and timing.clocks.throttled:
        reasons.append(timing.clocks.note())
    if timing.ungated:
        reasons.append(ungated_note(timing.ungated, timing.samples))
    if timing.taken_off_us:
        reasons.append(drained_note(timing.taken_off_us))
    bad_outputs: list[str] = []
    peer = _peer(job, backend.backend)
    if peer is not None and not peer.judged:
        row["verified"] = NOT_JUDGED
        reasons.append(f"{NOT_JUDGED} against the reference: {peer.note}")
    elif cfg.verify and backend.backend != "numpy":
        idx = rowcheck.chosen(job.target, job.point, pristine, got.outputs, _rows_rng(job, cfg))
        try:
            bad_outputs = _wrong(job, pristine, got, idx, memo)
            row["verified"] = "no" if bad_outputs else \
                rowcheck.label(job.target.rows, job.point, idx)
        except MemoryError:  # the host could not hold the reference: nothing was checked
            return {**row, "status": "oom",
                    "reason": "out of host memory checking the outputs (the reference at "
                              "this size): the time was not kept"[:REASON_CHARS]}
        except Exception as exc:  # the plugin's reference or check: nothing was checked
            bad_outputs = [f"checking the outputs raised {type(exc).__name__}: {exc}"]
    # A wrong answer is a failed row; its time stays beside it (a peer that is fast but
    # wrong is worth seeing), and no speedup is ever computed against it. What is known of
    # that time (not converged, throttled, host time inside) stays with it too: the
    # failure first, cut to leave them room.
    status, reason = ("failed", _failed_reason(bad_outputs[0], reasons)) if bad_outputs \
        else ("ok", "; ".join(reasons))
    if isinstance(got, pipeline.PipelineRun):
        return {**row, "status": status, "reason": reason, **rows.pipeline_timed(got.timing)}
    if isinstance(job.target, Pipeline):  # a pipeline's peer: its one interval, the total
        return {**row, "status": status, "reason": reason, **rows.pipeline_peer_timed(timing)}
    assert isinstance(job.target, Stage)
    return {**row, "status": status, "reason": reason,
            **rows.stage_timed(row, job.target, job.point, timing,
                               got.outputs if status == "ok" else None, meta)}


def _failed_reason(failure: str, notes: list[str], limit: int | None = None) -> str:
    """A failed row's reason: the failure, then the notes on its kept time, within ``limit``
    (default :data:`REASON_CHARS` less :data:`PREFIX_ROOM`; without notes the failure alone,
    within :data:`REASON_CHARS`, as any failed row's). The failure's tail, its list
    of examples, is cut first; where the notes alone would crowd it out, the failure keeps
    its first :data:`FAILURE_KEPT` characters and the notes are cut at their end."""
    if not notes:  # nothing to keep past a prefix: the failure as every failed row has it
        return failure[:REASON_CHARS]
    limit = REASON_CHARS - PREFIX_ROOM if limit is None else limit
    if not failure:
        return "; ".join(notes)[:limit]
    return fit_notes(failure, notes, limit, FAILURE_KEPT)


def _peer(job: Job, backend: str) -> Peer | None:
    """The stage's or pipeline's named peer that ``backend`` is, if it is one."""
    return job.target.peers.get(backend)


def _rows_rng(job: Job, cfg: BenchConfig) -> np.random.Generator:
    """The generator that picks the rows checked at a large point: fixed by (seed, target,
    family, point) as the inputs' is, and apart from it (``:rows`` cannot end a target's
    name), so the same point checks the same rows whatever its inputs drew."""
    return point_rng(cfg.seed, f"{job.target.name}:rows", cfg.family, job.point)


def _wrong(job: Job, inputs: Mapping[str, np.ndarray], got: pipeline.PipelineRun | RunResult,
           rows: np.ndarray | None = None, memo: PointMemo | None = None) -> list[str]:
    """What is wrong with a run's outputs (an empty list when nothing is); ``rows``: judged
    on those rows alone (:mod:`harness.engine.rowcheck`); ``memo``: where the stage's
    reference here is kept, when it has room for it (:class:`PointMemo`)."""
    if isinstance(got, pipeline.PipelineRun):
        assert isinstance(job.target, Pipeline)
        return _wrong_pipeline(job.target, job.point, inputs, got, rows)
    assert isinstance(job.target, Stage)
    keep = memo.reference_slot(job, rows) if memo is not None else None
    fresh = keep is not None and not keep
    try:
        comps, problems = judge(job.target, job.variant, job.point, inputs, got, rows, keep)
    finally:  # counted, or let go, even where a comparison raised after the slot was filled
        if fresh and keep and memo is not None and not memo.room(keep):
            keep.clear()  # no room: computed again next time
    return list(problems) + [c.describe() for c in comps if not c.ok]


def _wrong_pipeline(pipe: Pipeline, point: Mapping[str, Any], inputs: Mapping[str, np.ndarray],
                    got: pipeline.PipelineRun, rows: np.ndarray | None) -> list[str]:
    """A pipeline's ``check`` on the whole run, or on its inputs, outputs and point cut to
    ``rows`` (the host values whole)."""
    if rows is None or pipe.rows is None:
        checks = pipe.check(inputs, point, got.outputs, got.host)
        return [c.describe() for c in checks if not c.ok]
    part = rowcheck.cut(pipe.rows, point, inputs, got.outputs, rows, pipe.name)
    if part.problems:
        return part.problems
    n = int(point[pipe.rows.axis])
    checks = [rowcheck.relocate(c, pipe.rows, rows, n)
              for c in pipe.check(part.inputs, part.point, part.outputs, got.host)]
    return [c.describe() for c in checks if not c.ok]


def speedup(row: Mapping[str, Any], peer_rows: Sequence[Mapping[str, Any]]) -> float | str:
    """The fastest judged peer's median over ours, among the peers that passed ('' when
    there is nothing to compare): a failed peer, a skipped one and a speed reference that
    is not judged (``verified`` = ``not judged``) are never the baseline."""
    best = _best_peer(peer_rows)
    if row["status"] != "ok" or best is None:
        return ""
    return best["median_us"] / row["median_us"]


def _best_peer(peer_rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The fastest peer row that passed and was judged (None where there is none)."""
    judged = [r for r in peer_rows if r["status"] == "ok" and r.get("verified") != NOT_JUDGED]
    return min(judged, key=lambda r: r["median_us"]) if judged else None


def speedup_note(row: Mapping[str, Any], peer_rows: Sequence[Mapping[str, Any]]) -> str:
    """What ``row``'s :func:`speedup` rests on that neither its time nor its number says:
    the best peer's time can hold host time (its samples timed without the gate: a peer
    that synchronises inside its call); '' when not, or when there is no speedup."""
    best = _best_peer(peer_rows)
    if row["status"] != "ok" or best is None:
        return ""
    said = host_time(best.get("reason"))
    return peer_host_time(best["backend"], said) if said else ""


def with_speedup(row: dict[str, Any], peer_rows: Sequence[Mapping[str, Any]]) -> None:
    """Set ``row``'s ``speedup_vs_best_peer`` over ``peer_rows`` and add to its reason what
    that speedup rests on (:func:`speedup_note`)."""
    row["speedup_vs_best_peer"] = speedup(row, peer_rows)
    note = speedup_note(row, peer_rows)
    if note:  # within the limit, the notes on the time kept whole
        row["reason"] = fit_reason("; ".join(s for s in (row.get("reason") or "", note) if s),
                                   REASON_CHARS)
