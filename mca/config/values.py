"""How a setting's value is checked: each check takes the value with its source and returns the
typed value, or raises one ConfigError naming the source and what is accepted."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mca.errors import ConfigError


@dataclass(frozen=True)
class Raw:
    """A value as given, and where it came from (for the error message)."""

    value: Any
    source: str


def bad(raw: Raw, accepted: str) -> ConfigError:
    """The error for a value that is not what the setting accepts."""
    shown = repr(raw.value) if not isinstance(raw.value, bool) else str(raw.value).lower()
    return ConfigError(f"{raw.source}: must be {accepted}, got {shown}")


def integer(lo: int, hi: int) -> Callable[[Raw], int]:
    accepted = f"an integer from {lo:,} to {hi:,}"

    def check(raw: Raw) -> int:
        v = raw.value
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise bad(raw, accepted)
        try:
            n = int(v.replace("_", "") if isinstance(v, str) else v)
        except ValueError:
            raise bad(raw, accepted) from None
        if not lo <= n <= hi:
            raise bad(raw, accepted)
        return n

    return check


def number(lo: float, hi: float) -> Callable[[Raw], float]:
    accepted = f"a number of seconds from {lo:g} to {hi:g}"

    def check(raw: Raw) -> float:
        v = raw.value
        if isinstance(v, bool) or not isinstance(v, int | float | str):
            raise bad(raw, accepted)
        try:
            x = float(v)
        except ValueError:
            raise bad(raw, accepted) from None
        if not math.isfinite(x) or not lo <= x <= hi:
            raise bad(raw, accepted)
        return x

    return check


def budget(lo: int, hi: int) -> Callable[[Raw], int]:
    """0 (off) or an integer from lo to hi."""
    some = integer(0, hi)

    def check(raw: Raw) -> int:
        n = some(raw)
        if 0 < n < lo:
            raise bad(raw, f"0 (off) or an integer from {lo:,} to {hi:,}")
        return n

    return check


def choice(*options: str) -> Callable[[Raw], str]:
    def check(raw: Raw) -> str:
        if not isinstance(raw.value, str) or raw.value not in options:
            raise bad(raw, "one of " + ", ".join(options))
        return raw.value

    return check


def boolean(raw: Raw) -> bool:
    """true/false in config.toml; 1/0 (or true/false) in a variable; a flag gives True."""
    v = raw.value
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("1", "true", "0", "false"):
        return v.strip().lower() in ("1", "true")
    raise bad(raw, "true or false (1 or 0 in a variable)")


def text(raw: Raw) -> str:
    if not isinstance(raw.value, str) or not raw.value.strip() or "\x00" in raw.value:
        raise bad(raw, "a non-empty string")
    return raw.value.strip()


def url(raw: Raw) -> str:
    """An http(s) URL with a host."""
    from urllib.parse import urlsplit

    value = text(raw).rstrip("/")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as e:
        raise ConfigError(f"{raw.source}: {value!r} is not a valid URL ({e})") from None
    if parts.scheme not in ("http", "https"):
        hint = f"; did you mean http://{value}?" if "://" not in value else ""
        raise ConfigError(
            f"{raw.source}: {value!r} must start with http:// or https://{hint}"
        ) from None
    if not parts.hostname:
        raise ConfigError(f"{raw.source}: {value!r} has no host") from None
    return value


def paths(raw: Raw) -> tuple[Path, ...]:
    """A ':'-separated string (variable) or a list of strings (config.toml)."""
    v = raw.value
    items = v.split(os.pathsep) if isinstance(v, str) else v
    if not isinstance(items, list | tuple) or not all(isinstance(p, str | Path) for p in items):
        raise bad(raw, "a list of directory paths")
    return tuple(Path(p) for p in items if str(p))


_NAME = re.compile(r"[A-Za-z_*?][A-Za-z0-9_*?]*")


def names(raw: Raw) -> tuple[str, ...]:
    """Environment variable names, or patterns with * and ?: a ','-separated string (variable)
    or a list of strings (config.toml)."""
    v = raw.value
    items = [i.strip() for i in v.split(",")] if isinstance(v, str) else v
    if not isinstance(items, list | tuple) or not all(isinstance(n, str) for n in items):
        raise bad(raw, "a list of variable names")
    for n in items:
        if not _NAME.fullmatch(n):
            raise bad(raw, "variable names (letters, digits, _; * and ? as patterns)")
    return tuple(items)
