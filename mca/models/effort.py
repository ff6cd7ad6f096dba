"""A reasoning effort the server refused: the nearest one it takes (from the values its error
lists), or none at all when it takes no effort. Pure functions over the error's text; both
OpenAI wires (Chat Completions, the Responses API) use them."""

from __future__ import annotations

import re

from mca.errors import ModelError
from mca.models.known import EFFORTS

__all__ = ["allowed_efforts", "nearest_effort", "refused_effort"]

# How OpenAI says a value is refused: "Unsupported value: 'reasoning_effort' does not support
# 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'."
REFUSED_VALUE = ("unsupported value", "does not support '", "supported values", "one of")


def allowed_efforts(detail: str) -> tuple[str, ...]:
    """The efforts an error says the server takes, in mca's order (none when it says none)."""
    m = re.search(
        r"(supported values (are|is)|one of|expected|allowed)\b(?P<rest>.*)", detail, re.I
    )
    if m is None:
        return ()
    named = {w.lower() for w in re.findall(r"[\w-]+", m["rest"])}
    return tuple(e for e in EFFORTS if e in named)


def nearest_effort(wanted: str, allowed: tuple[str, ...]) -> str:
    """The allowed effort closest to `wanted` in mca's order (a tie: the harder one)."""
    at = EFFORTS.index(wanted) if wanted in EFFORTS else EFFORTS.index("medium")
    return min(allowed, key=lambda e: (abs(EFFORTS.index(e) - at), -EFFORTS.index(e)))


def refused_effort(effort: str, detail: str, model: str) -> tuple[str, str]:
    """After a 400 that names the reasoning effort: the effort to send instead ('' : none) and
    what to say. A refused value goes to the nearest allowed one; a server that takes no
    effort at all gets none. A refused value with no allowed values named stops the turn."""
    low = detail.lower()
    if not any(h in low for h in REFUSED_VALUE):
        return "", "the server takes no reasoning effort: sent without"
    allowed = allowed_efforts(detail)
    if not allowed:
        raise ModelError(
            f"the server refused reasoning effort {effort!r} for {model} and named none it"
            f" takes ({detail}); choose another with --reasoning ({', '.join(EFFORTS)})"
        )
    chosen = nearest_effort(effort, allowed)
    return chosen, (
        f"the server does not take reasoning effort {effort!r} for {model} (it takes"
        f" {', '.join(allowed)}): sent again with {chosen!r}, the nearest"
    )
