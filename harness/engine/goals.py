"""``harness goals``: the declared goals judged from a results folder, each row said to be
timed at its kernel's current source or not, as a Markdown table (and a README block)."""

from __future__ import annotations

from pathlib import Path

from harness.contract.registry import Registry
from harness.engine.kernels import current_hashes
from harness.results import goal_verdicts, goals, report


def report_goals(reg: Registry, folder: Path, path: Path, readme: Path | None = None,
                 block: str = "goals") -> str:
    """The goals of the TOML file ``path`` judged from ``folder``'s rows, as a Markdown
    table, written into ``readme``'s block where given. Bad input (a malformed goals file,
    no such folder, a README without the block) is said before any kernel is hashed."""
    if readme is not None:
        report.check_readme(readme, block)
    declared = goals.load(path)
    goal_verdicts.check_folder(folder)
    text = goal_verdicts.table(goal_verdicts.judge_all(declared, folder, current_hashes(reg)))
    if readme is not None:
        report.update_readme(readme, text, block)
    return text
