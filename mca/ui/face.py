"""What a face (the REPL, -p) knows before and beside its session: built once from the
settings at assembly (mca/assembly/wiring.py); the faces never read the settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mca.models.options import ModelOptions

__all__ = ["FaceConfig", "ModelSwitch"]


@dataclass(frozen=True, kw_only=True)
class FaceConfig:
    """The workspace and mca's home, the keys never shown, and how to show a session."""

    workspace: Path
    home: Path  # $MCA_HOME: history, saved conversations, crash reports
    secrets: tuple[str, ...] = field(default=(), repr=False)  # scrubbed from all shown
    banner: str = ""  # the REPL's first lines
    show_ledger: bool = False  # --ledger
    verbose: bool = False  # --verbose: the skills, whole, at start
    debug: bool = False  # MCA_DEBUG=1: tracebacks instead of one line
    strict_skills: bool = False  # --strict-skills: the session is built before the prompt
    stream: bool = True  # the answer as it arrives
    no_color: bool = False  # NO_COLOR is set: plain text even on a terminal
    mock_reason: str = ""  # why the offline mock answers ('' : a real model)
    asks_window: bool = False  # the session's start asks the server for its context window
    mode: str = "auto-edit"  # the approval mode the session starts in (shown under the prompt)


class ModelSwitch(Protocol):
    """/model: what is configured, and the model another name means (the assembly's
    mca/assembly/chooser.py; the REPL never reads the settings)."""

    def available(self) -> list[str]: ...

    def to(self, name: str, current: ModelOptions) -> ModelOptions: ...
