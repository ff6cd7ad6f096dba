"""The conversation's side of /undo and /rewind: the files go back through the checkpoints
(mca/workspace), and the messages, ledger and saved conversation follow them here."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mca.cancel import drop_cancelled
from mca.events import Undone
from mca.state.checked import message_from
from mca.state.conversations import message_json
from mca.text.sanitize import scrub
from mca.types import KIND_UNDONE, Message
from mca.workspace.report import Rewound, UndoReport

if TYPE_CHECKING:
    from mca.ledger import LedgerBook
    from mca.state.conversations import SessionStore
    from mca.state.log import SessionLog
    from mca.workspace.store import WorkspaceStore

__all__ = ["Rewound", "rewind", "turns", "undo", "undone_note"]


def undo(
    workspace: WorkspaceStore,
    messages: list[Message],
    store: SessionStore,
    log: SessionLog,
    force: bool,
) -> UndoReport:
    """Revert the newest turn or rewind not yet undone; a rewind's conversation comes back, and
    a cancelled last turn's kept steps leave it with their files."""
    report, talk = workspace.undo(force=force)
    if talk is not None:
        messages[:] = [message_from(m) for m in json.loads(talk)]
        store.turn(messages, None)
    elif (
        (turn := _own_turn(report, workspace))
        and report.complete
        and drop_cancelled(messages, turn)
    ):
        store.turn(messages, None)
        report.notes.append(
            "the conversation: that cancelled turn's completed steps are taken out too"
        )
    elif turn and (said := undone_note(report, turn)):
        messages.append(Message("user", said, kind=KIND_UNDONE, turn=turn))
        store.turn(messages, None)
        report.notes.append("the conversation: a note tells the model the files went back")
    log.event(Undone(report.turn_label, report.restored, report.removed, report.skipped))
    return report


def undone_note(report: UndoReport, turn: int) -> str:
    """What the model reads after /undo took back a turn of this conversation whose messages
    stay (the conversation never disagrees with the disk): which files are as before it."""
    back = [*report.restored, *report.removed]
    if not back:
        return ""
    shown = ", ".join(back[:20]) + (f" and {len(back) - 20} more" if len(back) > 20 else "")
    return (
        f"[mca: the user ran /undo: the changes turn {turn} made to files are taken back, and"
        f" these are as they were before it: {shown}. What that turn says it changed is no"
        " longer on disk.]"
    )


def _own_turn(report: UndoReport, workspace: WorkspaceStore) -> int:
    """The turn of this conversation the undo reverted (0: an /export's write, another
    session's turn)."""
    if report.turn is None or report.turn[0] not in workspace.sessions:
        return 0
    return report.turn[1]


def rewind(
    workspace: WorkspaceStore,
    messages: list[Message],
    ledger: LedgerBook,
    store: SessionStore,
    log: SessionLog,
    turn: int,
    now: int,
    secrets: Sequence[str],
) -> Rewound:
    """Files, then the conversation, back to before `turn`; the rewind keeps the conversation
    as it was (scrubbed of known secrets, as saved conversations are) so /undo can return.
    `now`: the turns taken so far (the rewind's record is named after them)."""
    talk = json.dumps([message_json(m) for m in messages])
    done = workspace.rewind(turn, now, scrub(talk, secrets).encode())
    # a reply carries no turn number (0): the cut is at the first message of `turn` or later
    cut = next((i for i, m in enumerate(messages) if m.turn >= turn), len(messages))
    del messages[cut:]
    ledger.turns[:] = [t for t in ledger.turns if t.turn < turn]
    store.turn(messages, None)
    r = done.report
    log.event(Undone(r.turn_label, r.restored, r.removed, r.skipped))
    return done


def turns(messages: Sequence[Message]) -> list[tuple[int, str]]:
    """(turn, the sentence that started it) for each turn of the conversation, oldest first."""
    return [
        (m.turn, " ".join(m.content.split())[:80])
        for m in messages
        if m.role == "user" and m.kind == "chat"
    ]
