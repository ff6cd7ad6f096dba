"""Model providers: one record per provider, and the registry that looks them up by name.

A `ProviderSpec` holds everything mca knows about one provider: how to build its client (a lazy
import of its wire module, so start-up never loads httpx), its default base URL and model, the
variables its key may be in, the wires it speaks and the records of the models it serves.
Start-up (`mca.config.settings.load_settings`), `/model`, `/cost`, the banner and the session
all read it through `Settings.providers`, so adding a provider is one entry here plus its wire
module; tests pass their own `Registry` to `load_settings(providers=...)`.

Which provider a model name implies, one rule for start-up and `/model` alike (`Registry.infer`):

1. At start-up a provider that is named (MCA_PROVIDER, config.toml `provider`) wins: an
   OpenAI-compatible proxy may serve a "claude-..." name.
2. Otherwise the entry with the longest `implied_by` prefix of the name: "claude" -> anthropic;
   "gpt-", "chatgpt", "o1", "o3", "o4" -> openai, except the open-weight names any server
   serves ("gpt-oss"), which imply none. `/model NAME` applies the same prefixes, and a name
   implying another provider than the current one switches to that provider (leaving a custom
   MCA_BASE_URL behind, saying so), with that provider's own key: MCA_API_KEY goes only to the
   host it was configured for (mca.config.apikeys).
3. A name that implies no provider goes to the fallback, openai: its wire is the one local and
   compatible servers speak (Ollama, vLLM, llama.cpp, LM Studio), and they serve any name.
4. No name at all: the first provider, in registry order, whose own key variable is set (openai
   before anthropic); else the fallback when only MCA_API_KEY is set; else the mock.

Which key goes where is mca.config.apikeys: a name never moves a key to another host.

A provider's models are records (`mca.models.known`): window, prices, the wire a model is
served on best, how it is told to reason. They are matched by the longest prefix of the model
name over all entries: a model's facts do not depend on which wire reached it. A provider may
speak more than one wire (OpenAI: Chat Completions and the Responses API); the setting `wire`
chooses, else the model's record, else the provider's first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mca.errors import ConfigError
from mca.models.known import ANTHROPIC_MODELS, CHAT, OPENAI_MODELS, RESPONSES, ModelInfo, Price
from mca.models.options import Builder, ModelOptions, Notice

if TYPE_CHECKING:
    from mca.types import Model

__all__ = [
    "ANTHROPIC",
    "MOCK",
    "MOCK_SPEC",
    "OPENAI",
    "PROVIDERS",
    "SHARED_KEY_VAR",
    "ProviderSpec",
    "Registry",
]
SHARED_KEY_VAR = "MCA_API_KEY"  # for the one host it was configured for (mca.config.apikeys)
MOCK = "mock"


@dataclass(frozen=True)
class ProviderSpec:
    """One provider: its wire, defaults, key variables, known models, and the names it owns."""

    name: str
    build: Builder
    base_url: str = ""
    default_model: str = ""
    key_vars: tuple[str, ...] = ()  # its own variables, tried after SHARED_KEY_VAR
    models: tuple[ModelInfo, ...] = ()  # the models it serves that mca knows
    implied_by: tuple[str, ...] = ()  # model-name prefixes that mean this provider
    about: str = ""  # /model's line for a provider that needs no key
    wires: tuple[str, ...] = ()  # the wire protocols it speaks, its default first

    @property
    def keys_tried(self) -> tuple[str, ...]:
        """The variables a key is looked for in, in order."""
        return (SHARED_KEY_VAR, *self.key_vars) if self.key_vars else ()


def _longest(table: Mapping[str, object], name: str) -> str:
    return max((p for p in table if name.startswith(p)), key=len, default="")


@dataclass(frozen=True)
class Registry:
    """The providers, in the order they are listed and tried; unknown names list the choices."""

    specs: tuple[ProviderSpec, ...]
    fallback: str  # where a model name that implies no provider goes (rule 3)
    # open-weight names any server may serve, which a provider's prefix would otherwise claim
    # ("gpt-oss" is not OpenAI's API): they imply no provider
    open_models: tuple[str, ...] = ("gpt-oss",)

    def __iter__(self) -> Iterator[ProviderSpec]:
        return iter(self.specs)

    def __contains__(self, name: object) -> bool:
        return any(s.name == name for s in self.specs)

    def __getitem__(self, name: str) -> ProviderSpec:
        for spec in self.specs:
            if spec.name == name:
                return spec
        choices = ", ".join(sorted(s.name for s in self.specs))
        raise ConfigError(f"unknown model provider {name!r} (available: {choices})")

    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs)

    def with_(self, *specs: ProviderSpec) -> Registry:
        """A copy with these entries added (an entry of the same name is replaced)."""
        new = {s.name for s in specs}
        kept = (s for s in self.specs if s.name not in new)
        return Registry((*kept, *specs), self.fallback, self.open_models)

    def implied(self, model: str) -> ProviderSpec | None:
        """The provider whose `implied_by` prefix of the name is the longest (rule 2), or None."""
        owners: dict[str, ProviderSpec | None] = {p: s for s in self.specs for p in s.implied_by}
        owners |= dict.fromkeys(self.open_models)
        best = _longest(owners, model)
        return owners[best] if best else None

    def infer(self, model: str, env: Mapping[str, str]) -> str:
        """The provider for a model name (or none) when none is named (rules 2 to 4)."""
        if model:
            implied = self.implied(model)
            return implied.name if implied else self.fallback
        for spec in self.specs:
            if any(env.get(var) for var in spec.key_vars):
                return spec.name
        return self.fallback if env.get(SHARED_KEY_VAR) else MOCK

    def model(self, name: str) -> ModelInfo | None:
        """The record of a model (the longest prefix of its name), or None."""
        records = {m.prefix: m for s in self.specs for m in s.models}
        best = _longest(records, name)
        return records[best] if best else None

    def window_for(self, model: str) -> int | None:
        """Known context window of a model (the longest prefix that says one), or None."""
        windows = {m.prefix: m.window for s in self.specs for m in s.models if m.window}
        best = _longest(windows, model)
        return windows[best] if best else None

    def prices(self) -> dict[str, Price]:
        """Every entry's list prices by model-name prefix."""
        return {m.prefix: m.price for s in self.specs for m in s.models if m.price}

    def wire_for(self, spec: ProviderSpec, model: str, asked: str = "") -> str:
        """The wire to speak to `model` through `spec`: the one asked for, else the model's
        record's when the provider speaks it, else the provider's first ('' for none)."""
        info = self.model(model)
        for wire in (asked, info.wire if info else ""):
            if wire and wire in spec.wires:
                return wire
        return spec.wires[0] if spec.wires else ""

    def base_urls(self) -> frozenset[str]:
        """The providers' own URLs: any other base URL is a custom server."""
        return frozenset(s.base_url for s in self.specs if s.base_url)


