"""Which model the settings choose: the provider (named, or implied by the model's name), its
key (mca.config.apikeys: a key never goes to another host), its base URL, and the wire it
speaks; the mock only when nothing real was asked for (or it was asked for)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mca.config.apikeys import CONFIG_KEY, KeyHosts, check_key, find_key, missing_key
from mca.config.sources import Sources
from mca.config.specs import SPECS, switch
from mca.config.values import Raw
from mca.errors import ConfigError
from mca.models.registry import MOCK, Registry

__all__ = ["ModelChoice", "mock_path", "model_choice", "wire_for"]


@dataclass(frozen=True)
class ModelChoice:
    provider: str
    model: str
    mock_reason: str = ""
    api_key: str = ""
    key_var: str = ""
    base_url: str = ""


def model_choice(src: Sources, providers: Registry, named: str, hosts: KeyHosts) -> ModelChoice:
    """Which model: the mock only when nothing real was asked for (or it was asked for)."""
    env = src.env
    model_raw = src.raw(SPECS.model)
    model = src.given(SPECS.model) or ""
    if switch(env, "MOCK") or model == MOCK or env.get("MCA_MOCK_SCRIPT"):
        why = "MOCK=1" if switch(env, "MOCK") else "MCA_MOCK_SCRIPT" if model != MOCK else ""
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


def mock_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("MCA_MOCK_SCRIPT")
    if value is None:
        return None
    if not value.strip():
        raise ConfigError("MCA_MOCK_SCRIPT is set but empty: unset it or name a script file")
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(f"MCA_MOCK_SCRIPT: {value!r} is not a file")
    return path


def wire_for(src: Sources, providers: Registry, chosen: ModelChoice) -> str:
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
