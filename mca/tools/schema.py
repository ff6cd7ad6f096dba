"""Tool arguments against the tool's JSON schema: what a model sends is untrusted input.

A wrong type, a missing or unknown argument, a number that is not a finite integer, or a string
holding a lone surrogate (which no file or log can encode) is a ToolError the model can act on,
never an exception from deep inside a tool.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mca.errors import ToolError

MAX_STRING_CHARS = 20 * 1024 * 1024


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check(value: Any, schema: Mapping[str, Any], where: str) -> None:
    kind = schema.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise ToolError(f"{where} must be a string, got {type(value).__name__}")
        if len(value) > MAX_STRING_CHARS:
            raise ToolError(
                f"{where} is {len(value):,} characters; the limit is {MAX_STRING_CHARS:,}"
            )
        if _has_surrogate(value):
            raise ToolError(f"{where} holds a lone surrogate (invalid Unicode); send valid text")
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            ok = True
        if not ok:
            raise ToolError(f"{where} must be an integer, got {value!r:.40}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise ToolError(f"{where} must be true or false, got {value!r:.40}")
    elif kind == "array":
        if not isinstance(value, list):
            raise ToolError(f"{where} must be a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{where}[{i}]")
    elif kind == "object":
        check_object(value, schema, where)
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"{where} must be one of {', '.join(map(str, schema['enum']))}")


def check_object(value: Any, schema: Mapping[str, Any], where: str = "arguments") -> None:
    """Check an object against an object schema (required, known properties, their types)."""
    if not isinstance(value, Mapping):
        raise ToolError(f"{where} must be an object, got {type(value).__name__}")
    props: Mapping[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in value]
    if missing:
        raise ToolError(f"missing required argument(s) {', '.join(map(repr, missing))}")
    unknown = [k for k in value if k not in props]
    if unknown and schema.get("additionalProperties") is False:
        allowed = ", ".join(props) or "none"
        shown = ", ".join(repr(str(k))[:40] for k in unknown)
        raise ToolError(f"unknown argument(s) {shown} (allowed: {allowed})")
    for key, sub in props.items():
        if key in value and value[key] is not None:
            _check(
                value[key], sub, f"argument {key!r}" if where == "arguments" else f"{where}.{key}"
            )
