"""Which Policy a lab run uses: production, the starter with some traps swapped in, or a
student's exercises.py (functions it does not define keep the starter's version).

Only the lab and the command line pick a policy by name (MCA_LAB); production code receives
the Policy it runs (Settings.policy) and never imports this package.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mca.errors import ConfigError
from mca.lab import naive
from mca.lab.exercises import BY_TRAP, TRAPS
from mca.skills.policy import PRODUCTION, Policy

__all__ = ["select_policy", "starter_policy"]


def starter_policy(traps: tuple[str, ...]) -> Policy:
    """Production with the named traps' starter versions swapped in."""
    swaps = {BY_TRAP[t].field: getattr(naive, BY_TRAP[t].function) for t in traps}
    return replace(PRODUCTION, name="starter(" + ",".join(traps) + ")", **swaps)


def select_policy(lab: str) -> Policy:
    """MCA_LAB: '' (production), 'starter' (all five traps), 'starter:split,judge' (some), or
    the path of a student's exercises.py."""
    if not lab:
        return PRODUCTION
    if lab.endswith(".py"):
        from mca.lab.student import load_exercises

        return load_exercises(Path(lab))
    kind, _, which = lab.partition(":")
    if kind != "starter":
        raise ConfigError(
            f"MCA_LAB: unknown lab mode {lab!r} (use 'starter', 'starter:TRAP,...' or the path"
            " of an exercises.py)"
        )
    traps = tuple(t.strip() for t in which.split(",") if t.strip()) or TRAPS
    unknown = [t for t in traps if t not in TRAPS]
    if unknown:
        raise ConfigError(f"unknown trap(s) {', '.join(unknown)} (available: {', '.join(TRAPS)})")
    return starter_policy(traps)
