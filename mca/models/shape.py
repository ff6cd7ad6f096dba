"""Reading what a model server sent, which is untrusted: every field is checked for its type.

A value of the right syntax and the wrong shape (a chunk that is a list, an index "abc", usage
of "many") becomes a StreamError that says what was wrong, never a TypeError from deep inside.
Text is repaired where a server split a surrogate pair across two chunks.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mca.errors import StreamError
from mca.types import TextSink, Usage

MAX_INDEX = 10_000
# One decoder for every event (json.loads with a keyword builds a new one each call): NaN and
# Infinity are read as null (they are not JSON, and not numbers we use).
_DECODER = json.JSONDecoder(parse_constant=lambda c: None)
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str, what: str) -> Any:
    """JSON, with NaN and Infinity read as null (they are not JSON, and not numbers we use)."""
    try:
        return _DECODER.decode(text)
    except ValueError as e:
        raise StreamError(f"the model sent invalid JSON in {what}: {e}") from None
    except RecursionError:
        raise StreamError(f"the model sent JSON nested too deeply in {what}") from None


def arguments(raw: Any, what: str) -> tuple[dict[str, Any], str]:
    """A tool call's arguments: (the object, '') or ({}, why they are not one).

    Malformed arguments are the model's mistake (or its reply was cut at the output limit), not
    the server's: the call is answered with the reason, and the model can try again.
    """
    if raw is None or raw == "":
        return {}, ""
    if isinstance(raw, dict):  # some servers send the object itself
        return raw, ""
    if not isinstance(raw, str):
        return {}, f"the arguments of {what} are not a JSON object (got {type(raw).__name__})"
    try:
        value = json.loads(raw, parse_constant=lambda c: None)
    except ValueError as e:
        return {}, f"the arguments of {what} are not valid JSON ({e})"
    except RecursionError:
        return {}, f"the arguments of {what} are JSON nested too deeply"
    if not isinstance(value, dict):
        return {}, f"the arguments of {what} are not a JSON object (got {type(value).__name__})"
    return value, ""


def obj(value: Any, what: str) -> dict[str, Any]:
    """A JSON object, or a StreamError naming what it should have been."""
    if not isinstance(value, dict):
        raise StreamError(f"{what} is not a JSON object (got {type(value).__name__})")
    return value


def opt_obj(value: Any, what: str) -> dict[str, Any]:
    """A JSON object, or {} for null/absent."""
    return {} if value is None else obj(value, what)


def opt_list(value: Any, what: str) -> list[Any]:
    """A JSON array, or [] for null/absent."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise StreamError(f"{what} is not a JSON array (got {type(value).__name__})")
    return value


def opt_str(value: Any, what: str) -> str:
    """A string, or '' for null/absent."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise StreamError(f"{what} is not a string (got {type(value).__name__})")
    return value


def index(value: Any, what: str) -> int:
    """A small non-negative integer index."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INDEX:
        raise StreamError(f"{what} is not a valid index (got {value!r:.40})")
    return value


def count(value: Any) -> int | None:
    """A token count, or None for anything that is not a finite non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0 or value > 10**12:
        return None
    return int(value)


def usage(raw: Any, prompt_keys: tuple[str, ...], completion_key: str) -> Usage | None:
    """Provider usage, or None when it is missing or malformed (a bad figure is not a fault)."""
    if not isinstance(raw, dict):
        return None
    prompts = [count(raw.get(k)) for k in prompt_keys if k in raw]
    completion = count(raw.get(completion_key, 0))
    if not prompts or any(p is None for p in prompts) or completion is None:
        return None
    return Usage(sum(p for p in prompts if p is not None), completion)


def openai_usage(raw: Any, prompt: str, completion: str) -> Usage | None:
    """OpenAI's usage (Chat Completions: prompt/completion, Responses: input/output), with the
    parts its details give: cache reads and writes of the prompt, reasoning of the answer."""
    counted = usage(raw, (f"{prompt}_tokens",), f"{completion}_tokens")
    if counted is None:
        return None
    before, after = f"{prompt}_tokens_details", f"{completion}_tokens_details"
    return Usage(
        counted.prompt_tokens,
        counted.completion_tokens,
        detail(raw, before, "cached_tokens"),
        detail(raw, before, "cache_write_tokens"),
        detail(raw, after, "reasoning_tokens"),
    )


def detail(raw: Any, group: str, key: str) -> int:
    """A count inside a usage's details object (`prompt_tokens_details.cached_tokens`): 0 when
    it is missing or not a count (a bad figure is not a fault)."""
    details = raw.get(group) if isinstance(raw, dict) else None
    return (count(details.get(key)) or 0) if isinstance(details, dict) else 0


def fix_text(text: str) -> str:
    """Join surrogate pairs that arrived in separate chunks; replace any left alone."""
    if not _SURROGATE.search(text):
        return text
    joined = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in joined)


class TextStream:
    """Streamed text deltas, passed on safely: a high surrogate waits for its partner."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.chars = 0  # held so far (an assembler's size)
        self._held = ""

    def feed(self, delta: str) -> str:
        """The part of this delta that is safe to show now."""
        self.parts.append(delta)
        self.chars += len(delta)
        text = self._held + delta
        self._held = ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return fix_text(text)

    def flush(self) -> str:
        """Whatever was held back (a lone surrogate becomes U+FFFD)."""
        held, self._held = self._held, ""
        return fix_text(held)

    @property
    def text(self) -> str:
        return fix_text("".join(self.parts))


def feed(stream: TextStream, delta: str, sink: TextSink | None) -> None:
    """A delta into its stream, and what is safe to show of it to the sink."""
    shown = stream.feed(delta)
    if sink is not None and shown:
        sink(shown)


def flush(stream: TextStream, sink: TextSink | None) -> None:
    """What a stream held back, to the sink."""
    rest = stream.flush()
    if sink is not None and rest:
        sink(rest)
