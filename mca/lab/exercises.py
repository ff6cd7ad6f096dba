"""The lab's five exercises, one record each: the trap its naive starter falls into, the function
a student's exercises.py defines, the Policy field that function replaces, and what it must
return. The starter (mca/lab/naive.py), a student's file (mca/lab/student.py), the checks'
table (mca/lab/suite.py) and the grader's columns all read this one tuple.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mca.skills.gates import Decision
from mca.skills.inject import Block
from mca.skills.model import Candidate, Hit


@dataclass(frozen=True)
class Exercise:
    """One exercise: its number and title, its trap, and where a student's function plugs in."""

    number: int
    title: str
    trap: str  # the naive starter's trap; MCA_LAB=starter:TRAP swaps in just this one
    function: str  # the name exercises.py (and the starter) defines
    field: str  # the Policy field the function replaces
    returns: str  # the contract, as a failed check states it
    ok: Callable[[Any], bool]  # whether a returned value keeps the contract

    @property
    def label(self) -> str:
        """'1 split frontmatter by lines': the exercise as reports name it."""
        return f"{self.number} {self.title}"


def _is_split(v: Any) -> bool:
    return (
        isinstance(v, tuple)
        and len(v) == 3
        and isinstance(v[0], str)
        and isinstance(v[1], str)
        and isinstance(v[2], int)
    )


def _list_of(kind: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and all(isinstance(x, kind) for x in v)


EXERCISES = (
    Exercise(
        1,
        "split frontmatter by lines",
        "split",
        "split_frontmatter",
        "split",
        "a (frontmatter, body, line) tuple",
        _is_split,
    ),
    Exercise(
        2,
        "validate metadata",
        "validate",
        "validate_metadata",
        "validate",
        "a Candidate",
        lambda v: isinstance(v, Candidate),
    ),
    Exercise(
        3,
        "scripts as command lines",
        "script",
        "render_skill",
        "render",
        "a Block",
        lambda v: isinstance(v, Block),
    ),
    Exercise(
        4,
        "paths and word boundaries",
        "judge",
        "judge_triggers",
        "judge",
        "a list of Hit",
        _list_of(Hit),
    ),
    Exercise(
        5,
        "domain and budget gates",
        "gates",
        "apply_gates",
        "gates",
        "a list of Decision",
        _list_of(Decision),
    ),
)
TRAPS = tuple(e.trap for e in EXERCISES)
BY_TRAP = {e.trap: e for e in EXERCISES}
