"""Which Policy a run uses: production, or the lab's starter with some traps swapped in."""

from __future__ import annotations

from mca.errors import ConfigError
from mca.skills.naive import starter_policy
from mca.skills.policy import PRODUCTION, TRAPS, Policy


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
    return starter_policy(traps)
