"""How mca says a count: "1 turn", "2 turns", "0 files". Pure functions."""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, noun: str, many: str = "") -> str:
    """`n` and the noun, singular for exactly one (`many` for an irregular plural)."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"
