"""Settings: the only place that reads MCA_* variables, *_API_KEY and config.toml (and the
variables that say where tools keep their credentials, for the sandbox's secret list).

Every setting is validated once, here, at start-up. A bad value is one ConfigError naming where
it came from (a flag, a variable, or config.toml and its line) and what is accepted; mca then
exits with status 2. Precedence: command-line flag, then environment, then config.toml, then
the default. An environment variable that is set but empty is an error, not "unset".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mca.config.apikeys import KeyHosts, key_hosts, known_secrets
from mca.config.provider import ModelChoice, mock_path, model_choice, wire_for
from mca.config.sources import ConfigFile, Sources, prices_of
from mca.config.specs import OTHER_CONFIG_KEYS, SPECS, switch
from mca.config.values import Raw, choice
from mca.errors import ConfigError
from mca.models.known import ModelInfo, Price
from mca.models.registry import PROVIDERS, ProviderSpec, Registry

if TYPE_CHECKING:  # the skill runtime is imported when skills are, not with the settings
    from mca.skills.policy import Policy

__all__ = ["Settings", "homes", "load_settings"]


@dataclass(frozen=True)
class Settings:
    """Everything a session needs, resolved once at startup."""

    workspace: Path
    home: Path
    user_home: Path = Path("~")
    provider: str = SPECS.provider.default
    model: str = SPECS.model.default
    base_url: str = SPECS.base_url.default
    api_key: str = field(default="", repr=False)
    api_key_var: str = ""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    warnings: tuple[str, ...] = ()
    context_window: int = SPECS.context_window.default
    context_window_from: str = ""  # where the figure came from ('' : assumed, the default)
    max_steps: int = SPECS.max_steps.default
    stream: bool = True
    mode: str = SPECS.mode.default
    sandbox: str = SPECS.sandbox.default
    sandbox_source: str = ""  # where a sandbox other than the default was asked for
    network: bool = SPECS.network.default
    allow_git: bool = SPECS.allow_git.default
    sandbox_deny_read: tuple[Path, ...] = SPECS.sandbox_deny_read.default
    sandbox_writable: tuple[Path, ...] = SPECS.sandbox_writable.default
    pass_env: tuple[str, ...] = SPECS.pass_env.default
    # the variables that move tools' credentials ($GNUPGHOME, $XDG_CONFIG_HOME …), as mca started
    place_vars: tuple[tuple[str, str], ...] = ()
    mock_script: Path | None = None
    mock_reason: str = ""
    skills_dirs: tuple[Path, ...] = SPECS.skills_dirs.default
    skill_budget: int = SPECS.skill_budget.default
    strict_skills: bool = False
    encoding: str = SPECS.encoding.default
    lab: str = ""  # MCA_LAB as given; the command line turns it into `policy`
    # how skills are split, validated, rendered, judged and gated; None: production's
    policy: Policy | None = None
    verbose: bool = False
    show_ledger: bool = False
    record: Path | None = None
    debug: bool = False
    no_color: bool = False  # NO_COLOR is set (https://no-color.org)
    read_timeout: float = SPECS.read_timeout.default
    request_timeout: float = SPECS.request_timeout.default
    retry_base: float = SPECS.retry_base.default
    max_tokens: int = SPECS.max_tokens.default
    wire: str = SPECS.wire.default
    reasoning: str = SPECS.reasoning.default
    thinking: int = SPECS.thinking.default
    max_response_bytes: int = SPECS.max_response_bytes.default
    checkpoint_file_cap: int = SPECS.checkpoint_file_cap.default
    checkpoint_cap: int = SPECS.checkpoint_cap.default
    prices: tuple[tuple[str, Price], ...] = ()  # config.toml [prices]
    providers: Registry = field(default=PROVIDERS, repr=False, compare=False)

    @property
    def context_window_known(self) -> bool:
        """The window came from a setting or the catalog (not the assumed default)."""
        return bool(self.context_window_from)

    @property
    def price_table(self) -> dict[str, Price]:
        return dict(self.prices)

    @property
    def model_info(self) -> ModelInfo | None:
        """What the registry knows of the model (window, prices, wire, how it reasons)."""
        return self.providers.model(self.model)

    @property
    def own_api(self) -> bool:
        """Is the base URL the provider's own (not a compatible server or a proxy)?"""
        return bool(self.base_url) and self.base_url == self.spec.base_url

    @property
    def spec(self) -> ProviderSpec:
        """The provider's entry in the registry."""
        return self.providers[self.provider]

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)


def _expand(path: Path, user_home: Path) -> Path:
    """~ as the settings' HOME (not necessarily this process's)."""
    text = str(path)
    if text == "~" or text.startswith("~/"):
        return user_home / text[2:]
    return path


def _config_warnings(config: ConfigFile) -> list[str]:
    out = config.check_keys(set(s.key for s in SPECS.all()) | set(OTHER_CONFIG_KEYS))
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


def homes(env: Mapping[str, str]) -> tuple[Path, Path]:
    """(the user's HOME, mca's home: $MCA_HOME or ~/.mca)."""
    home_value = env.get("MCA_HOME")
    if home_value is not None and not home_value.strip():
        raise ConfigError("MCA_HOME is set but empty: unset it or name a directory")
    user_home = Path(env.get("HOME") or "~").expanduser()
    return user_home, Path(home_value).expanduser() if home_value else user_home / ".mca"


