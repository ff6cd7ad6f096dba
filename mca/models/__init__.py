"""Model clients: build the one the options name, from its provider's entry in the registry
(the options carry the builder, mca/models/options.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mca.models.options import Notice

if TYPE_CHECKING:
    from mca.models.options import ModelOptions
    from mca.types import Model

__all__ = ["asks_window", "build_model", "describe_reasoning", "window_for"]


def build_model(options: ModelOptions, notice: Notice = lambda s: None) -> Model:
    """The model client for the configured provider (recording it when asked)."""
    model = options.build(options, notice)
    if options.record is not None:
        from mca.models.record import RecordingModel

        model = RecordingModel(model, options.record, (options.api_key,))
    return model


def describe_reasoning(options: ModelOptions) -> str:
    """How the model is told to reason, as /model says it ('' for the mock)."""
    if options.provider == "mock":
        return ""
    if options.wire == "messages":
        from mca.models.anthropic import thinking_for

        t = thinking_for(options)
        if t.kind == "enabled":
            return f"extended thinking, a budget of {t.budget:,} tokens"
        if t.kind == "adaptive":
            return f"adaptive thinking, effort {t.effort or 'the model decides'}"
        return "thinking off (--thinking TOKENS or --reasoning EFFORT turns it on)"
    from mca.models.openai import reasoning_of

    known, effort, _ = reasoning_of(options)
    if known:
        return f"reasoning effort {effort or 'the model default'}"
    if effort:
        return f"reasoning effort {effort} (sent: {options.model} is not one mca knows)"
    unused = f" (--reasoning {options.reasoning} is not sent)" if options.reasoning else ""
    return f"{options.model} does not reason{unused}"


def asks_window(options: ModelOptions) -> bool:
    """Will the session ask the server for its context window (nothing else says it, and the
    server is no provider's own)?"""
    return options.provider != "mock" and not options.context_window_known and options.custom_url


def window_for(options: ModelOptions) -> tuple[ModelOptions, str]:
    """Ask a local server for its context window when nothing else said it; the options with
    the window it gave, and a line saying so ('' when nothing was asked or found)."""
    if not asks_window(options):
        return options, ""
    from mca.models.window import discover_window  # httpx: only for a server that may say

    found = discover_window(options.base_url, options.model)
    if found is None:
        return options, ""
    window, where = found
    source = f"from the server's {where}"
    note = f"context window {window:,} tokens ({source})"
    return options.with_(context_window=window, context_window_from=source), note
