"""The runtime's replaceable judgments, bundled: how to split, validate, render, judge, gate.

Production code receives a Policy; `select_policy` is the one place that picks it (the lab's
starter mode swaps in the naive versions from mca/skills/naive.py, trap by trap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mca.errors import ConfigError
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

# The lab's five traps, in exercise order.
TRAPS = ("split", "validate", "script", "judge", "gates")


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


def select_policy(lab: str) -> Policy:
    """MCA_LAB: '' (production), 'starter' (all five traps) or 'starter:split,judge' (some)."""
    if not lab:
        return PRODUCTION
    kind, _, which = lab.partition(":")
    if kind != "starter":
        raise ConfigError(f"unknown MCA_LAB {lab!r} (use 'starter' or 'starter:TRAP,...')")
    traps = tuple(t.strip() for t in which.split(",") if t.strip()) or TRAPS
    unknown = [t for t in traps if t not in TRAPS]
    if unknown:
        raise ConfigError(f"unknown trap(s) {', '.join(unknown)} (available: {', '.join(TRAPS)})")
    from mca.skills.naive import starter_policy

    return starter_policy(traps)
