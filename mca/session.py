"""Wiring: settings -> skills, model, tools, snapshots, log, prompt, agent. No terminal I/O."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mca.agent import Agent
from mca.config import Settings
from mca.log import SessionLog
from mca.models import build_model
from mca.prompt import SystemPrompt, build_system_prompt
from mca.skills.runtime import SkillRuntime, log_discovery, refuse_if_strict, run_discovery
from mca.skills.stage import SkillStage
from mca.tokens import Estimator
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
    skills: SkillRuntime
    id: str

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
    estimator: Estimator | None = None,
) -> Session:
    """Build a session. Skill errors under --strict-skills stop it before any model client."""
    started, sid = new_ids()
    log_path = settings.home / "logs" / f"{started}-{sid}.jsonl" if log_to_disk else None
    log = SessionLog(log_path, secrets=[settings.api_key])

    def emit(kind: str, data: Mapping[str, Any]) -> None:
        log.event(kind, data)
        ui.event(kind, data)

    estimator = estimator or Estimator(settings.encoding)
    discovery = run_discovery(settings, estimator)
    log_discovery(discovery, log.event)
    refuse_if_strict(settings, discovery)
    snapshots = SnapshotStore(settings.workspace, sid, started)
    snapshots.prune()
    skill_dirs = {name: s.dir for name, s in discovery.skills.items()}
    tools = ToolContext(
        settings.workspace, snapshots, approve=ui.approve, emit=emit, skill_dirs=skill_dirs
    )
    stage = SkillStage(
        discovery.skills,
        budget=settings.skill_budget,
        root=settings.workspace,
        touched=lambda: sorted(tools.touched),
        emit=emit,
    )
    system = build_system_prompt(settings.workspace, discovery.catalog.text)
    model = model or build_model(settings, lambda m: emit("model.retry", {"message": m}))
    agent = Agent(
        model=model,
        tools=tools,
        system=system.text,
        max_steps=settings.max_steps,
        pre_turn=stage,
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
    runtime = SkillRuntime(discovery, stage, estimator)
    return Session(settings, model, agent, snapshots, log, system, runtime, sid)
