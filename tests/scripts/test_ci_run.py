"""``.ci/run``: it runs the README's own commands, and no failure in it is passed over."""

from __future__ import annotations

import re
import subprocess

from harness import paths

ROOT = paths.project_root()


def _readme_commands() -> list[str]:
    """The commands of the README's "Two commands" block, their comments cut."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    test = [c for c in _readme_commands() if c.endswith("pytest")]
    assert test == ["pip install -e '.[test]' && pytest"]
    assert test[0] in ci


def test_no_and_list_of_ci_can_fail_unseen() -> None:
    """Under ``set -e`` a failure before the last ``&&`` of a list does not stop the script:
    every such list stands in a subshell, an ``if`` or ``while``, or ends in ``||``."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci
    bad = []
    for n, line in enumerate(ci.splitlines(), 1):
        code = line.split(" #", 1)[0].strip()
        if "&&" not in code or code.startswith("#"):
            continue
        if re.match(r"^(\(|if |while |\[\[? .*\]\]? \|\|)", code) or "||" in code:
            continue
        bad.append(f"{n}: {line}")
    assert not bad, bad


def test_set_e_passes_over_an_and_list_but_not_a_subshell() -> None:
    """What the rule above guards against, shown in bash itself."""
    run = ["bash", "-c"]
    plain = subprocess.run([*run, "set -euo pipefail; false && true; echo on"],
                           capture_output=True, text=True)
    assert plain.returncode == 0 and plain.stdout == "on\n"
    sub = subprocess.run([*run, "set -euo pipefail; ( false && true ); echo on"],
                         capture_output=True, text=True)
    assert sub.returncode == 1 and sub.stdout == ""
