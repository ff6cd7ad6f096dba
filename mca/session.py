"""Wiring: settings -> model, tools, snapshots, log, system prompt, agent. No terminal I/O here."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from mca.agent import Agent
from mca.config import Settings
from mca.log import SessionLog
from mca.models import build_model
from mca.prompt import SystemPrompt, build_system_prompt
from mca.tools.base import ToolContext
from mca.tools.snapshots import SnapshotStore
from mca.types import Model


class UI(Protocol):
    """What a session needs from whoever shows it: asking, and showing events and text."""

    def approve(self, command: str) -> bool: ...

    def event(self, kind: str, data: Mapping[str, Any]) -> None: ...

    def text(self, delta: str) -> None: ...


@dataclass
class Session:
    """One running mca session."""

    settings: Settings
    model: Model
    agent: Agent
    snapshots: SnapshotStore
    log: SessionLog
    system: SystemPrompt
    id: str
    extras: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        """Release the model client."""
        self.log.event("session.end", {"turns": self.agent.turn})
        self.model.close()


def new_ids() -> tuple[str, str]:
    """(started stamp, short session id)."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()), secrets.token_hex(3)


def open_session(
    settings: Settings,
    ui: UI,
    *,
    model: Model | None = None,
    log_to_disk: bool = True,
    catalog: str = "",
) -> Session:
    """Build a session; `model` may be injected (tests, selftest)."""
    started, sid = new_ids()
    log_path = settings.home / "logs" / f"{started}-{sid}.jsonl" if log_to_disk else None
    log = SessionLog(log_path, secrets=[settings.api_key])

    def emit(kind: str, data: Mapping[str, Any]) -> None:
        log.event(kind, data)
        ui.event(kind, data)

    snapshots = SnapshotStore(settings.workspace, sid, started)
    tools = ToolContext(settings.workspace, snapshots, approve=ui.approve, emit=emit)
    system = build_system_prompt(settings.workspace, catalog)
    model = model or build_model(settings)
    agent = Agent(
        model=model,
        tools=tools,
        system=system.text,
        max_steps=settings.max_steps,
        emit=emit,
        on_text=ui.text,
    )
    log.event(
        "session.start",
        {
            "session": sid,
            "workspace": str(settings.workspace),
            "provider": settings.provider,
            "model": settings.model,
        },
    )
    return Session(settings, model, agent, snapshots, log, system, sid)


ApproveFn = Callable[[str], bool]
