"""Settings: the only place that reads MCA_* variables, *_API_KEY and config.toml.

Every setting is validated once, here, at start-up. A bad value is one ConfigError naming where
it came from (a flag, a variable, or config.toml and its line) and what is accepted; mca then
exits with status 2. Precedence: command-line flag, then environment, then config.toml, then
the default. An environment variable that is set but empty is an error, not "unset".
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mca.errors import ConfigError
from mca.skills.policy import PRODUCTION, Policy

PROVIDERS = ("openai", "anthropic", "mock")
# Approval modes: what runs without asking.
MODES = {
    "ask": "every edit and every command asks first (the diff before the question)",
    "auto-edit": "edits apply (shown as diffs), commands ask",
    "read-only": "no writes and no commands: the tools refuse, saying why",
    "yolo": "edits and commands run without asking (protected paths still ask)",
}
DEFAULT_MAX_STEPS = 30
DEFAULT_SKILL_BUDGET = 12_000
DEFAULT_CONTEXT_WINDOW = 32_000  # conservative when the model is unknown
MIN_CONTEXT_WINDOW = 1_024
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5", "mock": "mock"}

# Known context windows, matched by prefix (longest prefix wins).
CONTEXT_WINDOWS = {
    "gpt-4o": 128_000,
    "gpt-4.1": 1_000_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "deepseek": 128_000,
    "llama3": 8_192,
    "llama3.1": 128_000,
    "qwen2.5": 32_768,
    "mock": 128_000,
}

MAX_CONFIG_BYTES = 1024 * 1024
MIN_SECRET_CHARS = 8  # shorter values are not scrubbed (they would match ordinary text)
# Which env variables may hold the key, in the order they are tried.
KEY_VARS = {
    "openai": ("MCA_API_KEY", "OPENAI_API_KEY"),
    "anthropic": ("MCA_API_KEY", "ANTHROPIC_API_KEY"),
}
# config.toml [sections] mca reads.
SECTIONS = ("prices",)
# config.toml keys that are not settings of their own above.
OTHER_CONFIG_KEYS = ("api_key",)


@dataclass(frozen=True)
class Settings:
    """Everything a session needs, resolved once at startup."""

    workspace: Path
    home: Path
    user_home: Path = Path("~")
    provider: str = "mock"
    model: str = "mock"
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    api_key_var: str = ""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    warnings: tuple[str, ...] = ()
    context_window: int = DEFAULT_CONTEXT_WINDOW
    context_window_known: bool = False
    max_steps: int = DEFAULT_MAX_STEPS
    stream: bool = True
    mode: str = "auto-edit"  # ask | auto-edit | read-only | yolo (see MODES)
    mock_script: Path | None = None
    mock_reason: str = ""
    skills_dirs: tuple[Path, ...] = ()
    skill_budget: int = DEFAULT_SKILL_BUDGET
    strict_skills: bool = False
    encoding: str = "o200k_base"
    lab: str = ""  # MCA_LAB as given; the command line turns it into `policy`
    policy: Policy = PRODUCTION  # how skills are split, validated, rendered, judged and gated
    verbose: bool = False
    show_ledger: bool = False
    record: Path | None = None
    debug: bool = False
    read_timeout: float = 120.0
    request_timeout: float = 600.0
    retry_base: float = 1.0
    max_tokens: int = 0  # the answer's length limit; 0: a quarter of the window, at most 8,192
    prices: tuple[tuple[str, float, float], ...] = ()  # config.toml [prices]: model, in, out

    @property
    def price_table(self) -> dict[str, tuple[float, float]]:
        return {model: (p_in, p_out) for model, p_in, p_out in self.prices}

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)


def context_window_for(model: str) -> int | None:
    """Known context window for a model name (longest matching prefix), or None."""
    best = ""
    for prefix in CONTEXT_WINDOWS:
        if model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return CONTEXT_WINDOWS[best] if best else None


# -- the sources -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Raw:
    """A value as given, and where it came from (for the error message)."""

    value: Any
    source: str


@dataclass(frozen=True)
class Spec:
    """One setting: its variable, its config.toml key, its flag, and how to check a value."""

    var: str
    key: str
    check: Callable[[Raw], Any]
    flag: str = ""


class ConfigFile:
    """config.toml: its values and the line each top-level key is on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        self.warnings: list[str] = []
        if not path.is_file():
            return
        import tomllib  # only when there is a config file: it is not free to import

        from mca.fsutil import read_regular

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

    def raw(self, spec: Spec) -> Raw | None:
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

    def get(self, spec: Spec, default: Any) -> Any:
        raw = self.raw(spec)
        return default if raw is None else spec.check(raw)


