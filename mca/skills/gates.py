"""The two mandatory gates: one skill per domain, and a total character budget. Both say why."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mca.skills.inject import Block
from mca.skills.model import Hit, Skill
from mca.skills.partial import partial_block
from mca.skills.switches import named

__all__ = ["Decision", "apply_gates", "gate_read"]


@dataclass
class Decision:
    """What happened to one hit, and why."""

    hit: Hit
    loaded: bool
    reason: str
    block: Block | None = None
    replaces: str = ""  # a skill of the same domain, in context, that this one replaces

    @property
    def name(self) -> str:
        return self.hit.skill.name

    @property
    def chars(self) -> int:
        return len(self.block.text) if self.block and self.loaded else 0


@dataclass
class _Winner:
    """Who holds a domain this turn, and whether its body actually went in."""

    name: str
    why_not: str = ""  # "" when it loaded or is in context; else why it did not fit


def _mentioned(hit: Hit) -> bool:
    return any(r.kind == "mention" for r in hit.reasons)


def apply_gates(
    hits: Sequence[Hit],
    budget: int,
    render: Callable[[Skill], Block],
    in_context: Mapping[str, int],
    held: Mapping[str, str] | None = None,
) -> list[Decision]:
    """Walk hits in score order: dedup, then the domain gate, then the budget gate.

    The domain belongs to its highest-scoring hit even when that hit does not fit the budget:
    a lower-scoring rival never takes its place. `held` maps a domain to the skill of it
    already in context from an earlier turn: that skill keeps its domain, unless the user
    names a rival explicitly ($name), which then replaces it (Decision.replaces says which).
    A skill named explicitly ($name or /name) that is over the budget loads its head instead,
    and so does a skill without `triggers` that the sentence names or its description fits.
    """
    decisions: list[Decision] = []
    winners: dict[str, _Winner] = {d: _Winner(n) for d, n in (held or {}).items()}
    used = 0
    for hit in hits:
        skill = hit.skill
        if skill.name in in_context:
            winners.setdefault(skill.domain_key, _Winner(skill.name))
            turn = in_context[skill.name]
            decisions.append(Decision(hit, False, f"already in context since turn {turn}"))
            continue
        winner = winners.get(skill.domain_key)
        replaces = ""
        if winner is not None:
            if winner.name in in_context and _mentioned(hit):
                replaces = winner.name  # the user asked for this one by name
            else:
                decisions.append(Decision(hit, False, _rival(skill, winner, in_context)))
                continue
        block, refused = _fit(hit, render, budget - used)
        if refused:
            decisions.append(Decision(hit, False, refused, block))
            winners.setdefault(skill.domain_key, _Winner(skill.name, "did not fit the budget"))
            continue
        size = len(block.text)
        winners[skill.domain_key] = _Winner(skill.name)
        used += size
        reason = block.partial or f"expanded, {size} chars"
        if replaces:
            reason += f"; replaces {replaces} (in context since turn {in_context[replaces]})"
        decisions.append(Decision(hit, True, reason, block, replaces))
    return decisions


def _fit(hit: Hit, render: Callable[[Skill], Block], left: int) -> tuple[Block, str]:
    """The block that fits in `left` (a named skill's head when the whole does not), and ''; or
    the whole block and why it does not fit."""
    block = render(hit.skill)
    size = len(block.text)
    if size <= left:
        return block, ""
    part = partial_block(hit.skill, render, left) if _may_cut(hit) else None
    return (part, "") if part is not None else (block, f"body is {size} chars, only {left} left")


# Reasons that say the sentence is about this very skill: its name (a bare word, or a file of
# its format) or the judgment of its description.
_ABOUT_IT = frozenset({"mention", "file", "description"})


def _may_cut(hit: Hit) -> bool:
    """Whether a hit over the budget loads the head that fits: a skill named explicitly
    ($name, /name) always; a skill that declares no `triggers` (the ecosystem's) when the hit
    is about it, since loading nothing would make its hit a miss (issue 35). A skill with
    `triggers` keeps the seed's budget gate: what does not fit does not load, and says why."""
    if named(hit):
        return True
    return not hit.skill.triggers and any(r.kind in _ABOUT_IT for r in hit.reasons)


def _rival(skill: Skill, winner: _Winner, in_context: Mapping[str, int]) -> str:
    if winner.name in in_context:
        return f"same {skill.domain} domain as {winner.name}, already in context since turn" + (
            f" {in_context[winner.name]}"
        )
    if winner.why_not:
        return f"same {skill.domain} domain as {winner.name}, which won but {winner.why_not}"
    return f"same {skill.domain} domain as {winner.name}, which won"


def gate_read(
    skill: Skill,
    render: Callable[[Skill], Block],
    in_context: Mapping[str, int],
    held: Mapping[str, str],
    left: int,
) -> tuple[bool, str, Block | None]:
    """The same gates for a skill the model asked to read: (loaded, reason, block)."""
    if skill.name in in_context:
        return False, f"already in context since turn {in_context[skill.name]}", None
    winner = held.get(skill.domain_key)
    if winner is not None and winner != skill.name:
        since = in_context.get(winner)
        how = f"already in context since turn {since}" if since else "which won"
        return False, f"same {skill.domain} domain as {winner}, {how}", None
    block = render(skill)
    if len(block.text) > left:
        part = partial_block(skill, render, left)  # the model asked for it by name
        if part is None:
            return False, f"body is {len(block.text)} chars, only {left} left", block
        return True, f"{part.partial} (read by the model)", part
    return True, f"expanded, {len(block.text)} chars (read by the model)", block
