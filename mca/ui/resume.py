"""/resume and --resume in the REPL: pick a saved conversation of this workspace, go on with it
(under its own id, or a copy under a new one: --fork), and see where it left off: its last turns,
a line for each message and tool call."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mca.cancel import ended_early
from mca.text.counts import plural
from mca.text.sanitize import visible
from mca.types import KIND_CHAT, KIND_SHELL

if TYPE_CHECKING:
    from mca.session.session import Session
    from mca.state.conversations import Saved
    from mca.types import Message
    from mca.ui.terminal import ReplUI

MAX_LISTED = 20
SHOWN_TURNS = 3  # turns of a resumed conversation shown as it is picked up
SHOWN_LINES = 12  # at most, of those turns (the last ones)


def _line(who: str, text: str, columns: int) -> str:
    from mca.ui.livebox import fit

    return fit(f"  {who:<4} {visible(' '.join(text.split()))}", columns)


def last_turns(messages: Sequence[Message], columns: int) -> list[str]:
    """Where a conversation left off: its last turns, one line for each of the person's
    messages, the model's replies and its tool calls, each cut to the screen's width."""
    from mca.ui.render import describe_call

    starts = [i for i, m in enumerate(messages) if m.role == "user" and m.kind == KIND_CHAT]
    first = starts[-SHOWN_TURNS] if len(starts) >= SHOWN_TURNS else 0
    lines: list[str] = []
    for m in messages[first:]:  # a turn: its sentence and what followed it
        if m.role == "user" and m.kind in (KIND_CHAT, KIND_SHELL):
            lines.append(_line("you", m.content, columns))
        elif m.role == "assistant":
            if m.content.strip():
                lines.append(_line("mca", m.content, columns))
            lines += [
                _line("", "→ " + describe_call(c.name, c.arguments), columns) for c in m.tool_calls
            ]
    earlier = sum(i < first for i in starts)
    cut = max(len(lines) - SHOWN_LINES, 0)
    more = f" and {plural(cut, 'line')}" if cut else ""
    head = [f"  … {plural(earlier, 'earlier turn')}{more} (/export writes them all)"]
    return (head if earlier or cut else []) + lines[cut:]


def _choose(session: Session, ui: ReplUI, ask: Callable[[str], str]) -> Saved | None:
    """The person picks from the newest saved conversations here (None: nothing picked)."""
    from mca.state.conversations import find_saved, listing

    here = session.config.workspace
    where = session.config.home / "sessions"
    every = find_saved(where, here)
    for why in every.skipped:
        ui.say(f"not listed (cannot be read): {why}")
    found = [s for s in every.saved if s.id != session.id][:MAX_LISTED]
    if not found:
        ui.say(f"no saved conversations in {here} yet")
        return None
    ui.say("saved conversations, newest first:\n" + "\n".join(listing(found, time.time())))
    try:
        answer = ask(f"which one? [1-{len(found)}, Enter: none] ").strip()
    except KeyboardInterrupt:
        answer = ""
    if not answer:
        ui.say("nothing resumed")
        return None
    if not answer.isdigit() or not 1 <= int(answer) <= len(found):
        ui.say(f"no conversation {answer!r} in the list; nothing resumed")
        return None
    return found[int(answer) - 1]


def resume(
    session: Session, ui: ReplUI, ask: Callable[[str], str], wanted: str, fork: bool = False
) -> int | None:
    """Go on with a saved conversation: 'last', an id, or '' to pick from a list (`fork`: a
    copy, under a new id). Returns how many turns it had (None: nothing resumed)."""
    from mca.state.conversations import pick

    if wanted:
        saved = pick(session.config.home / "sessions", session.config.workspace, wanted)
    else:
        chosen = _choose(session, ui, ask)
        if chosen is None:
            return None
        saved = chosen
    if saved.workspace != str(session.config.workspace):
        ui.say(f"note: that conversation was in {saved.workspace}; files refer to it")
    if session.messages and session.store.written:
        ui.say(f"this conversation stays saved: /resume {session.id} brings it back")
    session.restore(saved, fork)
    for note in saved.notes:
        ui.say(note)
    skills = sorted({n for m in saved.messages for n in m.skills})
    held = f"; skills in context: {', '.join(skills)}" if skills else ""
    turns, messages = plural(saved.turns, "turn"), plural(len(saved.messages), "message")
    how = f"forked {saved.id} as {session.id}" if fork else f"resumed {saved.id}"
    ui.say(f"{how}: {turns}, {messages}{held}")
    if early := ended_early(saved.messages):
        ui.say(early)
    shown = last_turns(saved.messages, shutil.get_terminal_size().columns - 1)
    if shown:
        ui.say("\n".join(shown))
    return saved.turns
