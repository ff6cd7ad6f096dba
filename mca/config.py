"""Settings: the only place that reads MCA_* variables, *_API_KEY and config.toml.

Every setting is validated once, here, at start-up. A bad value is one ConfigError naming where
it came from (a flag, a variable, or config.toml and its line) and what is accepted; mca then
exits with status 2. Precedence: command-line flag, then environment, then config.toml, then
the default. An environment variable that is set but empty is an error, not "unset".
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mca.config_checks import Raw, boolean, budget, choice, integer, number, paths, text, url
from mca.config_sources import ConfigFile, Sources, Spec, prices_of
from mca.errors import ConfigError
from mca.keys import (
    CONFIG_KEY,
    KeyHosts,
    check_key,
    find_key,
    key_hosts,
    known_secrets,
    missing_key,
)
from mca.models.catalog import ModelInfo, Price
from mca.models.registry import MOCK, PROVIDERS, SHARED_KEY_VAR, ProviderSpec, Registry
from mca.turn import DEFAULT_MAX_STEPS

if TYPE_CHECKING:  # the skill runtime is imported when skills are, not with the settings
    from mca.skills.policy import Policy

# Approval modes: what runs without asking.
MODES = {
    "ask": "every edit and every command asks first (the diff before the question)",
    "auto-edit": "edits apply (shown as diffs); commands run in the sandbox, or ask without one",
    "read-only": "no writes and no commands: the tools refuse, saying why",
    "yolo": "edits and commands run without asking (protected paths still ask)",
}
SANDBOX_MODES = ("workspace-write", "read-only", "off")
DEFAULT_SKILL_BUDGET = 12_000
DEFAULT_CONTEXT_WINDOW = 32_000  # conservative when the model is unknown
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
MIN_CONTEXT_WINDOW = 1_024
# How hard a reasoning model thinks (OpenAI's reasoning_effort; Anthropic's effort, or a budget)
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
MIN_THINKING = 1_024  # the least budget_tokens Anthropic accepts
# config.toml keys that are not settings of their own below.
OTHER_CONFIG_KEYS = ("api_key",)


class SPECS:
    """Every setting a flag, a variable or config.toml can give."""

    # checked against the registry of providers first (load_settings), text here
    provider = Spec("MCA_PROVIDER", "provider", text, MOCK)
    model = Spec("MCA_MODEL", "model", text, MOCK, "--model")
    base_url = Spec("MCA_BASE_URL", "base_url", url, "")
    context_window = Spec(
        "MCA_CONTEXT_WINDOW",
        "context_window",
        integer(MIN_CONTEXT_WINDOW, 100_000_000),
        DEFAULT_CONTEXT_WINDOW,
    )
    max_steps = Spec(
        "MCA_MAX_STEPS", "max_steps", integer(1, 1000), DEFAULT_MAX_STEPS, "--max-steps"
    )
    skill_budget = Spec(
        "MCA_SKILL_BUDGET", "skill_budget", integer(0, 10_000_000), DEFAULT_SKILL_BUDGET
    )
    encoding = Spec("MCA_ENCODING", "encoding", choice("o200k_base", "cl100k_base"), "o200k_base")
    skills_dirs: Spec[tuple[Path, ...]] = Spec("MCA_SKILLS_DIRS", "skills_dirs", paths, ())
    read_timeout = Spec("MCA_READ_TIMEOUT", "read_timeout", number(0.1, 3600), 120.0)
    request_timeout = Spec("MCA_REQUEST_TIMEOUT", "request_timeout", number(1, 86_400), 600.0)
    retry_base = Spec("MCA_RETRY_BASE", "retry_base", number(0, 60), 1.0)
    # the answer's length limit; 0: a quarter of the window, at most 8,192
    max_tokens = Spec("MCA_MAX_TOKENS", "max_tokens", integer(1, 1_000_000), 0)
    # which wire protocol to speak ('': the model's record, else the provider's first)
    wire = Spec("MCA_WIRE", "wire", choice("chat", "responses", "messages"), "")
    # a reasoning model's effort ('': the model's own default); Anthropic thinking's budget
    reasoning = Spec("MCA_REASONING", "reasoning", choice(*EFFORTS), "", "--reasoning")
    thinking = Spec("MCA_THINKING", "thinking", budget(MIN_THINKING, 1_000_000), 0, "--thinking")
    # the most a server's answer may take in memory (a body, a stream line, an assembled reply)
    max_response_bytes = Spec(
        "MCA_MAX_RESPONSE_BYTES",
        "max_response_bytes",
        integer(64 * 1024, 1024**3),
        DEFAULT_MAX_RESPONSE_BYTES,
    )
    # what a workspace checkpoint keeps (bytes per file, bytes in all; a total of 0: none)
    checkpoint_file_cap = Spec(
        "MCA_CHECKPOINT_FILE_CAP", "checkpoint_file_cap", integer(0, 2**40), 8 << 20
    )
    checkpoint_cap = Spec("MCA_CHECKPOINT_CAP", "checkpoint_cap", integer(0, 2**50), 512 << 20)
    mode = Spec("MCA_MODE", "mode", choice(*MODES), "auto-edit", "--mode")  # see MODES
    # what commands mca runs for the model may reach (mca.sandbox.policy.Mode)
    sandbox = Spec("MCA_SANDBOX", "sandbox", choice(*SANDBOX_MODES), "workspace-write", "--sandbox")
    network = Spec("MCA_NETWORK", "network", boolean, False, "--allow-network")
    # paths commands may not read, beside the built-in list (~/.ssh, ~/.aws, ...)
    sandbox_deny_read: Spec[tuple[Path, ...]] = Spec(
        "MCA_SANDBOX_DENY_READ", "sandbox_deny_read", paths, ()
    )

    @classmethod
    def all(cls) -> Iterator[Spec[Any]]:
        return (v for v in vars(cls).values() if isinstance(v, Spec))


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
    context_window_known: bool = False
    max_steps: int = SPECS.max_steps.default
    stream: bool = True
    mode: str = SPECS.mode.default
    sandbox: str = SPECS.sandbox.default
    sandbox_source: str = ""  # where a sandbox other than the default was asked for
    network: bool = SPECS.network.default
    sandbox_deny_read: tuple[Path, ...] = SPECS.sandbox_deny_read.default
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


def _switch(env: Mapping[str, str], var: str) -> bool:
    value = env.get(var, "")
    if value not in ("", "0", "1"):
        raise ConfigError(f"{var} must be 1 or 0 (or unset), got {value!r}")
    return value == "1"


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


# -- the model -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelChoice:
    provider: str
    model: str
    mock_reason: str = ""
    api_key: str = ""
    key_var: str = ""
    base_url: str = ""


def _model_choice(src: Sources, providers: Registry, named: str, hosts: KeyHosts) -> ModelChoice:
    """Which model: the mock only when nothing real was asked for (or it was asked for)."""
    env = src.env
    model_raw = src.raw(SPECS.model)
    model = src.given(SPECS.model) or ""
    if _switch(env, "MOCK") or model == MOCK or env.get("MCA_MOCK_SCRIPT"):
        why = "MOCK=1" if _switch(env, "MOCK") else "MCA_MOCK_SCRIPT" if model != MOCK else ""
        return ModelChoice(MOCK, MOCK, why or f"{model_raw.source if model_raw else ''} mock")
    provider_raw = src.raw(SPECS.provider)
    base_raw = src.raw(SPECS.base_url)
    base_url = src.get(SPECS.base_url)
    if not named and base_url and not model:
        raise ConfigError(
            f"{base_raw.source if base_raw else 'MCA_BASE_URL'} is set, but nothing says which"
            " protocol that server speaks: set MCA_PROVIDER=openai (OpenAI-compatible servers:"
            " Ollama, vLLM, llama.cpp, LM Studio) or MCA_PROVIDER=anthropic, or name a model"
        )
    spec = providers[named or providers.infer(model, env)]
    if spec.name == MOCK:
        why = f"{provider_raw.source}=mock" if provider_raw else "no API key configured"
        return ModelChoice(MOCK, MOCK, why)
    base_url = base_url or spec.base_url
    api_key, key_var = find_key(spec, base_url, env, src.config.data, hosts)
    if api_key:
        check_key(api_key, src.config.where("api_key") if key_var == CONFIG_KEY else key_var)
    elif spec.key_vars and base_url == spec.base_url:
        asked = (model_raw or provider_raw or Raw("", "")).source
        what = f"{asked}: {spec.name} model {model or spec.default_model!r} at {base_url}"
        raise missing_key(what, spec, env, hosts)
    model = model or spec.default_model
    return ModelChoice(spec.name, model, "", api_key, key_var, base_url)


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
    flags = {
        "model": o.pop("model", None),
        "max_steps": o.pop("max_steps", None),
        "mode": _mode_flag(o.pop("mode", None), o.pop("yes", False)),
        "sandbox": o.pop("sandbox", None),
        "network": o.pop("network", None),
        "reasoning": o.pop("reasoning", None),
        "thinking": o.pop("thinking", None),
    }
    src = Sources(flags, env, config)
    provider_raw = src.raw(SPECS.provider)
    named = providers.check(provider_raw) if provider_raw else ""
    for spec in SPECS.all():  # every setting is checked, used or not
        src.get(spec)
    hosts = hosts or key_hosts(env, config.data, providers)
    choice_ = _model_choice(src, providers, named, hosts)
    window = src.given(SPECS.context_window) or providers.window_for(choice_.model)
    settings = Settings(
        workspace=workspace.resolve(),
        home=home,
        user_home=user_home,
        provider=choice_.provider,
        model=choice_.model,
        base_url=choice_.base_url,
        api_key=choice_.api_key,
        api_key_var=choice_.key_var,
        secrets=known_secrets(env, config.data),
        warnings=tuple(_config_warnings(config)),
        context_window=window or SPECS.context_window.default,
        context_window_known=window is not None,
        max_steps=src.get(SPECS.max_steps),
        mock_script=_mock_path(env),
        mock_reason=choice_.mock_reason,
        skills_dirs=tuple(
            _expand(Path(d), user_home)
            for d in (*o.pop("skills_dirs", ()), *src.get(SPECS.skills_dirs))
        ),
        skill_budget=src.get(SPECS.skill_budget),
        encoding=src.get(SPECS.encoding),
        lab=str(env.get("MCA_LAB", "")),
        read_timeout=src.get(SPECS.read_timeout),
        request_timeout=src.get(SPECS.request_timeout),
        retry_base=src.get(SPECS.retry_base),
        max_tokens=src.get(SPECS.max_tokens),
        wire=_wire(src, providers, choice_),
        reasoning=src.get(SPECS.reasoning),
        thinking=src.get(SPECS.thinking),
        max_response_bytes=src.get(SPECS.max_response_bytes),
        checkpoint_file_cap=src.get(SPECS.checkpoint_file_cap),
        checkpoint_cap=src.get(SPECS.checkpoint_cap),
        mode=src.get(SPECS.mode),
        sandbox=src.get(SPECS.sandbox),
        sandbox_source=(src.raw(SPECS.sandbox) or Raw("", "")).source,
        network=src.get(SPECS.network),
        sandbox_deny_read=tuple(
            _expand(Path(d), user_home) for d in src.get(SPECS.sandbox_deny_read)
        ),
        debug=_switch(env, "MCA_DEBUG"),
        prices=prices_of(config),
        providers=providers,
    )
    if o.get("record") is not None:
        _check_record(Path(o["record"]))
    return settings.with_(**o)


def _wire(src: Sources, providers: Registry, chosen: ModelChoice) -> str:
    """The wire for the chosen model: one its provider speaks (a ConfigError naming them when
    the one asked for is not), else the model's record's, else the provider's first."""
    spec = providers[chosen.provider]
    asked = src.get(SPECS.wire)
    if asked and spec.wires and asked not in spec.wires:
        raw = src.raw(SPECS.wire)
        speaks = ", ".join(spec.wires) or "none"
        raise ConfigError(
            f"{raw.source if raw else 'wire'}: {spec.name} does not speak {asked!r}"
            f" (it speaks: {speaks})"
        )
    return providers.wire_for(spec, chosen.model, asked)


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


