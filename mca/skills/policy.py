"""The runtime's replaceable judgments, bundled: how to split, validate, render, judge, gate.

Production code receives a Policy (Settings.policy; PRODUCTION unless the command line was
given another). The lab builds its own from this one: the naive starter and a student's
exercises.py swap functions in, field by field. Nothing here knows the lab.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mca.skills.gates import Decision, apply_gates
from mca.skills.inject import Block, render_skill
from mca.skills.model import Candidate, Hit, Root, Skill
from mca.skills.parse import ParsedSkill, split_frontmatter
from mca.skills.trigger import judge
from mca.skills.validate import validate

__all__ = ["PRODUCTION", "GatesFn", "JudgeFn", "Policy", "RenderFn", "SplitFn", "ValidateFn"]

SplitFn = Callable[[str], tuple[str, str, int]]
ValidateFn = Callable[[Path, ParsedSkill, Root | None], Candidate]
RenderFn = Callable[[Skill], Block]
JudgeFn = Callable[[Iterable[Skill], str, Sequence[tuple[str, str]]], list[Hit]]
GatesFn = Callable[
    [Sequence[Hit], int, RenderFn, Mapping[str, int], Mapping[str, str] | None], list[Decision]
]


@dataclass(frozen=True)
class Policy:
    """One choice per replaceable step."""

    name: str = "production"
    split: SplitFn = split_frontmatter
    validate: ValidateFn = validate
    render: RenderFn = render_skill
    judge: JudgeFn = judge
    gates: GatesFn = apply_gates


PRODUCTION = Policy()
