"""Wiring: settings -> skills, model, tools, snapshots, log, prompt, agent. No terminal I/O."""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mca.agent import Agent, TurnResult
from mca.compact import CompactionReport, Compactor
from mca.config import Settings
from mca.fsutil import private_dir
from mca.ledger import Calibration, LedgerBook, TurnLedger, build_ledger
from mca.log import SessionLog, prune_logs
from mca.models import build_model
from mca.prompt import SystemPrompt, build_system_prompt, read_agents_md
from mca.sanitize import scrub
from mca.sessions import KEEP_SESSIONS, Saved, SessionStore
from mca.skills.discover import Discovery, shadow_warnings
from mca.skills.runtime import SkillRuntime, log_discovery, refuse_if_strict, run_discovery
from mca.skills.stage import SkillStage
from mca.tokens import Estimator
from mca.tools import tool_specs
from mca.tools.base import ToolContext
from mca.tools.snapshots import SnapshotStore, store_dir
from mca.types import Model


class UI(Protocol):
    """What a session needs from whoever shows it: asking, and showing events and text."""

    def approve(self, command: str) -> bool: ...

    def approve_write(self, path: str, reason: str, diff: str) -> bool: ...

    def approve_edit(self, path: str, diff: str) -> bool: ...

    def event(self, kind: str, data: Mapping[str, Any]) -> None: ...

    def text(self, delta: str) -> None: ...


@dataclass
class HeadlessUI:
    """For sessions nobody watches (the self-test, the demo, benchmarks, tests): commands run
    when `commands` is true, edits apply, protected paths are refused, events are dropped."""

    commands: bool = True

    def approve(self, command: str) -> bool:
        return self.commands

    def approve_write(self, path: str, reason: str, diff: str) -> bool:
        return False

    def approve_edit(self, path: str, diff: str) -> bool:
        return True

    def event(self, kind: str, data: Mapping[str, Any]) -> None:
        return None

    def text(self, delta: str) -> None:
        return None


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
    compactor: Compactor
    id: str
    ui: UI
    ledger: LedgerBook = field(default_factory=LedgerBook)
    compacted_before: CompactionReport | None = None  # the compaction seen before this turn
    store: SessionStore = field(default_factory=lambda: SessionStore(None, "", Path(), ""))

    def refresh_skills(self) -> None:
        """Between turns: when skills changed on disk, rebuild the catalog and say so once."""
        what = self.skills.refresh(self.settings)
        if not what:
            return
        d = self.skills.discovery
        self.agent.tools.skill_dirs = {name: s.dir for name, s in d.skills.items()}
        self.system = build_system_prompt(
            self.settings.workspace, d.catalog.text, self.system.agents
        )
        self.agent.system = self.system.text
        self.compactor.set_system(self.system.text)
        tokens = self.skills.estimator.count(d.catalog.text)
        message = (
            f"skills changed on disk: {what} · catalog rebuilt, {len(d.skills)} skills,"
            f" {tokens:,} tokens ({self.skills.estimator.label})"
        )
        self.log.event("notice", {"message": message})
        self.ui.event("notice", {"message": message})

    def run_turn(self, sentence: str, *, ledger: bool = True) -> TurnResult:
        """One turn through the agent, then its ledger (logged as a JSON event). With
        ledger=False the caller shows the answer first and calls finish_turn after."""
        self.refresh_skills()
        self.compacted_before = self.compactor.last
        result = self.agent.run_turn(sentence)
        if ledger:
            self.finish_turn(result)
        return result

    def finish_turn(self, result: TurnResult) -> TurnLedger:
        """The turn's ledger, calibration and log event."""
        entry = self.record_ledger(result)
        last = self.compactor.last
        if last is not self.compacted_before and last is not None:
            entry.compaction = last.to_json()
        self.log.event("ledger", entry.to_json())
        self.store.turn(self.agent.messages, entry)
        return entry

    def restore(self, saved: Saved) -> None:
        """Pick up a saved conversation: its messages (skills stay protected), turns, ledger."""
        self.agent.messages[:] = saved.messages
        self.agent.turn = saved.turns
        self.ledger.turns[:] = saved.ledgers
        self.store.carry(saved)
        self.log.event("session.resumed", {"from": saved.id, "turns": saved.turns})

    def switch_model(self, settings: Settings) -> str:
        """Go on with another model (the conversation stays); returns what changed."""
        settings, note = _window(settings)
        model = build_model(settings, lambda m: self.ui.event("model.retry", {"message": m}))
        old = f"{self.settings.model} via {self.settings.provider}"
        self.model.close()
        self.model = self.agent.model = self.compactor.model = model
        self.compactor.window = settings.context_window
        self.compactor.factor = calibration_for(settings).factor
        self.settings = settings
        self.log.event("model.switched", {"from": old, "to": settings.model})
        window = f"context window {settings.context_window:,} tokens"
        return f"model {settings.model} via {settings.provider} (was {old}); {note or window}"

    def record_ledger(self, result: TurnResult) -> TurnLedger:
        """Build the turn's ledger from the last request it sent; calibrate with usage."""
        stage = next((r for t, r in self.skills.stage.history if t == result.turn), None)
        entry = build_ledger(
            result.turn,
            result.requests[-1],
            self.system.exact_pieces(),
            self.skills.estimator,
            self.settings.context_window,
            stage,
        )
        entry.model_calls = len(result.requests)
        calibration = calibration_for(self.settings)
        usage = result.request_usage[-1] if result.request_usage else None
        if usage is not None and usage.prompt_tokens:
            entry.provider_prompt_tokens = usage.prompt_tokens
            entry.cached_tokens = usage.cached_tokens or None
            entry.calibration, entry.calibration_used = calibration.update(
                entry.tokens, usage.prompt_tokens
            )
        else:
            entry.calibration = calibration.factor()
        self.ledger.turns.append(entry)
        return entry

    def compact(self) -> str:
        """/compact: summarise older turns now."""
        before = self.compactor.last
        self.agent.messages[:] = self.compactor.compact(self.agent.messages, self.agent.turn)
        report = self.compactor.last
        if report is None or report is before:
            return "nothing to compact: the conversation is only the last turns"
        return (
            f"compacted: {report.before_tokens:,} -> {report.after_tokens:,} tokens"
            f" ({report.summarized_messages} messages summarised; protected skills kept:"
            f" {', '.join(report.protected_kept) or 'none'})"
        )

    def close(self) -> None:
        """Release the model client."""
        self.log.event("session.end", {"turns": self.agent.turn})
        self.log.close()
        self.snapshots.close()
        self.model.close()


