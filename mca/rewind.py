"""The conversation's side of /undo and /rewind: the files go back through the checkpoints
(mca/workspace), and the messages, ledger and saved conversation follow them here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mca.events import Undone
from mca.records import message_from
from mca.sanitize import scrub
from mca.sessions import message_json
from mca.workspace.report import Rewound, UndoReport

if TYPE_CHECKING:
    from mca.session import Session

__all__ = ["Rewound", "rewind", "turns", "undo"]


def undo(session: Session, force: bool) -> UndoReport:
    """Revert the newest turn or rewind not yet undone; a rewind's conversation comes back."""
    report, talk = session.workspace.undo(force=force)
    if talk is not None:
        session.agent.messages[:] = [message_from(m) for m in json.loads(talk)]
        session.store.turn(session.agent.messages, None)
    session.log.event(Undone(report.turn_label, report.restored, report.removed, report.skipped))
    return report


def rewind(session: Session, turn: int) -> Rewound:
    """Files, then the conversation, back to before `turn`; the rewind keeps the conversation
    as it was (scrubbed of known secrets, as saved conversations are) so /undo can return."""
    agent = session.agent
    talk = json.dumps([message_json(m) for m in agent.messages])
    done = session.workspace.rewind(
        turn, session.turns, scrub(talk, session.settings.secrets).encode()
    )
    # a reply carries no turn number (0): the cut is at the first message of `turn` or later
    cut = next((i for i, m in enumerate(agent.messages) if m.turn >= turn), len(agent.messages))
    del agent.messages[cut:]
    session.ledger.turns[:] = [t for t in session.ledger.turns if t.turn < turn]
    session.store.turn(agent.messages, None)
    r = done.report
    session.log.event(Undone(r.turn_label, r.restored, r.removed, r.skipped))
    return done


def turns(session: Session) -> list[tuple[int, str]]:
    """(turn, the sentence that started it) for each turn of the conversation, oldest first."""
    return [
        (m.turn, " ".join(m.content.split())[:80])
        for m in session.messages
        if m.role == "user" and m.kind == "chat"
    ]
