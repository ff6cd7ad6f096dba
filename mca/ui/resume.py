"""/resume and --resume in the REPL: pick a saved conversation of this workspace, go on with it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mca.words import plural

if TYPE_CHECKING:
    from mca.session import Session
    from mca.sessions import Saved
    from mca.ui.terminal import ReplUI

MAX_LISTED = 20


def _choose(session: Session, ui: ReplUI, ask: Callable[[str], str]) -> Saved | None:
    """The person picks from the newest saved conversations here (None: nothing picked)."""
    from mca.sessions import find_saved, listing

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


def resume(session: Session, ui: ReplUI, ask: Callable[[str], str], wanted: str) -> int | None:
    """Go on with a saved conversation: 'last', an id, or '' to pick from a list. Returns how
    many turns it had (None: nothing resumed)."""
    from mca.sessions import pick

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
    session.restore(saved)
    for note in saved.notes:
        ui.say(note)
    skills = sorted({n for m in saved.messages for n in m.skills})
    held = f"; skills in context: {', '.join(skills)}" if skills else ""
    turns, messages = plural(saved.turns, "turn"), plural(len(saved.messages), "message")
    ui.say(f"resumed {saved.id}: {turns}, {messages}{held}")
    return saved.turns
