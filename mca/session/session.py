"""A running session: the API the faces (REPL, -p, the lab) drive a conversation through.
How one is built is mca.assembly.assemble. No terminal I/O: the face is the UI given to
open_session (mca/session/faces.py says what a face must do)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mca.agent import Agent
from mca.context.compact import Compactor
from mca.context.engine import Engine
from mca.context.prompt import AGENTS_FILE, SystemPrompt, build_system_prompt, read_agents_md
from mca.context.userdoc import read_user_doc, user_doc, write_user_doc
from mca.events import (
    ContextCompacted,
    EventSink,
    LedgerRecorded,
    ModelRetry,
    ModelSwitched,
    Notice,
    SessionEnded,
    SessionResumed,
    SessionStarted,
)
from mca.ledger import LedgerBook, TurnLedger
from mca.models import build_model, window_for
from mca.models.known import Price
from mca.models.options import ModelOptions
from mca.session import rewind
from mca.session.faces import UI
from mca.session.ledger_build import calibration_for, turn_ledger
from mca.skills.runtime import SkillRuntime
from mca.state.conversations import Saved, SessionStore
from mca.state.log import SessionLog
from mca.text.counts import plural
from mca.text.sanitize import scrub
from mca.tools.base import Approvals, TurnState
from mca.turn import TurnResult
from mca.types import KIND_CHAT, KIND_SHELL, Message, Request
from mca.workspace.report import Rewound, Undoable, UndoReport
from mca.workspace.store import WorkspaceStore

if TYPE_CHECKING:
    from mca.sandbox.box import Sandbox

__all__ = ["Session", "SessionConfig", "prompt_for"]


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    """What a session keeps of the settings, built once at assembly (mca/assembly/wiring.py)."""

    workspace: Path
    home: Path  # $MCA_HOME: calibration, saved conversations
    user_home: Path  # ~: AGENTS.md above the workspace stops at it
    secrets: tuple[str, ...] = field(default=(), repr=False)  # scrubbed from all that leaves
    prices: Mapping[str, Price] = field(default_factory=dict)  # config.toml [prices]
    catalog: Mapping[str, Price] = field(default_factory=dict)  # the registry's list prices


@dataclass
class Session:
    """One running mca session, and the narrow API the faces use (they never reach into the
    agent or the tools)."""

    config: SessionConfig
    model: ModelOptions  # the model in use (/model replaces it)
    engine: Engine  # the model and system prompt in use
    agent: Agent
    approvals: Approvals  # the approval mode lives here
    workspace: WorkspaceStore  # the file tools' snapshots, checkpoints, /undo and /rewind
    log: SessionLog
    skills: SkillRuntime
    compactor: Compactor
    id: str
    ui: UI
    emit: EventSink  # to the log and the person: what every part was given
    store: SessionStore
    ledger: LedgerBook = field(default_factory=LedgerBook)
    compacted_before: ContextCompacted | None = None  # the compaction seen before this turn
    _sandbox_report: list[str] | None = field(default=None, init=False, repr=False)

    def refresh_skills(self) -> None:
        """Between turns: when skills changed on disk, rebuild the catalog and say so once."""
        what = self.skills.refresh()
        if not what:
            return
        d = self.skills.discovery
        self.engine.prompt = build_system_prompt(
            self.config.workspace, d.catalog.text, self.engine.prompt.agents
        )
        tokens = self.skills.estimator.count(d.catalog.text)
        self.emit(
            Notice(
                f"{what} · catalog rebuilt, {plural(len(d.skills), 'skill')},"
                f" {tokens:,} tokens ({self.skills.estimator.label})"
            )
        )

    def run_turn(self, sentence: str, *, ledger: bool = True) -> TurnResult:
        """One turn through the agent, then its checkpoint and its ledger (logged as a JSON
        event). With ledger=False the caller shows the answer first and calls finish_turn
        after. An exception before the turn was committed leaves the conversation as it was;
        one after it (the result says `committed`) leaves the turn kept, and `failed_after`
        names the step that failed."""
        self.refresh_skills()
        self.compacted_before = self.compactor.last
        previous = self.agent.last
        try:
            result = self.agent.run_turn(sentence)
        except BaseException:
            self.end_checkpoint()  # what the turn changed stays undoable
            if (kept := self.agent.last) not in (previous, None) and kept.committed:  # part way
                self.store.turn(self.agent.messages, None)
            raise
        step = "recording its checkpoint"
        try:
            self.end_checkpoint()
            if ledger:
                step = "recording its ledger and saving the conversation"
                self.finish_turn(result)
        except BaseException:
            result.failed_after = step
            raise
        return result

    def end_checkpoint(self) -> None:
        """The turn's checkpoint; what its walk did not cover is said."""
        for note in self.workspace.end_turn():
            self.emit(Notice(f"warning: {note}"))

    def finish_turn(self, result: TurnResult) -> TurnLedger:
        """The turn's ledger, calibration and log event."""
        entry = self.record_ledger(result)
        last = self.compactor.last
        if last is not self.compacted_before and last is not None:
            entry.compaction = last.to_json()
        self.log.event(LedgerRecorded(entry))
        self.store.turn(self.agent.messages, entry)
        return entry

    def restore(self, saved: Saved, fork: bool = False) -> None:
        """Pick up a saved conversation: its messages (skills stay protected), turns, ledger.
        Resumed, the session goes on under the conversation's id (its turns are saved, and
        recorded for /rewind, as that conversation's); forked, under an id of its own."""
        self.agent.messages[:] = saved.messages
        self.agent.turn = saved.turns
        self.ledger.turns[:] = saved.ledgers
        self.id = self.store.carry(saved, fork)
        # an older mca recorded a resumed conversation's turns under each run's own id
        earlier = (saved.id, saved.id.split("-")[0], saved.came_from.split("-")[0])
        self.workspace.adopt(self.id, *earlier)
        self.log.event(SessionResumed(saved.id, saved.turns, forked_as=self.id if fork else ""))

    def wire(self) -> str:
        """The wire the model speaks now: the configured one, or what a fallback moved to."""
        return str(getattr(self.engine.model, "wire", self.model.wire))

    def switch_model(self, options: ModelOptions) -> str:
        """Go on with another model (the conversation stays); returns what changed."""
        from mca.models.fallback import carried  # httpx: only when a model is switched to

        options, note = window_for(carried(self.engine.model, options))
        model = build_model(options, lambda m: self.ui.event(ModelRetry(m)))
        was = self.model
        old = f"{was.model} via {was.provider}"
        self.engine.model.close()
        self.engine.model = model
        self.compactor.window = options.context_window
        self.compactor.factor = calibration_for(options, self.config.home).factor
        moved = options.base_url != was.base_url
        where = f"; now sending to {options.base_url} (was {was.base_url or 'the offline mock'})"
        self.model = options
        self.log.event(ModelSwitched(old, options.model))
        window = f"context window {options.context_window:,} tokens"
        told = f"model {options.model} via {options.provider} (was {old}); {note or window}"
        return told + (where if moved and options.base_url else "")

    def record_ledger(self, result: TurnResult) -> TurnLedger:
        """Build the turn's ledger from the last request it sent; calibrate with usage."""
        stage = next((r for t, r in self.skills.stage.history if t == result.turn), None)
        pieces = self.engine.prompt.exact_pieces()
        estimator, home = self.skills.estimator, self.config.home
        entry = turn_ledger(result, pieces, estimator, self.model, home, stage)
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
            f" ({plural(report.summarized_messages, 'message')} summarised; protected skills kept:"
            f" {', '.join(report.protected_kept) or 'none'})"
        )

    # -- what the faces may read and change ------------------------------------------------
    def started(self) -> SessionStarted:
        """The session.start record: who answers, where, in which approval mode."""
        workspace, m = str(self.config.workspace), self.model
        return SessionStarted(self.id, workspace, m.provider, m.model, self.mode)

    @property
    def system_prompt(self) -> SystemPrompt:
        """What the model is told before the conversation (/status lists its files)."""
        return self.engine.prompt

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation so far."""
        return self.agent.messages

    def thinking(self) -> list[str]:
        """The latest turn's thinking, reply by reply (/thinking shows it whole)."""
        msgs = self.agent.messages
        chats = [i for i, m in enumerate(msgs) if m.role == "user" and m.kind == KIND_CHAT]
        replies = msgs[chats[-1] :] if chats else msgs
        texts = ("\n\n".join(r.text for r in m.reasoning if r.text) for m in replies)
        return [t for t in texts if t]

    @property
    def turns(self) -> int:
        """Turns taken (a resumed conversation counts its earlier ones)."""
        return self.agent.turn

    @property
    def last_turn(self) -> TurnResult | None:
        """The latest turn's result, also when it failed (for --json)."""
        return self.agent.last

    @property
    def mode(self) -> str:
        """The approval mode (mca.modes.MODES)."""
        return self.approvals.mode

    @property
    def max_steps(self) -> int:
        """The step limit: model calls in one turn."""
        return self.agent.max_steps

    def set_max_steps(self, limit: int) -> None:
        """/steps N: the step limit from the next turn on."""
        self.agent.max_steps = limit

    def set_mode(self, mode: str) -> None:
        """/mode: what runs without asking, from the next tool call on."""
        self.approvals.mode = mode
        self.approvals.always.edits = False  # a mode chosen again asks again

    def clear(self) -> None:
        """/clear: a new conversation (files and snapshots are untouched)."""
        self.agent.clear()

    def add_shell_message(self, text: str) -> None:
        """A `!command` and its output, for the model to see with the next sentence."""
        self.agent.messages.append(Message("user", text, kind=KIND_SHELL, turn=self.turns + 1))

    def export(self, name: str, data: bytes) -> str:
        """/export: `data` written where `name` says ('': $MCA_HOME/exports/); where it went."""
        from mca.session.exports import write_export

        return write_export(self.agent.env, self.turns, name, f"mca-{self.id}.md", data)

    def write_instructions(self, name: str, data: bytes, *, shown_first: bool = False) -> str:
        """/init: an instructions file written through the tools' write path (contained,
        protected paths ask, read-only refuses, snapshotted: /undo reverts it), then the
        system prompt read again with it. Returns the path written, relative."""
        from mca.tools.edit import write_for_person

        env, turn = self.agent.env, TurnState(self.turns)
        rel = write_for_person(env, turn, name, data, shown_first=shown_first)
        self.engine.prompt, _ = prompt_for(self.config, self.skills.discovery.catalog.text)
        return rel

    def instructions(self, mine: bool) -> tuple[Path, bytes | None]:
        """`#`: where a note goes (the project's AGENTS.md, or `mine`, $MCA_HOME/AGENTS.md) and
        what that file holds now (None: none yet)."""
        from mca.tools.edit import read_for_person

        if mine:
            return user_doc(self.config.home)
        return self.config.workspace / AGENTS_FILE, read_for_person(self.agent.env, AGENTS_FILE)

    def remember(self, mine: bool, data: bytes) -> str:
        """`#`: the instructions file written (the project's through the tools' path, undoable;
        the person's in $MCA_HOME), then the system prompt read again. Returns where."""
        if mine:
            where = write_user_doc(self.config.home, data)
            self.engine.prompt, _ = prompt_for(self.config, self.skills.discovery.catalog.text)
            return where
        return self.write_instructions(AGENTS_FILE, data, shown_first=True)

    def ask_aside(self, request: Request) -> str:
        """A request outside the conversation (/init's draft): the reply's text."""
        return self.engine.model.complete(request).message.content

    def undo(self, force: bool = False) -> UndoReport:
        """/undo: the newest turn (or /rewind) not yet undone, files and all (logged)."""
        return rewind.undo(self.workspace, self.agent.messages, self.store, self.log, force)

    def rewind(self, turn: int) -> Rewound:
        """/rewind N: the workspace and the conversation back to before turn N (undoable)."""
        messages, secrets = self.agent.messages, self.config.secrets
        parts = (self.workspace, messages, self.ledger, self.store, self.log)
        return rewind.rewind(*parts, turn, self.turns, secrets)

    def turns_listed(self) -> list[tuple[int, str]]:
        """(turn, the sentence that started it) for each turn of the conversation (/rewind)."""
        return rewind.turns(self.agent.messages)

    def undoable(self) -> list[Undoable]:
        """The turns /undo can still revert, newest first."""
        return self.workspace.undoable()

    def changes(self) -> list[tuple[str, bytes | None, bytes | None]]:
        """(path, before this session, now) for each file this session changed."""
        return self.workspace.changes()

    def sandbox_text(self) -> str:
        """The sandbox in force and its mechanism, for /mode and /status (read-only mode's
        commands run in a read-only one)."""
        box = self.sandbox
        if box is not None and box.active and self.mode == "read-only":
            return f"{box.read_only().describe()}, for read-only mode"
        return box.describe() if box is not None else "none"

    def sandbox_report(self) -> list[str]:
        """Each property of the sandbox, tried once in a real sandboxed child (/status)."""
        if self._sandbox_report is None:
            box = self.sandbox
            if box is None or not box.active:
                self._sandbox_report = []
            else:
                from mca.sandbox.check import check, lines

                self._sandbox_report = lines(check(box))
        return self._sandbox_report

    @property
    def sandbox(self) -> Sandbox | None:
        """Where commands run for the model."""
        return self.agent.env.sandbox

    def close(self) -> None:
        """Release the model client and the sandbox's private /tmp."""
        if self.sandbox is not None:
            self.sandbox.close()
        self.log.event(SessionEnded(self.turns))
        self.log.close()
        self.workspace.close()
        self.engine.model.close()


def prompt_for(config: SessionConfig, catalog: str) -> tuple[SystemPrompt, str]:
    """The system prompt (AGENTS.md scrubbed of known secrets), and what was wrong reading it."""
    agents, problem = read_agents_md(config.workspace, config.user_home)
    agents = "\n\n".join(filter(None, (read_user_doc(config.home), agents)))
    agents = scrub(agents, config.secrets)
    return build_system_prompt(config.workspace, catalog, agents), problem