def _openai(options: ModelOptions, notice: Notice) -> Model:
    if options.wire == RESPONSES and options.custom_url:  # it may have no Responses API
        from mca.models.fallback import ChatFallback

        return ChatFallback(options, notice=notice)
    if options.wire == RESPONSES:
        from mca.models.responses import ResponsesModel

        return ResponsesModel(options, notice=notice)
    from mca.models.openai import OpenAIModel

    return OpenAIModel(options, notice=notice)


def _anthropic(options: ModelOptions, notice: Notice) -> Model:
    from mca.models.anthropic import AnthropicModel

    return AnthropicModel(options, notice=notice)


def _mock(options: ModelOptions, notice: Notice) -> Model:
    from mca.models.mock import MockModel, ScriptedModel

    if options.mock_script is not None:
        return ScriptedModel(options.mock_script)
    return MockModel()


MESSAGES = "messages"
OPENAI = ProviderSpec(
    "openai",
    _openai,
    base_url="https://api.openai.com/v1",
    default_model="gpt-5.6-terra",
    key_vars=("OPENAI_API_KEY",),
    models=OPENAI_MODELS,
    implied_by=("gpt-", "chatgpt", "o1", "o3", "o4", "codex-"),
    wires=(CHAT, RESPONSES),
)
ANTHROPIC = ProviderSpec(
    "anthropic",
    _anthropic,
    base_url="https://api.anthropic.com",
    default_model="claude-sonnet-5",
    key_vars=("ANTHROPIC_API_KEY",),
    models=ANTHROPIC_MODELS,
    implied_by=("claude",),
    wires=(MESSAGES,),
)
# The mock implies no name by prefix: only the exact name "mock" chooses it (mca.config.settings).
MOCK_SPEC = ProviderSpec(
    MOCK,
    _mock,
    default_model=MOCK,
    models=(ModelInfo(MOCK, 128_000),),
    about="the offline mock model",
)
PROVIDERS = Registry((OPENAI, ANTHROPIC, MOCK_SPEC), fallback="openai")
