"""Model registry: one constructor per provider, looked up by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mca.errors import ConfigError

if TYPE_CHECKING:
    from mca.config import Settings
    from mca.types import Model

Notice = Callable[[str], None]


def _mock(settings: Settings, notice: Notice) -> Model:
    from mca.models.mock import MockModel, ScriptedModel

    if settings.mock_script is not None:
        return ScriptedModel(settings.mock_script)
    return MockModel()


def _openai(settings: Settings, notice: Notice) -> Model:
    from mca.models.openai import OpenAIModel

    return OpenAIModel(settings, notice=notice)


def _anthropic(settings: Settings, notice: Notice) -> Model:
    from mca.models.anthropic import AnthropicModel

    return AnthropicModel(settings, notice=notice)


BUILDERS: dict[str, Callable[[Settings, Notice], Model]] = {
    "anthropic": _anthropic,
    "mock": _mock,
    "openai": _openai,
}


def build_model(settings: Settings, notice: Notice = lambda s: None) -> Model:
    """The model client for the configured provider (recording it when asked)."""
    try:
        builder = BUILDERS[settings.provider]
    except KeyError:
        raise ConfigError(
            f"unknown model provider {settings.provider!r} (available: {', '.join(BUILDERS)})"
        ) from None
    model = builder(settings, notice)
    if settings.record is not None:
        from mca.models.record import RecordingModel

        model = RecordingModel(model, settings.record, (settings.api_key,))
    return model
