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
