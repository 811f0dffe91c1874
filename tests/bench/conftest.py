"""The event-timed benchmarks' provenance: a saved run names the commit its rows came from."""

from __future__ import annotations

from typing import Any

import pytest

from harness.results.provenance import sent_sha


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_commit_info(config: pytest.Config, commit_info: dict[str, Any]) -> None:
    """The commit HARNESS_GIT_SHA names, where it is set, in place of what git says: on the
    GPU machine the tree arrives as files whose git need not be the one they came from,
    while every result row
    already takes its commit from HARNESS_GIT_SHA. The fields git gave of its own commit
    (time, dirty) are dropped rather than kept beside another commit's id: whether that
    tree differed from the commit named is for the run's logs to say. The saved file's
    name is another matter: ``--benchmark-save=NAME`` sets it (gpu-check saves as the
    commit); ``--benchmark-autosave`` names it from git, which this hook does not reach."""
    if sha := sent_sha():
        for key in ("time", "author_time", "dirty"):
            commit_info.pop(key, None)
        commit_info.update(id=sha, id_from="HARNESS_GIT_SHA")
