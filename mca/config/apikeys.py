"""API keys: where each one may go, what a key may look like, and every text that counts as one.

A key goes only to the host it was configured for:

- a provider's own variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) only to that provider's
  own URL;
- MCA_API_KEY only to the one URL it was configured with: MCA_BASE_URL, else config.toml's
  `base_url`, else the URL of the provider named by MCA_PROVIDER (or config.toml's
  `provider`), else the fallback provider's (a lone MCA_API_KEY is OpenAI's, registry rule 4);
- config.toml's `api_key` only to config.toml's `base_url`, else the named provider's URL,
  else the fallback's.

A model name never moves a shared key: the provider a name implies gets its own key or none, and
`/model` keeps the bindings mca started with (`KeyHosts`), so switching never carries a key to
another host. A key is checked when it is chosen (printable ASCII, no spaces, no control
characters); the error names where it came from and what is wrong, never the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mca.errors import ConfigError
from mca.models.registry import SHARED_KEY_VAR

if TYPE_CHECKING:
    from mca.models.registry import ProviderSpec, Registry

__all__ = [
    "CONFIG_KEY",
    "MIN_SECRET_CHARS",
    "KeyHosts",
    "check_key",
    "find_key",
    "key_hosts",
    "key_problem",
    "known_secrets",
    "missing_key",
    "secret_forms",
    "secrets_of",
]

CONFIG_KEY = "config.toml api_key"  # where a key from the file came from, as /model says it
MIN_SECRET_CHARS = 8  # shorter values are not scrubbed (they would match ordinary text)


@dataclass(frozen=True)
class KeyHosts:
    """The base URL each shared key was configured for ('' for none)."""

    env: str  # MCA_API_KEY's
    config: str  # config.toml api_key's


def _url(value: Any) -> str:
    """A base URL as the settings normalise it (mca.config.values.url), or ''."""
    return value.strip().rstrip("/") if isinstance(value, str) else ""


def key_hosts(env: Mapping[str, str], config: Mapping[str, Any], providers: Registry) -> KeyHosts:
    """Where MCA_API_KEY and config.toml's api_key may go, from the configuration as given."""

    def named_url(*names: Any) -> str:
        name = next((n for n in names if isinstance(n, str) and n.strip()), providers.fallback)
        name = name.strip()
        return providers[name].base_url if name in providers else ""

    env_provider, config_provider = env.get("MCA_PROVIDER"), config.get("provider")
    config_url = _url(config.get("base_url")) or named_url(config_provider, env_provider)
    env_url = _url(env.get("MCA_BASE_URL")) or _url(config.get("base_url"))
    return KeyHosts(env_url or named_url(env_provider, config_provider), config_url)


def find_key(
    spec: ProviderSpec,
    base_url: str,
    env: Mapping[str, str],
    config: Mapping[str, Any],
    hosts: KeyHosts,
) -> tuple[str, str]:
    """(key, where it came from) for `spec` at `base_url`, or ('', '')."""
    tried = [SHARED_KEY_VAR] if base_url and base_url == hosts.env else []
    tried += list(spec.key_vars) if base_url == spec.base_url else []
    for var in tried:
        if env.get(var):
            return env[var], var
    key = config.get("api_key")
    if isinstance(key, str) and key and base_url and base_url == hosts.config:
        return key, CONFIG_KEY
    return "", ""


def missing_key(
    what: str, spec: ProviderSpec, env: Mapping[str, str], hosts: KeyHosts
) -> ConfigError:
    """The error for a provider's own URL with no key for it (saying where MCA_API_KEY goes)."""
    if env.get(SHARED_KEY_VAR):
        return ConfigError(
            f"{what} needs its own key: set {spec.key_vars[0]}. {SHARED_KEY_VAR} is for"
            f" {hosts.env or 'no host'} and goes nowhere else (MCA_PROVIDER={spec.name} sends it"
            " there)"
        )
    return ConfigError(
        f"{what} needs an API key, and none is set: set {spec.key_vars[0]} or {SHARED_KEY_VAR}"
        " (or MCA_BASE_URL for a local server, or MOCK=1 for the offline mock model)"
    )


def key_problem(key: str) -> str:
    """What makes `key` unusable in a header ('' when nothing), without quoting it."""
    if key != key.strip():
        return "has a space or a line end at its start or end"
    for i, c in enumerate(key, 1):
        if c.isspace():
            return f"has a space in it (character {i} of {len(key)})"
        if not " " < c < "\x7f":
            what = "a control character" if ord(c) < 0xA0 else "a character that is not ASCII"
            return f"has {what} in it, U+{ord(c):04X} (character {i} of {len(key)})"
    return ""


def check_key(key: str, where: str) -> None:
    """A ConfigError naming `where` and what is wrong with the key; the key is never shown."""
    problem = key_problem(key)
    if problem:
        raise ConfigError(
            f"{where}: the API key {problem}; fix it where it is set (the key is not shown)"
        )


def secret_forms(values: Iterable[str]) -> tuple[str, ...]:
    """Every text to scrub for these keys: each key as set, trimmed, and each piece of it
    between spaces (a key pasted with a space or a line end in it is still a key), longest
    first so a longer form is replaced before a piece of it."""
    forms: set[str] = set()
    for v in values:
        forms |= {v, v.strip(), *v.split()}
    return tuple(sorted((f for f in forms if len(f) >= MIN_SECRET_CHARS), key=len, reverse=True))


def known_secrets(env: Mapping[str, str], config: Mapping[str, Any]) -> tuple[str, ...]:
    """Every key mca knows of (all providers' variables, the config file), in every form."""
    values = [v for k, v in env.items() if k.endswith("_API_KEY")]
    if isinstance(config.get("api_key"), str):
        values.append(config["api_key"])
    return secret_forms(values)


_CONFIG_KEY_LINE = re.compile(r"""^\s*["']?api_key["']?\s*=\s*(["'])(.*?)\1""", re.M)


def secrets_of(env: Mapping[str, str], home: Path) -> tuple[str, ...]:
    """`known_secrets` where no settings could be built (an error or a crash at the command
    line's edge): config.toml read as well as it can be, also when it is not valid TOML."""
    from mca.config.sources import MAX_CONFIG_BYTES, ConfigFile
    from mca.fs.careful import read_regular

    path = home / "config.toml"
    try:
        return known_secrets(env, ConfigFile(path).data)
    except ConfigError:
        pass
    try:
        text = read_regular(path, cap=MAX_CONFIG_BYTES, follow=True).decode("utf-8", "replace")
    except OSError:
        text = ""
    found = [m.group(2) for m in _CONFIG_KEY_LINE.finditer(text)]
    return secret_forms([*(v for k, v in env.items() if k.endswith("_API_KEY")), *found])
