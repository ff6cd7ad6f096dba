"""How a session is built: settings -> log, skills, the tools' environment, the engine, the
compactor, the loop; each part built whole before the part that uses it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mca.agent import Agent, AsksForSteps
from mca.assembly.home import new_ids, open_log, open_store, open_workspace, prepare_home
from mca.assembly.sandboxing import put_back_left, sandbox_for, unsandboxed_notice
from mca.assembly.wiring import model_options, session_config, skills_config
from mca.config.settings import Settings
from mca.context.compact import Compactor
from mca.context.engine import Engine
from mca.events import (
    Event,
    EventSink,
    ModelRetry,
    Notice,
)
from mca.models import build_model, window_for
from mca.models.options import ModelOptions
from mca.session.faces import UI
from mca.session.ledger_build import calibration_for
from mca.session.session import Session, prompt_for
from mca.skills.cache import FitsMemo
from mca.skills.discover import Discovery, shadow_warnings
from mca.skills.runtime import (
    SkillRuntime,
    SkillsConfig,
    log_discovery,
    open_discovery,
    refuse_if_strict,
    serial_note,
)
from mca.skills.stage import SkillStage
from mca.state.log import SessionLog
from mca.text.sanitize import scrub
from mca.tokens import Estimator
from mca.tools import tool_specs
from mca.tools.base import Approvals, ToolEnv
from mca.types import Model
from mca.workspace.store import WorkspaceStore

if TYPE_CHECKING:
    from mca.skills.ahead import Ahead

__all__ = ["open_session"]


def _skills(
    config: SkillsConfig, estimator: Estimator, log: SessionLog, ahead: Ahead | None = None
) -> tuple[Discovery, FitsMemo]:
    """Discovery (the one `ahead` made, when it is for this config), logged; --strict-skills
    refuses here, before any model client exists."""
    found = ahead.take(config, estimator) if ahead is not None else None
    if ahead is not None and found is None:
        log.event(serial_note(ahead.why))
    discovery, memo = found or open_discovery(config, estimator)
    log_discovery(discovery, log.event)
    refuse_if_strict(config, discovery)
    return discovery, memo


def _window_after_strict(
    settings: Settings, estimator: Estimator, log: SessionLog, ahead: Ahead | None
) -> tuple[ModelOptions, str, tuple[SkillsConfig, tuple[Discovery, FitsMemo]] | None]:
    """The model's options with the window a local server gives. With --strict-skills the
    skills are checked first, so a refusal happens before any server is asked anything (even
    its window); that discovery is returned with its config, reused when the window the server
    gave does not change it."""
    options = model_options(settings)
    found = None
    if settings.strict_skills:
        first = skills_config(settings, options)
        found = (first, _skills(first, estimator, log, ahead))
    options, note = window_for(options)
    return options, note, found


def _startup_notices(settings: Settings, discovery: Discovery, agents_problem: str) -> list[str]:
    """What a person must hear before the first turn: config, AGENTS.md, shadowed skills."""
    notices = [f"warning: {w}" for w in settings.warnings]
    if agents_problem:
        notices.append(f"warning: {agents_problem}")
    notices += shadow_warnings(discovery)
    return notices


def _tools(
    settings: Settings, discovery: Discovery, workspace: WorkspaceStore, ui: UI, emit: EventSink
) -> tuple[SkillStage, ToolEnv]:
    """The skill stage, and the tools' environment around it (reading a skill activates it)."""
    stage = SkillStage(
        discovery.skills,
        budget=settings.skill_budget,
        root=settings.workspace,
        emit=emit,
        policy=discovery.policy,
        skill_set=discovery.skill_set,
    )
    approvals = Approvals(ui, settings.mode)
    box = sandbox_for(settings)
    roots = tuple(r.path for r in discovery.roots)
    home, user_home = settings.home, settings.user_home
    env = ToolEnv(
        workspace,
        approvals,
        emit,
        stage,
        home,
        user_home,
        box,
        roots,
        settings.secrets,
        settings.pass_env,
    )
    return stage, env


def _compactor(
    model: ModelOptions, home: Path, engine: Engine, estimator: Estimator, emit: EventSink
) -> Compactor:
    return Compactor(
        engine,
        estimator,
        window=model.context_window,
        tools=tool_specs(),
        emit=emit,
        max_output=model.max_tokens,
        factor=calibration_for(model, home).factor,
    )


def _agent(
    settings: Settings,
    engine: Engine,
    env: ToolEnv,
    stage: SkillStage,
    compactor: Compactor,
    ui: UI,
) -> Agent:
    secrets = settings.secrets
    return Agent(
        engine,
        env,
        max_steps=settings.max_steps,
        pre_turn=stage,
        before_model=compactor,
        on_text=ui.text,
        redact=lambda text: scrub(text, secrets),
        more_steps=ui.more_steps if isinstance(ui, AsksForSteps) else None,
    )


def open_session(
    settings: Settings,
    ui: UI,
    *,
    model: Model | None = None,
    log_to_disk: bool = True,
    estimator: Estimator | None = None,
    one_shot: bool = False,
    ahead: Ahead | None = None,
) -> Session:
    """Build a session: the log, skills (--strict-skills may refuse), the workspace store, the
    tools' environment around the skill stage, the engine, the compactor and the loop.
    one_shot: its one turn follows at once (-p), so the skills just found need no second look
    before it; `ahead`: its skills, discovered in a child meanwhile (mca.skills.ahead). Each part
    gets its own config from the settings (mca/assembly/wiring.py)."""
    started, sid = new_ids()
    home_problem = prepare_home(settings.home)
    put_back = [] if home_problem else put_back_left(settings)  # before anything reads .git
    on_disk = log_to_disk and not home_problem
    log = open_log(settings, f"{started}-{sid}", on_disk, ui.event)

    def emit(event: Event) -> None:
        log.event(event)
        ui.event(event)

    estimator = estimator or Estimator(settings.encoding)
    if settings.provider != "mock":
        estimator.preload()  # loads while the first request is out, not before it
    options, window_note, found = _window_after_strict(settings, estimator, log, ahead)
    config, skills = session_config(settings), skills_config(settings, options)
    if found and found[0] == skills:
        discovery, memo = found[1]
    else:
        discovery, memo = _skills(skills, estimator, log, ahead)
    workspace, notices = open_workspace(settings, sid, started, home_problem)
    stage, env = _tools(settings, discovery, workspace, ui, emit)
    prompt, agents_problem = prompt_for(config, discovery.catalog.text)
    notices = [*put_back, *_startup_notices(settings, discovery, agents_problem), *notices]
    notices += unsandboxed_notice(settings, env.sandbox)
    for notice in [*notices, window_note] if window_note else notices:
        emit(Notice(notice))
    engine = Engine(model or build_model(options, lambda m: emit(ModelRetry(m))), prompt)
    compactor = _compactor(options, settings.home, engine, estimator, emit)
    agent = _agent(settings, engine, env, stage, compactor, ui)
    runtime = SkillRuntime(skills, discovery, stage, estimator, memo, fresh=one_shot)
    store = open_store(settings, sid, on_disk)
    parts = (engine, agent, env.approvals, workspace, log, runtime, compactor)
    session = Session(config, options, *parts, sid, ui, emit, store)
    log.event(session.started())
    return session