# -- checks ------------------------------------------------------------------------------------
def _bad(raw: Raw, accepted: str) -> ConfigError:
    shown = repr(raw.value) if not isinstance(raw.value, bool) else str(raw.value).lower()
    return ConfigError(f"{raw.source}: must be {accepted}, got {shown}")


def integer(lo: int, hi: int) -> Callable[[Raw], int]:
    accepted = f"an integer from {lo:,} to {hi:,}"

    def check(raw: Raw) -> int:
        v = raw.value
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise _bad(raw, accepted)
        try:
            n = int(v.replace("_", "") if isinstance(v, str) else v)
        except ValueError:
            raise _bad(raw, accepted) from None
        if not lo <= n <= hi:
            raise _bad(raw, accepted)
        return n

    return check


def number(lo: float, hi: float) -> Callable[[Raw], float]:
    accepted = f"a number of seconds from {lo:g} to {hi:g}"

    def check(raw: Raw) -> float:
        v = raw.value
        if isinstance(v, bool) or not isinstance(v, int | float | str):
            raise _bad(raw, accepted)
        try:
            x = float(v)
        except ValueError:
            raise _bad(raw, accepted) from None
        if not math.isfinite(x) or not lo <= x <= hi:
            raise _bad(raw, accepted)
        return x

    return check


def choice(*options: str) -> Callable[[Raw], str]:
    def check(raw: Raw) -> str:
        if not isinstance(raw.value, str) or raw.value not in options:
            raise _bad(raw, "one of " + ", ".join(options))
        return raw.value

    return check


def text(raw: Raw) -> str:
    if not isinstance(raw.value, str) or not raw.value.strip() or "\x00" in raw.value:
        raise _bad(raw, "a non-empty string")
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
        raise _bad(raw, "a list of directory paths")
    return tuple(Path(p) for p in items if str(p))


def _expand(path: Path, user_home: Path) -> Path:
    """~ as the settings' HOME (not necessarily this process's)."""
    text = str(path)
    if text == "~" or text.startswith("~/"):
        return user_home / text[2:]
    return path


SPECS = {
    "provider": Spec("MCA_PROVIDER", "provider", choice(*PROVIDERS)),
    "model": Spec("MCA_MODEL", "model", text, "--model"),
    "base_url": Spec("MCA_BASE_URL", "base_url", url),
    "context_window": Spec(
        "MCA_CONTEXT_WINDOW", "context_window", integer(MIN_CONTEXT_WINDOW, 100_000_000)
    ),
    "max_steps": Spec("MCA_MAX_STEPS", "max_steps", integer(1, 1000), "--max-steps"),
    "skill_budget": Spec("MCA_SKILL_BUDGET", "skill_budget", integer(0, 10_000_000)),
    "encoding": Spec("MCA_ENCODING", "encoding", choice("o200k_base", "cl100k_base")),
    "skills_dirs": Spec("MCA_SKILLS_DIRS", "skills_dirs", paths),
    "read_timeout": Spec("MCA_READ_TIMEOUT", "read_timeout", number(0.1, 3600)),
    "request_timeout": Spec("MCA_REQUEST_TIMEOUT", "request_timeout", number(1, 86_400)),
    "retry_base": Spec("MCA_RETRY_BASE", "retry_base", number(0, 60)),
    "max_tokens": Spec("MCA_MAX_TOKENS", "max_tokens", integer(1, 1_000_000)),
    "mode": Spec("MCA_MODE", "mode", choice(*MODES), "--mode"),
}
FLAGS = {"MOCK": "MOCK", "MCA_DEBUG": "MCA_DEBUG"}


def _switch(env: Mapping[str, str], var: str) -> bool:
    value = env.get(var, "")
    if value not in ("", "0", "1"):
        raise ConfigError(f"{var} must be 1 or 0 (or unset), got {value!r}")
    return value == "1"


# -- keys ----------------------------------------------------------------------------------------
def _find_key(
    provider: str, env: Mapping[str, str], config: ConfigFile, base_url: str
) -> tuple[str, str]:
    """(key, where it came from). A key goes only where it was configured to go:

    - the provider's own URL: MCA_API_KEY, then the provider's variable, then config.toml;
    - a custom base URL from MCA_BASE_URL: only MCA_API_KEY;
    - a custom base URL from config.toml: MCA_API_KEY, then config.toml's api_key.

    A provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY) never goes to a custom URL by inference.
    """
    custom = bool(base_url) and base_url != DEFAULT_BASE_URLS.get(provider)
    names = ("MCA_API_KEY",) if custom else KEY_VARS.get(provider, ())
    for var in names:
        if env.get(var):
            return env[var], var
    key = config.data.get("api_key")
    from_config = str(config.data.get("base_url") or "").rstrip("/") == base_url
    if isinstance(key, str) and key and (not custom or (from_config and "MCA_BASE_URL" not in env)):
        return key, "config.toml api_key"
    return "", ""