def load_settings(
    env: Mapping[str, str],
    *,
    workspace: Path,
    overrides: Mapping[str, Any] | None = None,
    providers: Registry = PROVIDERS,
    hosts: KeyHosts | None = None,
) -> Settings:
    """Resolve and check settings: flags (overrides) win, then env, then config.toml. `hosts`
    says where the shared keys may go (/model passes the ones mca started with)."""
    o = dict(overrides or {})
    user_home, home = homes(env)
    config = ConfigFile(home / "config.toml")
    src = Sources(_flags(o), env, config)
    provider_raw = src.raw(SPECS.provider)
    named = choice(*providers.names())(provider_raw) if provider_raw else ""
    for spec in SPECS.all():  # every setting is checked, used or not
        src.get(spec)
    chosen = model_choice(src, providers, named, hosts or key_hosts(env, config.data, providers))
    dirs = (*o.pop("skills_dirs", ()), *src.get(SPECS.skills_dirs))
    settings = Settings(
        workspace=workspace.resolve(),
        home=home,
        user_home=user_home,
        secrets=known_secrets(env, config.data),
        warnings=tuple(_config_warnings(config)),
        skills_dirs=tuple(_expand(Path(d), user_home) for d in dirs),
        lab=str(env.get("MCA_LAB", "")),
        debug=switch(env, "MCA_DEBUG"),
        no_color=bool(env.get("NO_COLOR")),
        prices=prices_of(config),
        providers=providers,
        **_model(src, providers, chosen),
        **_limits(src),
        **_sandbox(src, user_home, home),
    )
    if o.get("record") is not None:
        _check_record(Path(o["record"]))
    return settings.with_(**o)


def _flags(o: dict[str, Any]) -> dict[str, Any]:
    """The settings the command line gives (taken out of `o`; the rest are Settings fields)."""
    keys = ("model", "max_steps", "sandbox", "network", "allow_git", "reasoning", "thinking")
    flags = {k: o.pop(k, None) for k in keys}
    flags["mode"] = _mode_flag(o.pop("mode", None), o.pop("yes", False))
    return flags


def _model(src: Sources, providers: Registry, chosen: ModelChoice) -> dict[str, Any]:
    """The model's fields: who serves it, where, with which key, its window and wire."""
    window, where = _window(src, providers, chosen.model)
    return {
        "provider": chosen.provider,
        "model": chosen.model,
        "base_url": chosen.base_url,
        "api_key": chosen.api_key,
        "api_key_var": chosen.key_var,
        "mock_script": mock_path(src.env),
        "mock_reason": chosen.mock_reason,
        "context_window": window or SPECS.context_window.default,
        "context_window_from": where,
        "wire": wire_for(src, providers, chosen),
        "reasoning": src.get(SPECS.reasoning),
        "thinking": src.get(SPECS.thinking),
    }


def _window(src: Sources, providers: Registry, model: str) -> tuple[int | None, str]:
    """The context window and where it came from: a setting, else mca's catalog (None and ''
    when neither says: the default is assumed, unless the server says at the session's start)."""
    raw = src.raw(SPECS.context_window)
    if raw is not None:
        return SPECS.context_window.check(raw), f"set by {raw.source}"
    known = providers.window_for(model)
    return (known, f"mca's catalog for {model}") if known else (None, "")


def _limits(src: Sources) -> dict[str, Any]:
    """The numbers: steps, budgets, timeouts, caps."""
    names = (
        "max_steps skill_budget encoding read_timeout request_timeout retry_base max_tokens"
        " max_response_bytes checkpoint_file_cap checkpoint_cap mode"
    )
    return {name: src.get(getattr(SPECS, name)) for name in names.split()}


def _sandbox(src: Sources, user_home: Path, home: Path) -> dict[str, Any]:
    """What commands may reach, and what of mca's environment they keep."""
    from mca.sandbox.credentials import VARIABLES

    deny = tuple(_expand(Path(d), user_home) for d in src.get(SPECS.sandbox_deny_read))
    return {
        "sandbox": src.get(SPECS.sandbox),
        "sandbox_source": (src.raw(SPECS.sandbox) or Raw("", "")).source,
        "network": src.get(SPECS.network),
        "allow_git": src.get(SPECS.allow_git),
        "sandbox_deny_read": deny,
        "sandbox_writable": _writable(src, user_home, home, deny),
        "pass_env": src.get(SPECS.pass_env),
        "place_vars": tuple((k, v) for k, v in src.env.items() if k in VARIABLES),
    }


def _writable(
    src: Sources, user_home: Path, home: Path, deny: tuple[Path, ...]
) -> tuple[Path, ...]:
    """sandbox_writable: absolute or ~/ paths, none of them /, your home, a directory above it,
    or a secret's (one of the deny list, $MCA_HOME) or one holding it."""
    from mca.sandbox.rights import secret_paths, unwritable

    secrets = secret_paths(user_home, home, tuple(str(d) for d in deny), src.env)
    out = []
    for given in src.get(SPECS.sandbox_writable):
        text = str(given)
        path = _expand(Path(text), user_home)
        why = unwritable(path, user_home, secrets)
        if why:
            where = (src.raw(SPECS.sandbox_writable) or Raw("", "sandbox_writable")).source
            raise ConfigError(
                f"{where}: {text!r} cannot be made writable for commands: {why}; name the"
                " cache directories themselves (for example ~/.cache/uv)"
            )
        out.append(path)
    return tuple(out)


def _mode_flag(mode: str | None, yes: bool) -> str | None:
    """--mode, or --yes (the same as --mode yolo); both only when they agree."""
    if yes and mode not in (None, "yolo"):
        raise ConfigError(f"--mode {mode} and --yes (which means --mode yolo): give one of them")
    return mode or ("yolo" if yes else None)


def _check_record(path: Path) -> None:
    if path.is_dir():
        raise ConfigError(f"--record: {path} is a directory; name a file")
    if not path.parent.is_dir():
        raise ConfigError(f"--record: the directory {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK):
        raise ConfigError(f"--record: cannot write in {path.parent}")
