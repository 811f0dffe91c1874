"""The committed timing rows judged against the validation ledger (``harness ledger --rows
FOLDER``): ``older_rows`` says which were measured at another source than the kernel's
current one, and whether that source passed a validation; ``unjudged_rows`` which ones no
ledger record can speak for (stages or variants this harness lacks, ``--define`` builds,
``bench --against`` twins, rows without a hash); ``unvalidated_rows`` what of them fails
``--check``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.contract.registry import Registry
from harness.engine.kernels import current_hashes
from harness.errors import BadInput
from harness.results import ledger
from harness.results.readback import pipeline_files, read_checked, read_stage_rows


def _require_folder(folder: Path) -> None:
    """BadInput where ``folder`` is not a results folder (a directory)."""
    if not Path(folder).is_dir():
        raise BadInput(f"--rows {folder}: no such results folder")


def _timed_rows(folder: Path) -> list[tuple[dict[str, str], str, tuple[str, str]]]:
    """A results folder's stage and pipeline rows, each with the column that holds its
    kernel hash and its (stage or pipeline, variant); BadInput where there is no folder."""
    _require_folder(folder)
    timed = [(r, "kernel_hash") for r in read_stage_rows(folder)]
    timed += [(r, "kernel_hashes") for f in pipeline_files(Path(folder))
              for r in read_checked(f)]
    # A pipeline file from before pipelines had variants has no variant column: its rows
    # are the one variant there was, "default" (as compare reads them).
    return [(r, column, (r.get("stage", ""),
                         r.get("variant") or ("default" if column == "kernel_hashes" else "")))
            for r, column in timed]


@dataclass(frozen=True)
class UnjudgedRows:
    """A results folder's ``pycuda`` rows that ``older_rows`` cannot judge against the
    ledger, grouped by stage (or pipeline) and variant, and why."""

    stage: str
    variant: str
    rows: int
    why: str

    def describe(self) -> str:
        """One line for the terminal."""
        return f"{self.stage} [{self.variant}]: {self.rows} row(s) not judged: {self.why}"


def unjudged_rows(reg: Registry, folder: Path) -> list[UnjudgedRows]:
    """The folder's ``pycuda`` rows whose source the ledger cannot vouch for either way: of
    a stage or pipeline this harness does not have (an out-of-tree plugin not on
    ``$HARNESS_PLUGIN_PATH``, or one since removed), of a variant it does not have, of a
    ``--define`` build (a tuning sweep's ``int8[IG_X=1]``: the ledger validates the
    declared builds), of another source's twin (``bench --against``'s ``int8@label``), or
    with no kernel hash at all. Listed, so that a check over the folder does not pass them
    unseen. (:func:`judge_rows` gives these and :func:`older_rows`' in one reading.)"""
    return judge_rows(reg, folder)[1]


#: Why a row of ours at a variant the harness has is not judged: it names no kernel hash.
#: Such a row cannot be tied to a validated source, so ``ledger --check --rows`` fails on it.
NO_HASH = "no kernel hash in the row"


def _unjudged_why(key: tuple[str, str], names: set[str], known: bool) -> str:
    """Why a row of (stage, variant) ``key`` is not judged (``known``: the harness has that
    variant, so the row lacks only its hash)."""
    stage, variant = key
    if known:
        return NO_HASH
    if stage not in names:
        return "a stage or pipeline this harness does not have"
    kinds = [k for k, mark in (("a build with --define", "["),
                               ("a build of another source (bench --against)", "@"))
             if mark in variant]
    if kinds:
        return f"{' and '.join(kinds)}, which the ledger does not validate"
    return "a variant this harness does not have"


def unvalidated_rows(older: list[OlderRows], folder: Path,
                     unjudged: Sequence[UnjudgedRows] = ()) -> str | None:
    """What fails ``harness ledger --check --rows FOLDER`` beside the kernels: rows in the
    folder timed at an earlier source that never passed a validation, and rows of ours at
    a variant the harness has that name no kernel hash (no source can vouch for them), or
    None."""
    said = []
    never = [o for o in older if not o.validated]
    if never:
        said.append(f"{sum(o.rows for o in never)} row(s) in {folder} timed at a kernel "
                    "source with no passing GPU validation: "
                    f"{', '.join(f'{o.stage} [{o.variant}]' for o in never)}")
    hashless = [u for u in unjudged if u.why == NO_HASH]
    if hashless:
        said.append(f"{sum(u.rows for u in hashless)} row(s) of ours in {folder} with no "
                    "kernel hash, so no validation can vouch for them: "
                    f"{', '.join(f'{u.stage} [{u.variant}]' for u in hashless)}")
    return "; ".join(said) or None


@dataclass(frozen=True)
class OlderRows:
    """A stage variant's rows in a results folder timed at another kernel source than its
    current one: what they show is of an earlier kernel."""

    stage: str
    variant: str
    row_hash: str
    current_hash: str
    rows: int
    git_shas: tuple[str, ...]
    #: When the ledger records a validation of that earlier source that passed every case
    #: on a GPU (its date), '' where it records none: rows of a source never validated.
    validated: str = ""

    def describe(self) -> str:
        """One line for the terminal."""
        then = (f"; that source passed its validation on {self.validated}" if self.validated
                else "; the ledger records no passing validation of that source")
        return (f"{self.stage} [{self.variant}]: {self.rows} row(s) timed at {self.row_hash} "
                f"(commit {', '.join(self.git_shas) or 'unknown'}), the source is now "
                f"{self.current_hash}{then}")


def older_rows(reg: Registry, folder: Path, ledger_path: Path | None = None
               ) -> list[OlderRows]:
    """The folder's ``pycuda`` rows timed at another source than their variant's current
    one, grouped by stage (or pipeline), variant and hash: a stage row's ``kernel_hash``
    against its variant's, a pipeline row's ``kernel_hashes`` against the pipeline's hash
    (over every kernel its steps build). Rows of ``--define`` builds (``int8[IG_X=1]``),
    of ``bench --against`` twins (``int8@label``), of stages, pipelines or variants the
    harness does not have, or without a hash, are not judged here (:func:`unjudged_rows`
    lists them). Each group says whether the ledger
    (``ledger_path``, default the project's) records a validation of that earlier source
    that passed every case on a GPU at the full seeds (:func:`ledger.full_pass`) over as
    many families as the target has now (a family renamed since is not held against it; a
    run narrowed to fewer is), and when."""
    return judge_rows(reg, folder, ledger_path)[0]


def judge_folders(reg: Registry, folders: Sequence[Path], ledger_path: Path | None = None
                  ) -> list[tuple[Path, list[OlderRows], list[UnjudgedRows]]]:
    """:func:`judge_rows` of each folder, in order, with the kernels hashed once for all
    of them (``harness ledger --rows A --rows B ...``). Every folder is looked for before
    any kernel is hashed, so a missing one is said at once."""
    seen: set[Path] = set()
    for folder in folders:
        _require_folder(folder)
        if (key := Path(folder).resolve()) in seen:
            raise BadInput(f"--rows {folder} given twice")
        seen.add(key)
    current = current_hashes(reg) if folders else {}
    return [(Path(f), *judge_rows(reg, f, ledger_path, current)) for f in folders]


def judge_rows(reg: Registry, folder: Path, ledger_path: Path | None = None,
               current: Mapping[tuple[str, str], str] | None = None
               ) -> tuple[list[OlderRows], list[UnjudgedRows]]:
    """:func:`older_rows` and :func:`unjudged_rows` of one folder from one reading of its
    CSVs and one hashing of the kernels (``harness ledger --rows`` wants both); ``current``:
    the kernels' hashes where the caller has them already (:func:`judge_folders`)."""
    timed = _timed_rows(folder)  # a missing folder said before any kernel is hashed
    if current is None:
        current = current_hashes(reg)
    names = {*reg.stages, *reg.pipelines}
    groups: dict[tuple[str, str, str], list[str]] = {}
    unjudged: dict[tuple[str, str, str], int] = {}
    for r, column, key in timed:
        if r.get("backend") != "pycuda":
            continue
        h = r.get(column, "")
        if key not in current or not h:
            why = _unjudged_why(key, names, key in current)
            unjudged[(*key, why)] = unjudged.get((*key, why), 0) + 1
        elif h != current[key]:
            groups.setdefault((*key, h), []).append(r.get("git_sha", ""))
    rest = [UnjudgedRows(st, v, n, why) for (st, v, why), n in sorted(unjudged.items())]
    # A family renamed since is not held against an earlier record, but a run narrowed to
    # fewer families than the target has is no whole validation (as for the current source).
    families = {**{s.name: len(s.families) for s in reg.stages.values()},
                **{p.name: len(p.families) for p in reg.pipelines.values()}}
    def whole(r: Mapping[str, str]) -> bool:
        ran = {f for f in (r.get("families") or "").split(",") if f}
        return ledger.full_pass(r, ()) and len(ran) >= families[r.get("stage", "")]

    by_source: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in ledger.read(ledger_path) if groups else []:
        key = (r.get("stage", ""), r.get("variant", ""), r.get("kernel_hash", ""))
        if key in groups:
            by_source.setdefault(key, []).append(r)
    passed: dict[tuple[str, str, str], str] = {}
    for key, mine in by_source.items():
        # The first full pass, as when its rows were timed, unless a failure stands since.
        last, failed = ledger.standing(mine, whole)
        if last is not None and failed is None:
            first = next(r for r in mine if whole(r))
            passed[key] = first.get("date", "") or "an unrecorded date"
    older = [OlderRows(st, v, h, current[(st, v)], len(shas),
                       tuple(dict.fromkeys(x for x in shas if x)), passed.get((st, v, h), ""))
             for (st, v, h), shas in sorted(groups.items())]
    return older, rest