def known_secrets(env: Mapping[str, str], config: ConfigFile) -> tuple[str, ...]:
    """Every key mca knows of (all providers' variables, the config file): scrubbed everywhere."""
    values = [v for k, v in env.items() if k.endswith("_API_KEY")]
    if isinstance(config.data.get("api_key"), str):
        values.append(config.data["api_key"])
    return tuple(sorted({v for v in values if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True))


def _config_warnings(config: ConfigFile) -> list[str]:
    out = config.check_keys(set(s.key for s in SPECS.values()) | set(OTHER_CONFIG_KEYS))
    try:
        mode = config.path.stat().st_mode
    except OSError:
        return out
    if mode & 0o077:
        out.append(
            f"{config.path} can be read by other users (mode {mode & 0o777:o}) and may hold an"
            f" API key; run: chmod 600 {config.path}"
        )
    return out


# -- the model -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelChoice:
    provider: str
    model: str
    mock_reason: str = ""
    api_key: str = ""
    key_var: str = ""
    base_url: str = ""


def _infer_provider(model: str, env: Mapping[str, str]) -> str:
    if model.startswith("claude"):
        return "anthropic"
    if model:
        return "openai"
    if env.get("ANTHROPIC_API_KEY") and not env.get("OPENAI_API_KEY"):
        return "anthropic"
    if env.get("OPENAI_API_KEY") or env.get("MCA_API_KEY"):
        return "openai"
    return "mock"


def _model_choice(src: Sources) -> ModelChoice:
    """Which model: the mock only when nothing real was asked for (or it was asked for)."""
    env = src.env
    model_raw = src.raw(SPECS["model"])
    model = SPECS["model"].check(model_raw) if model_raw else ""
    if _switch(env, "MOCK") or model == "mock" or env.get("MCA_MOCK_SCRIPT"):
        why = "MOCK=1" if _switch(env, "MOCK") else "MCA_MOCK_SCRIPT" if model != "mock" else ""
        return ModelChoice("mock", "mock", why or f"{model_raw.source if model_raw else ''} mock")
    provider_raw = src.raw(SPECS["provider"])
    base_raw = src.raw(SPECS["base_url"])
    base_url = url(base_raw) if base_raw else ""
    if provider_raw:
        provider = SPECS["provider"].check(provider_raw)
    elif base_url and not model:
        raise ConfigError(
            f"{base_raw.source if base_raw else 'MCA_BASE_URL'} is set, but nothing says which"
            " protocol that server speaks: set MCA_PROVIDER=openai (OpenAI-compatible servers:"
            " Ollama, vLLM, llama.cpp, LM Studio) or MCA_PROVIDER=anthropic, or name a model"
        )
    else:
        provider = _infer_provider(model, env)
    if provider == "mock":
        why = f"{provider_raw.source}=mock" if provider_raw else "no API key configured"
        return ModelChoice("mock", "mock", why)
    base_url = base_url or DEFAULT_BASE_URLS[provider]
    api_key, key_var = _find_key(provider, env, src.config, base_url)
    if not api_key and base_url == DEFAULT_BASE_URLS[provider]:
        asked = (model_raw or provider_raw or Raw("", "")).source
        var = KEY_VARS[provider][1]
        raise ConfigError(
            f"{asked}: {provider} model {model or DEFAULT_MODELS[provider]!r} needs an API key,"
            f" and none is set: set {var} or MCA_API_KEY (or MCA_BASE_URL for a local server,"
            " or MOCK=1 for the offline mock model)"
        )
    return ModelChoice(provider, model or DEFAULT_MODELS[provider], "", api_key, key_var, base_url)


def _prices(config: ConfigFile) -> tuple[tuple[str, float, float], ...]:
    """[prices] "model" = { input = 2.5, output = 10.0 }: USD per million tokens."""
    table = config.data.get("prices", {})
    where = f"{config.path} [prices]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table of models")
    out = []
    for model, entry in table.items():
        ok = isinstance(entry, dict) and set(entry) == {"input", "output"}
        values = [entry.get("input"), entry.get("output")] if ok else []
        if not ok or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e6 for v in values
        ):
            raise ConfigError(
                f"{where} {model!r}: expected {{ input = N, output = N }}, USD per million"
                " tokens (numbers from 0)"
            )
        out.append((str(model), float(values[0]), float(values[1])))
    return tuple(out)


def _mock_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("MCA_MOCK_SCRIPT")
    if value is None:
        return None
    if not value.strip():
        raise ConfigError("MCA_MOCK_SCRIPT is set but empty: unset it or name a script file")
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(f"MCA_MOCK_SCRIPT: {value!r} is not a file")
    return path


