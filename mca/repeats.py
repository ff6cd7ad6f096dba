"""A model that makes the same tool call again and again (same tool, same arguments, one after
another): from the REPEAT_LIMIT-th time on, its result tells it that nothing will change, and
the person sees a line (at the limit, then at each further REPEAT_LIMIT). Small models loop like
this until the context overflows; nothing else would tell them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from mca.types import ToolCall

__all__ = ["REPEAT_LIMIT", "Repeats"]

REPEAT_LIMIT = 5


def _key(call: ToolCall) -> str:
    return call.name + json.dumps(dict(call.arguments), sort_keys=True, default=str)


@dataclass
class Repeats:
    """The run of identical calls in one turn."""

    last: str = ""
    count: int = 0

    def see(self, call: ToolCall) -> int:
        """Count `call`: how many times in a row it has now been made."""
        key = _key(call)
        self.count = self.count + 1 if key == self.last else 1
        self.last = key
        return self.count

    @staticmethod
    def told(count: int) -> str:
        """What the model reads after the result ('' below the limit)."""
        if count < REPEAT_LIMIT:
            return ""
        return (
            f"\n[mca: you have made this same call {count} times in a row, with the same"
            " arguments; its result will not change. Do something else, or answer with what"
            " you have.]"
        )

    @staticmethod
    def said(count: int, what: str) -> str:
        """The line the person sees ('' but at the limit and each REPEAT_LIMIT after)."""
        if count < REPEAT_LIMIT or count % REPEAT_LIMIT:
            return ""
        return f"the model made the same call {count} times in a row ({what}); it was told so"
