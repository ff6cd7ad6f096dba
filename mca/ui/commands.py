"""The REPL's slash commands: what each does with the session, and what it says."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from mca.errors import McaError
from mca.text.counts import plural
from mca.turn import MOST_STEPS
from mca.ui.render import ledger_summary, ledger_table, snapshot_lines, tools_text, undo_lines

if TYPE_CHECKING:
    from mca.models.options import ModelOptions
    from mca.session.session import Session
    from mca.skills.model import Skill
    from mca.ui.terminal import ReplUI
    from mca.usage import Totals

HELP_SKILLS_MAX = 40  # /help lists this many skills; /skills lists them all


@dataclass(frozen=True)
class Command:
    """A slash command."""

    help: str
    run: Callable[[str], None]


class Face(Protocol):
    """What the commands use of the REPL they run in (mca/ui/repl.py's Repl)."""

    running: bool
    totals: Totals
    resumed: int  # the turns a resumed conversation had, run by an earlier mca

    @property
    def session(self) -> Session: ...

    @property
    def ui(self) -> ReplUI: ...

    @property
    def switch(self) -> Callable[[str], ModelOptions] | None: ...

    def models_configured(self) -> list[str]: ...

    def resume(self, wanted: str, fork: bool = False) -> None: ...


class SlashCommands:
    """/help, /undo, /diff, /model, /resume, ... for one REPL."""

    def __init__(self, repl: Face) -> None:
        self.repl = repl
        self.table: dict[str, Command] = {
            "/help": Command("list the commands", self.help),
            "/undo": Command(
                "revert the last turn's changes, commands' too (--force: even if edited)",
                self.undo,
            ),
            "/rewind": Command(
                "files and conversation back to before turn N (no N: pick from a list)",
                self.rewind,
            ),
            "/snapshots": Command("list the turns /undo can revert", self.snapshots),
            "/diff": Command("everything mca changed in this session, as one diff", self.diff),
            "/clear": Command("start a new conversation (files stay as they are)", self.clear),
            "/model": Command("show what is configured; /model NAME switches", self.model),
            "/tools": Command("show the eight tools", self.tools),
            "/exit": Command("leave mca (also exit, quit, Ctrl-D)", self.exit),
            "/skills": Command("skills found, their status and diagnostics", self.skills),
            "/why": Command("why skills were (not) loaded for the last turn", self.why),
            "/ledger": Command(
                "what the last turn put in the context ('all': every turn)", self.ledger
            ),
            "/cost": Command("tokens, model calls and estimated cost of this session", self.cost),
            "/thinking": Command("the last turn's thinking, whole", self.thinking),
            "/compact": Command("summarise older turns now (skill bodies are kept)", self.compact),
            "/steps": Command("show or set the step limit: model calls in one turn", self.steps),
            "/mode": Command(
                "show or set what runs without asking (ask, auto-edit, ...)", self.mode
            ),
            "/resume": Command(
                "go on with a saved conversation (/resume ID; --fork: a copy, new id)", self.resume
            ),
            "/status": Command(
                "model, base URL, mode, sandbox, context, instruction files, skills", self.status
            ),
            "/export": Command("write the conversation as Markdown (/export FILE)", self.export),
            "/init": Command("write a first AGENTS.md for this workspace", self.init),
        }

    @property
    def say(self) -> Callable[[str], None]:
        return self.repl.ui.say

    def help(self, arg: str) -> None:
        names = {**self.table, "/<skill> [text]": Command("use that skill for a turn", self.help)}
        names["# text"] = Command("remember: a note for the project's AGENTS.md", self.help)
        names["#~ text"] = Command("remember: a note for your own AGENTS.md", self.help)
        names["!command"] = Command(
            "run a shell command yourself (no approval, no sandbox: you typed it)", self.help
        )
        width = max(len(n) for n in names)
        lines = [f"{n:<{width}}  {c.help}" for n, c in sorted(names.items())]
        try:
            skills = self.repl.session.skills.discovery.skills
        except McaError:  # the commands still help; the error shows on the next turn
            skills = {}
        from mca.ui.line_editor import KEYS

        wide = max(len(k) for k, _ in KEYS)
        keys = ["", "keys:", *(f"  {k:<{wide}}  {what}" for k, what in KEYS)]
        self.say("\n".join(lines + skill_help(skills, self.table) + keys))

    def skill_refusal(self, name: str) -> str | None:
        """For /NAME that is no command: None when no skill has that name, '' when it may be
        used this way, else why not."""
        from mca.skills.switches import user_invocable

        skill = self.repl.session.skills.discovery.skills.get(name[1:])
        if skill is None or user_invocable(skill):
            return None if skill is None else ""
        return (
            f"{name} is a skill that is not offered as a command (user-invocable: false in its"
            " SKILL.md); the model can still read it"
        )

    def steps(self, arg: str) -> None:
        """/steps: the step limit; /steps N sets it from the next turn on."""
        session = self.repl.session
        if not arg.strip():
            self.say(f"step limit: {session.max_steps} model calls in one turn (/steps N sets it)")
            return
        wanted = int(arg) if arg.strip().isascii() and arg.strip().isdigit() else 0
        if not 1 <= wanted <= MOST_STEPS:
            self.say(f"usage: /steps N, a whole number of model calls from 1 to {MOST_STEPS}")
            return
        session.set_max_steps(wanted)
        self.say(f"step limit: {wanted} model calls in one turn, from the next turn on")

    def undo(self, arg: str) -> None:
        self.say(undo_lines(self.repl.session.undo(force=arg.strip() == "--force")))

    def rewind(self, arg: str) -> None:
        from mca.ui.rewind_picker import rewind

        rewind(self.repl.session, self.repl.ui, arg.strip())

    def snapshots(self, arg: str) -> None:
        self.say(snapshot_lines(self.repl.session.undoable()))

    def diff(self, arg: str) -> None:
        from mca.text.diff import session_diffs
        from mca.ui.diff_view import draw_diffs

        changes = self.repl.session.changes()
        if not changes:
            self.say("no file changes in this session (or all of them were undone)")
            return
        self.repl.ui.show_diff(draw_diffs(session_diffs(changes)))
        self.say(f"{plural(len(changes), 'file')} changed this session")

    def clear(self, arg: str) -> None:
        self.repl.session.clear()
        self.say("new conversation; files and snapshots are unchanged")

    def model(self, arg: str) -> None:
        name = arg.strip()
        session = self.repl.session
        if not name:
            from mca.models import describe_reasoning

            s = session.model
            key = f"key from {s.api_key_var}" if s.api_key_var else "no API key"
            wire = f" · wire {s.wire}" if s.wire else ""
            if (now := session.wire()) != s.wire:  # the server had no Responses API
                wire = f" · wire {now} (the server has no {s.wire} API)"
            lines = [
                f"provider {s.provider} · model {s.model} · base URL {s.base_url or '(none)'}"
                f" · {key} · context window {s.context_window:,} tokens{wire}"
            ]
            reasoning = describe_reasoning(s)
            lines += [f"reasoning: {reasoning}"] if reasoning else []
            lines += self.repl.models_configured()
            self.say("\n".join(lines))
            return
        if self.repl.switch is None:
            raise McaError("/model NAME is not available here")
        self.say(session.switch_model(self.repl.switch(name)))

    def tools(self, arg: str) -> None:
        from mca.tools import REGISTRY

        self.say(tools_text(list(REGISTRY.values())))

    def exit(self, arg: str) -> None:
        self.repl.running = False

    def skills(self, arg: str) -> None:
        from mca.skills.views import discovery_text

        sk = self.repl.session.skills
        catalog = sk.discovery.catalog.text
        tokens = sk.estimator.count(catalog)
        self.say(
            discovery_text(sk.discovery)
            + f"\n\ncatalog in the system prompt: {len(catalog):,} chars, {tokens:,} tokens"
            f" ({sk.estimator.label})"
        )

    def why(self, arg: str) -> None:
        from mca.skills.views import stage_text

        sk = self.repl.session.skills
        if not sk.stage.history:
            self.say("no turn in this session yet: /why explains the skills of its last turn")
            return
        turn, result = sk.stage.history[-1]
        tokens = sk.estimator.count(result.injected_text)
        self.say(f"turn {turn}:\n" + stage_text(result, tokens, sk.estimator.label))

    def ledger(self, arg: str) -> None:
        book = self.repl.session.ledger
        if arg.strip() == "all":
            self.say(ledger_summary(book.turns))
        elif book.last is None:
            self.say("no turn yet")
        else:
            self.say(ledger_table(book.last))

    def cost(self, arg: str) -> None:
        from mca.usage import cost_text

        repl, session = self.repl, self.repl.session
        prices = (session.config.prices, session.config.catalog)
        self.say(cost_text(repl.totals, session.model.model, *prices, repl.resumed))

    def thinking(self, arg: str) -> None:
        from mca.text.sanitize import exact

        replies = self.repl.session.thinking()
        if not replies:
            self.say("no thinking in the last turn (the model did not think, or did not show it)")
            return
        self.say("\n\n".join(f"thinking, reply {i}:\n{exact(t)}" for i, t in enumerate(replies, 1)))

    def mode(self, arg: str) -> None:
        from mca.modes import MODES

        session = self.repl.session
        wanted = arg.strip()
        if wanted and wanted not in MODES:
            self.say(f"unknown mode {wanted!r} (modes: {', '.join(MODES)})")
            return
        if wanted:
            session.set_mode(wanted)
            box = session.sandbox
            none = wanted == "read-only" and (box is None or not box.active)
            self.say(f"mode {wanted}: {MODES[wanted]}" + (" (none here)" if none else ""))
            return
        now = session.mode
        lines = [f"{'*' if m == now else ' '} {m:<10} {what}" for m, what in MODES.items()]
        self.say("\n".join([*lines, f"sandbox: {session.sandbox_text()}"]))

    def status(self, arg: str) -> None:
        from mca.ui.status import status_text

        self.say(self.repl.ui.fitted(status_text(self.repl.session)))

    def compact(self, arg: str) -> None:
        self.say(self.repl.session.compact())

    def resume(self, arg: str) -> None:
        words = arg.split()
        fork = "--fork" in words
        self.repl.resume(" ".join(w for w in words if w != "--fork"), fork)

    def export(self, arg: str) -> None:
        from mca.text.sanitize import scrub
        from mca.ui.export import conversation_markdown

        session = self.repl.session
        if not session.messages:
            self.say("nothing to export: the conversation is empty")
            return
        when = time.strftime("%Y-%m-%d %H:%M")
        meta = [f"session {session.id}, exported {when}", f"model {session.model.model}"]
        text = conversation_markdown(session.messages, "mca conversation", meta)
        where = session.export(arg.strip(), scrub(text, session.config.secrets).encode())
        self.say(f"wrote {where} ({plural(len(text.splitlines()), 'line')})")

    def init(self, arg: str) -> None:
        from mca.errors import ToolError
        from mca.session.initdoc import AGENTS_FILE

        session = self.repl.session
        workspace = session.config.workspace
        if os.path.lexists(workspace / AGENTS_FILE) and not self._yes(
            f"{AGENTS_FILE} exists: overwrite it (/undo puts it back)?"
        ):
            self.say(f"{AGENTS_FILE} left as it is")
            return
        drafted = self._draft()
        if drafted is None:
            self.say(f"/init cancelled; {AGENTS_FILE} not written")
            return
        text, how = drafted
        try:
            rel = session.write_instructions(AGENTS_FILE, text.strip().encode() + b"\n")
        except ToolError as e:
            raise McaError(f"{AGENTS_FILE} not written: {e}") from None
        lines = plural(len(text.strip().splitlines()), "line")
        self.say(f"wrote {rel} ({lines}), {how}; read from the next turn on; /undo reverts it")
        if (workspace / "CLAUDE.md").exists():
            self.say("note: CLAUDE.md here is no longer read: AGENTS.md takes its place")

    def _yes(self, question: str) -> bool:
        """A yes/no question; Ctrl-C or Ctrl-D answers no."""
        try:
            return self.repl.ui.confirm(question)
        except KeyboardInterrupt:
            return False

    def _draft(self) -> tuple[str, str] | None:
        """/init's text and where it came from: the model's draft when one is configured,
        mca's template otherwise (None: Ctrl-C while the model drafted)."""
        from mca.session.initdoc import draft_request, template, unfence

        session = self.repl.session
        s, c = session.model, session.config
        if s.provider == "mock":
            how = "from mca's template (no model is configured: with one, /init has it drafted)"
            return template(c.workspace), how
        self.say(f"asking {s.model} to draft AGENTS.md from a look at the workspace ...")
        try:
            text = unfence(session.ask_aside(draft_request(c.workspace, c.secrets)))
        except KeyboardInterrupt:  # the draft is not worth leaving mca for
            return None
        return (
            text,
            f"drafted by {s.model} from the workspace's files: read it before relying on it",
        )


def skill_help(skills: Mapping[str, Skill], commands: Mapping[str, Command]) -> list[str]:
    """/help's lines about skills: which /NAME sends a turn naming that skill (with its
    argument-hint), and which skills a built-in command shadows ($NAME still names them)."""
    from mca.skills.switches import argument_hint, user_invocable

    offered = [s for n, s in sorted(skills.items()) if user_invocable(s)]
    if not offered:
        return []
    lines = ["skills (/NAME text sends text naming the skill; $NAME works anywhere in a sentence):"]
    for s in offered[:HELP_SKILLS_MAX]:
        shown = " ".join(filter(None, (f"/{s.name}", argument_hint(s))))
        if f"/{s.name}" in commands:
            shown = f"${s.name}  (/{s.name} is the built-in command)"
        lines.append(f"  {shown}")
    if len(offered) > HELP_SKILLS_MAX:
        lines.append(f"  ... and {len(offered) - HELP_SKILLS_MAX} more (/skills lists them)")
    return lines
