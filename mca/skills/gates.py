"""The two mandatory gates: one skill per domain, and a total character budget. Both say why."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mca.skills.inject import Block
from mca.skills.model import Skill
from mca.skills.trigger import Hit


@dataclass
class Decision:
    """What happened to one hit, and why."""

    hit: Hit
    loaded: bool
    reason: str
    block: Block | None = None

    @property
    def name(self) -> str:
        return self.hit.skill.name

    @property
    def chars(self) -> int:
        return len(self.block.text) if self.block and self.loaded else 0


def apply_gates(
    hits: Sequence[Hit],
    budget: int,
    render: Callable[[Skill], Block],
    in_context: Mapping[str, int],
    held: Mapping[str, str] | None = None,
) -> list[Decision]:
    """Walk hits in score order: dedup, then the domain gate, then the budget gate.

    `held` maps a domain to the skill of it already in context from an earlier turn: that
    skill keeps its domain, so a contradictory one is not added beside it.
    """
    decisions: list[Decision] = []
    winners: dict[str, str] = dict(held or {})
    used = 0
    for hit in hits:
        skill = hit.skill
        if skill.name in in_context:
            winners.setdefault(skill.domain_key, skill.name)
            turn = in_context[skill.name]
            decisions.append(Decision(hit, False, f"already in context since turn {turn}"))
            continue
        winner = winners.get(skill.domain_key)
        if winner is not None:
            how = (
                f"already in context since turn {in_context[winner]}"
                if winner in in_context
                else "which won"
            )
            decisions.append(Decision(hit, False, f"same {skill.domain} domain as {winner}, {how}"))
            continue
        block = render(skill)
        size = len(block.text)
        if used + size > budget:
            reason = f"body is {size} chars, only {budget - used} left"
            decisions.append(Decision(hit, False, reason, block))
            continue
        winners[skill.domain_key] = skill.name
        used += size
        decisions.append(Decision(hit, True, f"expanded, {size} chars", block))
    return decisions
