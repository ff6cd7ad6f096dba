"""Model clients: build the one the settings name, from its entry in the provider registry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mca.models.registry import Notice

if TYPE_CHECKING:
    from mca.config import Settings
    from mca.types import Model


def build_model(settings: Settings, notice: Notice = lambda s: None) -> Model:
    """The model client for the configured provider (recording it when asked)."""
    model = settings.spec.build(settings, notice)
    if settings.record is not None:
        from mca.models.record import RecordingModel

        model = RecordingModel(model, settings.record, (settings.api_key,))
    return model


def describe_reasoning(settings: Settings) -> str:
    """How the model is told to reason, as /model says it ('' for the mock)."""
    if settings.provider == "mock":
        return ""
    if settings.wire == "messages":
        from mca.models.anthropic import thinking_for

        t = thinking_for(settings)
        if t.kind == "enabled":
            return f"extended thinking, a budget of {t.budget:,} tokens"
        if t.kind == "adaptive":
            return f"adaptive thinking, effort {t.effort or 'the model decides'}"
        return "thinking off (--thinking TOKENS or --reasoning EFFORT turns it on)"
    from mca.models.openai import reasoning_of

    known, effort, _ = reasoning_of(settings)
    if known:
        return f"reasoning effort {effort or 'the model default'}"
    if effort:
        return f"reasoning effort {effort} (sent: {settings.model} is not one mca knows)"
    unused = f" (--reasoning {settings.reasoning} is not sent)" if settings.reasoning else ""
    return f"{settings.model} does not reason{unused}"
