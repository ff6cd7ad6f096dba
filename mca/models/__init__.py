"""Model registry: one constructor per provider, looked up by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mca.errors import ConfigError

if TYPE_CHECKING:
    from mca.config import Settings
    from mca.types import Model


def _mock(settings: Settings) -> Model:
    from mca.models.mock import MockModel, ScriptedModel

    if settings.mock_script is not None:
        return ScriptedModel(settings.mock_script)
    return MockModel()


def _openai(settings: Settings) -> Model:
    from mca.models.openai import OpenAIModel

    return OpenAIModel(settings)


def _anthropic(settings: Settings) -> Model:
    from mca.models.anthropic import AnthropicModel

    return AnthropicModel(settings)


BUILDERS: dict[str, Callable[[Settings], Model]] = {
    "anthropic": _anthropic,
    "mock": _mock,
    "openai": _openai,
}


def build_model(settings: Settings) -> Model:
    """The model client for the configured provider."""
    try:
        builder = BUILDERS[settings.provider]
    except KeyError:
        raise ConfigError(
            f"unknown model provider {settings.provider!r} (available: {', '.join(BUILDERS)})"
        ) from None
    return builder(settings)
