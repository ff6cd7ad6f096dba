"""Where a setting's value comes from: a flag, the environment or config.toml, in that order.

`Spec` names a setting's variable, config.toml key and flag, with its check and its default;
`Sources` finds the first source that gives a value and checks it there, so an error names the
flag, the variable, or config.toml and its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from mca.config.values import Raw
from mca.errors import ConfigError
from mca.models.known import Price

T = TypeVar("T")
MAX_CONFIG_BYTES = 1024 * 1024
# config.toml [sections] mca reads.
SECTIONS = ("prices",)


@dataclass(frozen=True)
class Spec(Generic[T]):
    """One setting: its variable, its config.toml key, how to check a value, its default (the
    only place it is written: Settings takes it from here), and its flag if it has one."""

    var: str
    key: str
    check: Callable[[Raw], T]
    default: T
    flag: str = ""


class ConfigFile:
    """config.toml: its values and the line each top-level key is on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        if not path.is_file():
            return
        import tomllib  # only when there is a config file: it is not free to import

        from mca.fs.careful import read_regular

        try:
            text = read_regular(path, cap=MAX_CONFIG_BYTES, follow=True).decode()
            self.data = tomllib.loads(text)
        except OSError as e:
            raise ConfigError(f"{path}: cannot read ({e.strerror or e})") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: not valid TOML ({e})") from None
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r"\s*([A-Za-z0-9_\-\"']+)\s*=", line)
            if m:
                self.lines.setdefault(m.group(1).strip("\"'"), n)
            elif re.match(r"\s*\[", line):
                self.lines.setdefault("[" + line.strip().strip("[]").strip() + "]", n)

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.path}" + (f" line {line}" if line else "") + f" ({key})"

    def check_keys(self, known: set[str]) -> list[str]:
        """Warnings for keys mca does not know and for [sections] (both are ignored)."""
        import difflib

        out = []
        for key, value in self.data.items():
            if key in SECTIONS:
                continue
            if isinstance(value, dict):
                where = f"{self.path} line {self.lines.get(f'[{key}]', '?')}"
                out.append(f"{where}: section [{key}] is ignored (settings go at the top level)")
            elif key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=2)
                hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
                out.append(f"{self.where(key)}: unknown setting, ignored{hint}")
        return out


class Sources:
    """Flag, then environment, then config.toml: the first that has a value, with its source."""

    def __init__(self, flags: Mapping[str, Any], env: Mapping[str, str], config: ConfigFile):
        self.flags, self.env, self.config = flags, env, config

    def raw(self, spec: Spec[Any]) -> Raw | None:
        if spec.flag and self.flags.get(spec.key) is not None:
            return Raw(self.flags[spec.key], spec.flag)
        if spec.var in self.env:
            value = self.env[spec.var]
            if not value.strip():
                raise ConfigError(f"{spec.var} is set but empty: unset it or give a value")
            return Raw(value, spec.var)
        if spec.key in self.config.data:
            return Raw(self.config.data[spec.key], self.config.where(spec.key))
        return None

    def given(self, spec: Spec[T]) -> T | None:
        """The checked value, or None when no source gives one."""
        raw = self.raw(spec)
        return None if raw is None else spec.check(raw)

    def get(self, spec: Spec[T]) -> T:
        """The checked value, or the setting's default."""
        value = self.given(spec)
        return spec.default if value is None else value


PRICE_KEYS = {"input", "output", "cached_input", "cache_write"}


def prices_of(config: ConfigFile) -> tuple[tuple[str, Price], ...]:
    """[prices] "model" = { input = 2.5, output = 10.0 }: USD per million tokens; optional
    `cached_input` (a token read from the provider's cache) and `cache_write` (one written)."""
    table = config.data.get("prices", {})
    where = f"{config.path} [prices]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table of models")
    out = []
    for model, entry in table.items():
        ok = isinstance(entry, dict) and {"input", "output"} <= set(entry) <= PRICE_KEYS
        values = dict(entry) if ok else {}
        if not ok or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e6
            for v in values.values()
        ):
            raise ConfigError(
                f"{where} {model!r}: expected {{ input = N, output = N }} (and optionally"
                " cached_input = N, cache_write = N), USD per million tokens (numbers from 0)"
            )
        price = Price(
            float(values["input"]),
            float(values["output"]),
            _optional(values.get("cached_input")),
            _optional(values.get("cache_write")),
        )
        out.append((str(model), price))
    return tuple(out)


def _optional(value: float | None) -> float | None:
    return None if value is None else float(value)
