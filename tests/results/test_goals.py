"""The goals file: each ``[[goal]]`` a point and one bound, anything else refused in one line
(BadInput, exit 2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.errors import BadInput
from harness.results import goals

ROOT = Path(__file__).parents[2]


def load(tmp_path: Path, text: str) -> list[goals.Goal]:
    """The goals of ``text`` written to a file."""
    p = tmp_path / "goals.toml"
    p.write_text(text, encoding="utf-8")
    return goals.load(p)


def test_a_goal_and_its_defaults(tmp_path: Path) -> None:
    (g,) = load(tmp_path, '[[goal]]\nname = " g "\nfile = "s.csv"\nat_most_us = 5\n'
                'point = { batch = 8, k = 4.0, mode = "m" }\n')
    assert (g.name, g.files, g.bound, g.limit) == ("g", ("s.csv",), "at_most_us", 5.0)
    assert (g.backend, g.launch, g.peer) == ("pycuda", "", "")
    assert g.where() == "batch=8 k=4 mode=m"
    (g,) = load(tmp_path, '[[goal]]\nname = "g"\nfile = ["a.csv", "b/s.csv"]\nvariant = "v"\n'
                'launch = "graph"\npeer = "torch"\nat_least_speedup = 2\n')
    assert g.files == ("a.csv", "b/s.csv") and g.where() == "v (graph)"


@pytest.mark.parametrize(("text", "said"), [
    ('[[goal]]\nname = "g"\nfile = "s.csv"\n', "exactly one bound"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\nat_least_tops = 2\n',
     "exactly one bound"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_least_speedup = 1\n', "peer"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\npeer = "torch"\n', "peer"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_least_speedup = 1\npeer = "pycuda"\n',
     "the goal's own backend"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 0\n', "positive"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = true\n', "positive"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = nan\n', "positive"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\nbogus = 1\n', "unknown key"),
    ('[[goal]]\nname = "g"\nfile = "../s.csv"\nat_most_us = 1\n', "inside the results"),
    ('[[goal]]\nname = "g"\nfile = "/s.csv"\nat_most_us = 1\n', "inside the results"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\npoint = 3\n', "point"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\npoint = { b = [1] }\n', "point"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\nvariant = 3\n', "a string"),
    ('[[goal]]\nname = "g"\nfile = "s.csv"\nat_most_us = 1\n' * 2, "two goals named"),
    ('[[goal]]\nfile = "s.csv"\nat_most_us = 1\n', "name"),
    ('[[goal]]\nname = "a | b"\nfile = "s.csv"\nat_most_us = 1\n', "without '|'"),
    ('[[goal]]\nname = "g"\nfile = []\nat_most_us = 1\n', "file must be"),
    ('[[goal]]\nname = "g"\nfile = ["s.csv", 3]\nat_most_us = 1\n', "file must be"),
    ('[[goal]]\nname = "g"\nat_most_us = 1\n', "file must be"),
    ("goal = [1, 2]\n", "is not a table"),
    ('goal = ["a"]\n', "is not a table"),
    ("[other]\n", "only [[goal]]"),
    ("", "no [[goal]]"),
    ("[[goal]\n", "not TOML"),
])
def test_a_malformed_goals_file_is_refused(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(BadInput, match=re.escape(said)):
        load(tmp_path, text)


def test_a_missing_goals_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such goals file"):
        goals.load(tmp_path / "none.toml")


def test_the_project_goals_file_loads() -> None:
    """The committed goals are well formed and name files of statistics/h200 (whether each
    has a row there is the goals block's to say: tests/results/test_goal_verdicts.py)."""
    declared = goals.load(ROOT / "statistics" / "goals.toml")
    h200 = ROOT / "statistics" / "h200"
    assert declared
    assert not [g.name for g in declared if not any((h200 / f).is_file() for f in g.files)]