class ModelChooser:
    """/model: what is configured, and the settings for another model name (same sources).

    The shared keys stay bound to the hosts they were configured for at start-up (mca.keys):
    a name that implies another provider gets that provider's own key, or an error saying it
    is needed; a custom server keeps every name that implies no other provider."""

    def __init__(
        self,
        env: Mapping[str, str],
        workspace: Path,
        overrides: Mapping[str, Any],
        providers: Registry = PROVIDERS,
    ) -> None:
        self.env, self.workspace, self.overrides = dict(env), workspace, dict(overrides)
        self.providers = providers
        self._hosts: KeyHosts | None = None

    @property
    def hosts(self) -> KeyHosts:
        """Where the shared keys were configured to go (read once, as mca started)."""
        if self._hosts is None:
            config = ConfigFile(homes(self.env)[1] / "config.toml")
            self._hosts = key_hosts(self.env, config.data, self.providers)
        return self._hosts

    def available(self) -> list[str]:
        keyed = [s for s in self.providers if s.key_vars]
        lines = []
        for spec in keyed:
            shared = (SHARED_KEY_VAR,) if self.hosts.env == spec.base_url else ()
            var = next((v for v in (*shared, *spec.key_vars) if self.env.get(v)), "")
            state = f"key in {var}" if var else f"no key (set {spec.key_vars[0]})"
            lines.append(f"  {spec.name:<10} {state}; default model {spec.default_model}")
        if self.env.get("MCA_BASE_URL"):
            key = f" (key in {SHARED_KEY_VAR})" if self.env.get(SHARED_KEY_VAR) else ""
            lines.append(
                f"  server     MCA_BASE_URL={self.env['MCA_BASE_URL']}: any model it serves{key}"
            )
        for spec in self.providers:
            if not spec.key_vars:
                lines.append(f"  {spec.name:<10} {spec.about}: /model {spec.default_model}")
        return ["configured:", *lines, "switch with /model NAME (the conversation stays)"]

    def to(self, name: str, current: Settings) -> Settings:
        """Settings for `name`; ConfigError (naming what is missing) when it cannot be used."""
        env = dict(self.env)
        implied = self.providers.implied(name)  # the same rule as at start-up
        if implied is not None and implied.name != current.provider:
            env["MCA_PROVIDER"] = implied.name  # the name says which API it needs
            env.pop("MCA_BASE_URL", None)  # the server left behind speaks the other one
        overrides = {**self.overrides, "model": name}
        try:
            settings = load_settings(
                env,
                workspace=self.workspace,
                overrides=overrides,
                providers=self.providers,
                hosts=self.hosts,
            )
        except ConfigError as e:  # the name came from /model, not from a --model flag
            flag = f"{SPECS.model.flag}:"
            raise ConfigError(f"/model {name}: {str(e).removeprefix(flag).strip()}") from None
        if settings.model != name:
            raise ConfigError(
                f"cannot switch to {name!r}: {settings.mock_reason or 'the settings'} keeps"
                f" the model {settings.model!r}"
            )
        return settings
