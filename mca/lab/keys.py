"""The grader's keys as a hand-in could disguise them: every row is scrubbed of each key as
set, reversed, in hex, in base64 (at any alignment in a longer text) and split across lines or
spaces, and of the values of `*_API_KEY`, `*_TOKEN` and `*_SECRET*` in the grader's
environment, not only the keys mca itself uses.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mca.config.apikeys import MIN_SECRET_CHARS, secret_forms, secrets_of
from mca.text.sanitize import REDACTED, scrub

__all__ = ["disguises", "grader_keys", "hide", "hide_data"]

# Environment variables whose values are keys, whatever the program they are for.
_SECRET_NAME = re.compile(r"(_API_KEY|_TOKEN|_SECRET\w*|_PASSWORD)$|^(SECRET|TOKEN)\w*$", re.I)


def grader_keys(env: Mapping[str, str], home: Path) -> tuple[str, ...]:
    """mca's keys (the environment's and config.toml's) and every *_TOKEN, *_SECRET* value."""
    named = [v for k, v in env.items() if _SECRET_NAME.search(k)]
    return tuple(dict.fromkeys([*secrets_of(env, home), *secret_forms(named)]))


def _base64_at(key: bytes) -> list[str]:
    """The part of the key's base64 that is the same wherever it starts in a longer text."""
    out = []
    for shift in range(3):
        coded = base64.b64encode(b"\0" * shift + key).decode()
        inner = coded[(shift * 4 + 2) // 3 + 1 if shift else 0 :].rstrip("=")
        inner = inner[: len(inner) - 2] if len(inner) > 4 else inner
        out += [inner, inner.replace("+", "-").replace("/", "_")]
    return out


def disguises(key: str) -> list[str]:
    """The key's other spellings a scrubber looks for (its own excluded)."""
    raw = key.encode()
    forms = [key[::-1], raw.hex(), raw.hex().upper(), *_base64_at(raw)]
    return [f for f in dict.fromkeys(forms) if len(f) >= MIN_SECRET_CHARS and f != key]


def _split_rx(key: str) -> re.Pattern[str]:
    # the key with any run of whitespace (or a shown \n) between any two of its characters
    gap = r"(?:\s|\\n|\\r|\\t)*"
    return re.compile(gap.join(re.escape(c) for c in key))


def hide(text: str, keys: Sequence[str], *, cut: bool = False) -> str:
    """The text with every key, and each of its disguises, replaced."""
    text = scrub(text, keys, cut=cut)
    text = scrub(text, [d for k in keys for d in disguises(k)], cut=cut)
    for key in keys:
        for form in (key, key[::-1]):
            if len(form) >= MIN_SECRET_CHARS and form[0] in text:
                text = _split_rx(form).sub(REDACTED, text)
    return text


def hide_data(value: Any, keys: Iterable[str]) -> Any:
    """A JSON-like value with every string in it hidden (as `hide`, cut keys too)."""
    keys = tuple(keys)
    if isinstance(value, str):
        return hide(value, keys, cut=True)
    if isinstance(value, dict):
        return {hide_data(k, keys): hide_data(v, keys) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [hide_data(v, keys) for v in value]
    return value