def calibration_for(settings: Settings) -> Calibration:
    """The calibration of this model at this base URL."""
    return Calibration(settings.home, settings.model, settings.base_url)


def new_ids() -> tuple[str, str]:
    """(started stamp, short session id). The stamp has microseconds: sessions started in the
    same second still sort in the order they started (undo walks back in that order)."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}"
    return stamp, secrets.token_hex(3)


def _skills(settings: Settings, estimator: Estimator, log: SessionLog) -> Discovery:
    """Discovery, logged; --strict-skills refuses here, before any model client exists."""
    discovery = run_discovery(settings, estimator)
    log_discovery(discovery, log.event)
    refuse_if_strict(settings, discovery)
    return discovery


def _window(settings: Settings) -> tuple[Settings, str]:
    """Ask a local server for its context window when nothing else said it."""
    custom = settings.base_url not in settings.providers.base_urls()
    if settings.provider == "mock" or settings.context_window_known or not custom:
        return settings, ""
    from mca.models.window import discover_window

    found = discover_window(settings.base_url, settings.model)
    if found is None:
        return settings, ""
    window, where = found
    note = f"context window {window:,} tokens (from the server's {where})"
    return settings.with_(context_window=window, context_window_known=True), note


def _prepare_home(home: Path) -> str:
    """'' when $MCA_HOME is a usable private directory, else what is wrong with it."""
    try:
        if home.exists() and not home.is_dir():
            return "it is not a directory"
        private_dir(home)
        if not os.access(home, os.W_OK | os.X_OK):
            return "not writable"
    except OSError as e:
        return e.strerror or str(e)
    return ""


def _snapshots(
    settings: Settings, sid: str, started: str, home_problem: str
) -> tuple[SnapshotStore, list[str]]:
    """The workspace's store in $MCA_HOME, or a private temporary one when that is unusable."""
    if not home_problem:
        store = SnapshotStore(
            settings.workspace, store_dir(settings.home, settings.workspace), sid, started
        )
        return store, store.start()
    temp = Path(tempfile.mkdtemp(prefix="mca-snapshots-"))
    store = SnapshotStore(settings.workspace, temp / "store", sid, started, ephemeral=True)
    notice = (
        f"warning: MCA_HOME {settings.home} cannot be used ({home_problem}): the session log,"
        f" calibration and history are off, and /undo only covers this session (snapshots in"
        f" {temp})"
    )
    return store, [notice, *store.start()]


