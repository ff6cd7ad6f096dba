"""The model in use and the system prompt it is sent with, held in one place.

/model replaces the model and a rebuilt skill catalog replaces the prompt, here only; the
agent and the compactor read both from here on every request, so they never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from mca.context.prompt import SystemPrompt
from mca.types import Model

__all__ = ["Engine"]


@dataclass
class Engine:
    """The current model and system prompt (the session changes them between turns)."""

    model: Model
    prompt: SystemPrompt