def load_settings(
    env: Mapping[str, str],
    *,
    workspace: Path,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Resolve and check settings: flags (overrides) win, then env, then config.toml."""
    o = dict(overrides or {})
    home_value = env.get("MCA_HOME")
    if home_value is not None and not home_value.strip():
        raise ConfigError("MCA_HOME is set but empty: unset it or name a directory")
    user_home = Path(env.get("HOME") or "~").expanduser()
    home = Path(home_value).expanduser() if home_value else user_home / ".mca"
    config = ConfigFile(home / "config.toml")
    flags = {
        "model": o.pop("model", None),
        "max_steps": o.pop("max_steps", None),
        "mode": o.pop("mode", None) or ("yolo" if o.pop("yes", False) else None),
    }
    src = Sources(flags, env, config)
    for spec in SPECS.values():  # every setting is checked, used or not
        src.get(spec, None)
    choice_ = _model_choice(src)
    window = src.get(SPECS["context_window"], None) or context_window_for(choice_.model)
    settings = Settings(
        workspace=workspace.resolve(),
        home=home,
        user_home=user_home,
        provider=choice_.provider,
        model=choice_.model,
        base_url=choice_.base_url,
        api_key=choice_.api_key,
        api_key_var=choice_.key_var,
        secrets=known_secrets(env, config),
        warnings=tuple(_config_warnings(config)),
        context_window=window or DEFAULT_CONTEXT_WINDOW,
        context_window_known=window is not None,
        max_steps=src.get(SPECS["max_steps"], DEFAULT_MAX_STEPS),
        mock_script=_mock_path(env),
        mock_reason=choice_.mock_reason,
        skills_dirs=tuple(
            _expand(Path(d), user_home)
            for d in (*o.pop("skills_dirs", ()), *src.get(SPECS["skills_dirs"], ()))
        ),
        skill_budget=src.get(SPECS["skill_budget"], DEFAULT_SKILL_BUDGET),
        encoding=src.get(SPECS["encoding"], "o200k_base"),
        lab=str(env.get("MCA_LAB", "")),
        read_timeout=src.get(SPECS["read_timeout"], 120.0),
        request_timeout=src.get(SPECS["request_timeout"], 600.0),
        retry_base=src.get(SPECS["retry_base"], 1.0),
        max_tokens=src.get(SPECS["max_tokens"], 0),
        mode=src.get(SPECS["mode"], "auto-edit"),
        debug=_switch(env, "MCA_DEBUG"),
        prices=_prices(config),
    )
    if o.get("record") is not None:
        _check_record(Path(o["record"]))
    return settings.with_(**o)


def _check_record(path: Path) -> None:
    if path.is_dir():
        raise ConfigError(f"--record: {path} is a directory; name a file")
    if not path.parent.is_dir():
        raise ConfigError(f"--record: the directory {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK):
        raise ConfigError(f"--record: cannot write in {path.parent}")


_IMPLIED = {"claude": "anthropic", "gpt-": "openai", "chatgpt": "openai", "o1": "openai"}
_IMPLIED |= {"o3": "openai", "o4": "openai"}


class ModelChooser:
    """/model: what is configured, and the settings for another model name (same sources)."""

    def __init__(self, env: Mapping[str, str], workspace: Path, overrides: Mapping[str, Any]):
        self.env, self.workspace, self.overrides = dict(env), workspace, dict(overrides)

    def available(self) -> list[str]:
        lines = []
        for provider in ("openai", "anthropic"):
            var = next((v for v in KEY_VARS[provider] if self.env.get(v)), "")
            state = f"key in {var}" if var else f"no key (set {KEY_VARS[provider][1]})"
            lines.append(f"  {provider:<10} {state}; default model {DEFAULT_MODELS[provider]}")
        if self.env.get("MCA_BASE_URL"):
            lines.append(
                f"  server     MCA_BASE_URL={self.env['MCA_BASE_URL']}: any model it serves"
            )
        lines.append("  mock       the offline mock model: /model mock")
        return ["configured:", *lines, "switch with /model NAME (the conversation stays)"]

    def to(self, name: str, current: Settings) -> Settings:
        """Settings for `name`; ConfigError (naming what is missing) when it cannot be used."""
        env = dict(self.env)
        implied = next((p for prefix, p in _IMPLIED.items() if name.startswith(prefix)), None)
        if implied and implied != current.provider and name != "mock":
            env["MCA_PROVIDER"] = implied  # the name says which API it needs
            if env.pop("MCA_BASE_URL", None) is not None:
                env.pop("MCA_API_KEY", None)  # that key was for the server left behind
        overrides = {**self.overrides, "model": name}
        settings = load_settings(env, workspace=self.workspace, overrides=overrides)
        if settings.model != name:
            raise ConfigError(
                f"cannot switch to {name!r}: {settings.mock_reason or 'the settings'} keeps"
                f" the model {settings.model!r}"
            )
        return settings
