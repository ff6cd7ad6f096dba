"""Settings: the only place that reads MCA_* variables, *_API_KEY and config.toml."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mca.errors import ConfigError

PROVIDERS = ("openai", "anthropic", "mock")
DEFAULT_MAX_STEPS = 30
DEFAULT_SKILL_BUDGET = 12_000
DEFAULT_CONTEXT_WINDOW = 32_000  # conservative when the model is unknown
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

# Which env variables may hold the key, in the order they are tried.
MAX_CONFIG_BYTES = 1024 * 1024
MIN_SECRET_CHARS = 8  # shorter values are not scrubbed (they would match ordinary text)
KEY_VARS = {
    "openai": ("MCA_API_KEY", "OPENAI_API_KEY"),
    "anthropic": ("MCA_API_KEY", "ANTHROPIC_API_KEY"),
}


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
    yes: bool = False
    mock_script: Path | None = None
    mock_reason: str = ""
    skills_dirs: tuple[Path, ...] = ()
    skill_budget: int = DEFAULT_SKILL_BUDGET
    strict_skills: bool = False
    encoding: str = "o200k_base"
    lab: str = ""
    verbose: bool = False
    show_ledger: bool = False
    record: Path | None = None
    debug: bool = False
    read_timeout: float = 120.0
    retry_base: float = 1.0
    max_tokens: int = 8192

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


def _read_toml(home: Path) -> dict[str, Any]:
    path = home / "config.toml"
    if not path.is_file():
        return {}
    import tomllib  # only when there is a config file: it is not free to import

    from mca.fsutil import read_regular

    try:
        return tomllib.loads(read_regular(path, cap=MAX_CONFIG_BYTES, follow=True).decode())
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None


def _int(value: str | int, name: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None
    if n <= 0:
        raise ConfigError(f"{name} must be positive, got {n}")
    return n


def _float(value: str | float, name: str) -> float:
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if n < 0:
        raise ConfigError(f"{name} must not be negative, got {n}")
    return n


def _infer_provider(model: str, env: Mapping[str, str]) -> str:
    if model.startswith("claude"):
        return "anthropic"
    if model and model != "mock":
        return "openai"
    if env.get("ANTHROPIC_API_KEY") and not env.get("OPENAI_API_KEY"):
        return "anthropic"
    if env.get("OPENAI_API_KEY") or env.get("MCA_API_KEY"):
        return "openai"
    return "mock"


def _find_key(
    provider: str, env: Mapping[str, str], toml: Mapping[str, Any], base_url: str
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
    from_config = str(toml.get("base_url") or "").rstrip("/") == base_url
    if toml.get("api_key") and (not custom or (from_config and not env.get("MCA_BASE_URL"))):
        return str(toml["api_key"]), "config.toml api_key"
    return "", ""


def known_secrets(env: Mapping[str, str], toml: Mapping[str, Any]) -> tuple[str, ...]:
    """Every key mca knows of (all providers' variables, the config file): scrubbed everywhere."""
    values = [v for k, v in env.items() if k.endswith("_API_KEY")]
    if isinstance(toml.get("api_key"), str):
        values.append(toml["api_key"])
    return tuple(sorted({v for v in values if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True))


def _config_warnings(home: Path) -> tuple[str, ...]:
    path = home / "config.toml"
    try:
        mode = path.stat().st_mode
    except OSError:
        return ()
    if mode & 0o077:
        return (
            f"{path} can be read by other users (mode {mode & 0o777:o}) and may hold an API key;"
            f" run: chmod 600 {path}",
        )
    return ()


class _Source:
    """Where a setting comes from: the environment first, then config.toml, then a default."""

    def __init__(self, env: Mapping[str, str], toml: Mapping[str, Any]) -> None:
        self.env, self.toml = env, toml

    def __call__(self, var: str, key: str, default: Any = "") -> Any:
        return self.env.get(var) or self.toml.get(key) or default

    def integer(self, var: str, key: str, default: int) -> int:
        return _int(self(var, key, default), var)

    def number(self, var: str, key: str, default: float) -> float:
        return _float(self(var, key, default), var)


def _model_choice(src: _Source, model: str) -> tuple[str, str, str, str, str]:
    """(provider, model, mock reason, api key, key variable)."""
    env = src.env
    mock_reason = ""
    if env.get("MOCK") == "1" or model == "mock" or env.get("MCA_MOCK_SCRIPT"):
        provider, mock_reason = "mock", "MOCK=1" if env.get("MOCK") == "1" else "--model mock"
    else:
        provider = str(src("MCA_PROVIDER", "provider") or _infer_provider(model, env))
    if provider not in PROVIDERS:
        raise ConfigError(f"unknown provider {provider!r} (available: {', '.join(PROVIDERS)})")
    base_url = str(src("MCA_BASE_URL", "base_url") or "").rstrip("/")
    api_key, key_var = _find_key(provider, env, src.toml, base_url)
    if provider != "mock" and not api_key and not base_url:
        provider = "mock"  # a local server needs no key, but then it needs a base URL
    if provider == "mock":
        return "mock", "mock", mock_reason or "no API key configured", "", ""
    return provider, model or DEFAULT_MODELS[provider], "", api_key, key_var


def load_settings(
    env: Mapping[str, str],
    *,
    workspace: Path,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Resolve settings from env (wins), $MCA_HOME/config.toml, then CLI overrides on top."""
    o = dict(overrides or {})
    home = Path(env.get("MCA_HOME") or Path(env.get("HOME", "~")).expanduser() / ".mca")
    toml = _read_toml(home)
    src = _Source(env, toml)
    requested = str(o.pop("model", None) or src("MCA_MODEL", "model"))
    provider, model, mock_reason, api_key, key_var = _model_choice(src, requested)
    base_url = str(src("MCA_BASE_URL", "base_url") or DEFAULT_BASE_URLS.get(provider, ""))
    window = src("MCA_CONTEXT_WINDOW", "context_window", 0)
    known_window = _int(window, "MCA_CONTEXT_WINDOW") if window else context_window_for(model)
    dirs = [Path(p) for p in str(src("MCA_SKILLS_DIRS", "skills_dirs")).split(":") if p]
    mock_script = env.get("MCA_MOCK_SCRIPT")
    encoding = str(src("MCA_ENCODING", "encoding", "o200k_base"))
    if encoding not in ("o200k_base", "cl100k_base"):
        raise ConfigError(f"unknown encoding {encoding!r} (available: cl100k_base, o200k_base)")
    settings = Settings(
        workspace=workspace.resolve(),
        home=home,
        user_home=Path(env.get("HOME", "~")).expanduser(),
        provider=provider,
        model=model,
        base_url=base_url.rstrip("/"),
        api_key=api_key,
        api_key_var=key_var,
        secrets=known_secrets(env, toml),
        warnings=_config_warnings(home),
        context_window=known_window or DEFAULT_CONTEXT_WINDOW,
        context_window_known=known_window is not None,
        max_steps=src.integer("MCA_MAX_STEPS", "max_steps", DEFAULT_MAX_STEPS),
        mock_script=Path(mock_script) if mock_script else None,
        mock_reason=mock_reason,
        skills_dirs=tuple(Path(d) for d in o.pop("skills_dirs", ())) + tuple(dirs),
        skill_budget=src.integer("MCA_SKILL_BUDGET", "skill_budget", DEFAULT_SKILL_BUDGET),
        encoding=encoding,
        lab=str(env.get("MCA_LAB", "")),
        read_timeout=src.number("MCA_READ_TIMEOUT", "read_timeout", 120.0),
        retry_base=src.number("MCA_RETRY_BASE", "retry_base", 1.0),
        max_tokens=src.integer("MCA_MAX_TOKENS", "max_tokens", 8192),
        debug=env.get("MCA_DEBUG") == "1",
    )
    return settings.with_(**o)
