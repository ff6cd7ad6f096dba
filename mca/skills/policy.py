"""The runtime's replaceable judgments, bundled: how to split, validate, render, judge, gate.

Production code receives a Policy; mca/skills/select.py is the one place that picks it (the lab's
starter mode swaps in the naive versions from mca/skills/naive.py, trap by trap). This module
imports neither, so every source of policies can build on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mca.skills.gates import Decision, apply_gates
from mca.skills.inject import Block, render_skill
from mca.skills.model import Candidate, Root, Skill
from mca.skills.parse import ParsedSkill, split_frontmatter
from mca.skills.trigger import Hit, judge
from mca.skills.validate import validate

SplitFn = Callable[[str], tuple[str, str, int]]
ValidateFn = Callable[[Path, ParsedSkill, Root | None], Candidate]
RenderFn = Callable[[Skill], Block]
JudgeFn = Callable[[Iterable[Skill], str, Sequence[tuple[str, str]]], list[Hit]]
GatesFn = Callable[
    [Sequence[Hit], int, RenderFn, Mapping[str, int], Mapping[str, str] | None], list[Decision]
]

# The lab's five traps, in exercise order, and where each plugs in: the function a starter or a
# student's exercises.py defines, and the Policy field it replaces.
SLOTS = {
    "split": ("split_frontmatter", "split"),
    "validate": ("validate_metadata", "validate"),
    "script": ("render_skill", "render"),
    "judge": ("judge_triggers", "judge"),
    "gates": ("apply_gates", "gates"),
}
TRAPS = tuple(SLOTS)


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