def _startup_notices(settings: Settings, discovery: Discovery, agents_problem: str) -> list[str]:
    """What a person must hear before the first turn: config, AGENTS.md, shadowed skills."""
    notices = [f"warning: {w}" for w in settings.warnings]
    if agents_problem:
        notices.append(f"warning: {agents_problem}")
    notices += shadow_warnings(discovery)
    return notices


def open_session(
    settings: Settings,
    ui: UI,
    *,
    model: Model | None = None,
    log_to_disk: bool = True,
    estimator: Estimator | None = None,
) -> Session:
    """Build a session: skills first, then tools, the pre-turn stage, the model and the loop."""
    started, sid = new_ids()
    settings, window_note = _window(settings)
    home_problem = _prepare_home(settings.home)
    log_path = settings.home / "logs" / f"{started}-{sid}.jsonl"
    log = SessionLog(
        log_path if log_to_disk and not home_problem else None,
        secrets=settings.secrets,
        on_fail=lambda message: ui.event("notice", {"message": f"warning: {message}"}),
    )
    if log.path is not None:
        prune_logs(log_path.parent)

    def emit(kind: str, data: Mapping[str, Any]) -> None:
        log.event(kind, data)
        ui.event(kind, data)

    estimator = estimator or Estimator(settings.encoding)
    if settings.provider != "mock":
        estimator.preload()  # loads while the first request is out, not before it
    discovery = _skills(settings, estimator, log)
    snapshots, notices = _snapshots(settings, sid, started, home_problem)
    skill_dirs = {name: s.dir for name, s in discovery.skills.items()}
    tools = ToolContext(
        settings.workspace,
        snapshots,
        ui.approve,
        emit,
        skill_dirs,
        approve_write=ui.approve_write,
        home=settings.home,
        home_dir=settings.user_home,
        mode=settings.mode,
        approve_edit=ui.approve_edit,
    )
    stage = SkillStage(
        discovery.skills,
        budget=settings.skill_budget,
        root=settings.workspace,
        touched=lambda: sorted(tools.touched),
        emit=emit,
        policy=discovery.policy,
    )
    tools.skills = stage
    agents, agents_problem = read_agents_md(settings.workspace)
    system = build_system_prompt(
        settings.workspace, discovery.catalog.text, scrub(agents, settings.secrets)
    )
    notices += [window_note] if window_note else []
    for notice in [*_startup_notices(settings, discovery, agents_problem), *notices]:
        emit("notice", {"message": notice})
    model = model or build_model(settings, lambda m: emit("model.retry", {"message": m}))
    calibration = calibration_for(settings)
    compactor = Compactor(
        model,
        estimator,
        window=settings.context_window,
        system=system.text,
        tools=tool_specs(),
        emit=emit,
        max_output=settings.max_tokens,
        factor=calibration.factor,
    )
    agent = Agent(
        model=model,
        tools=tools,
        system=system.text,
        max_steps=settings.max_steps,
        pre_turn=stage,
        before_model=compactor,
        emit=emit,
        on_text=ui.text,
        redact=lambda text: scrub(text, settings.secrets),
    )
    tools.history = lambda: agent.messages
    start = {"session": sid, "workspace": str(settings.workspace)}
    log.event("session.start", {**start, "provider": settings.provider, "model": settings.model})
    runtime = SkillRuntime(discovery, stage, estimator)
    session = Session(settings, model, agent, snapshots, log, system, runtime, compactor, sid, ui)
    if log_to_disk and not home_problem:
        where = settings.home / "sessions"
        prune_logs(where, KEEP_SESSIONS)  # the same rule as logs: the newest files stay
        session.store = SessionStore(
            where, sid, settings.workspace, settings.model, settings.secrets
        )
    return session
