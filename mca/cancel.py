"""A turn cancelled part way (Esc, Ctrl-C, SIGTERM, SIGHUP): what it completed stays in the
conversation, as it stays on disk, so the model knows what it changed and "ok, continue" works.

Every tool call of the turn's last reply gets an answer, because every wire requires one for
each call (Chat Completions: a `tool` message per `tool_call_id`; Anthropic: a `tool_result`
per `tool_use` in the next user message; the Responses API: a `function_call_output` per
`call_id`): the call that was running is answered "cancelled", the ones after it "not run".
Then a note says the turn stopped there. /undo of that turn takes its files back and these
messages out (`drop_cancelled`). Pure functions over the message list.
"""

from __future__ import annotations

from mca.errors import McaError
from mca.text.counts import plural
from mca.types import KIND_CANCELLED, Message

__all__ = [
    "INTERRUPTED_CALL",
    "NOT_RUN",
    "close_cancelled",
    "close_failed",
    "drop_cancelled",
    "ended_early",
    "failed_note",
    "kept_line",
    "note",
    "said",
]

INTERRUPTED_CALL = "cancelled: the user stopped the turn ({why}) while this call was running"
NOT_RUN = "not run: the user stopped the turn ({why}) before this call"


def note(why: str) -> str:
    """What the model reads where the turn stopped."""
    return (
        f"[mca: the user cancelled this turn here ({why}). The tool calls above that have results"
        " ran, and the workspace is as they left it; the one marked cancelled may have done part"
        " of its work.]"
    )


FAILED_HEAD = "[mca: an error ended this turn here"


def failed_note(error: str) -> str:
    """What the model reads where an error ended the turn."""
    return (
        f"{FAILED_HEAD} ({error}). The tool calls above that have results"
        " ran, and the workspace is as they left it.]"
    )


def close_cancelled(
    messages: list[Message],
    start: int,
    turn: int,
    why: str,
    running: str | None,
    note_text: str = "",
) -> bool:
    """Close the turn that began at `start`: answer each call its last reply left unanswered
    (`running`: what the command that was stopped had printed, None when no call was running,
    say at an approval question), then the note (`note_text`: another than the cancel's). False,
    and nothing changed, when no call completed and none was running: nothing happened that
    the disk could keep."""
    replies = (
        i for i in range(len(messages) - 1, start - 1, -1) if messages[i].role == "assistant"
    )
    last = next((i for i in replies if messages[i].tool_calls), None)
    done = any(m.role == "tool" for m in messages[start:])
    if last is None or not (done or running is not None):
        return False
    answered = {m.tool_call_id for m in messages[last + 1 :] if m.role == "tool"}
    for call in messages[last].tool_calls:
        if call.id in answered:
            continue
        text = (INTERRUPTED_CALL if running is not None else NOT_RUN).format(why=why)
        if running:
            text += f"; its output so far:\n{running.rstrip()}"
        running = None
        messages.append(
            Message(
                "tool", text, tool_call_id=call.id, tool_name=call.name, is_error=True, turn=turn
            )
        )
    messages.append(Message("user", note_text or note(why), kind=KIND_CANCELLED, turn=turn))
    return True


def close_failed(messages: list[Message], turn: int, steps: int, error: McaError) -> bool:
    """An error ended `turn` after `steps` tool calls had run: keep them, closed by a note the
    model reads, and have the error say so. False, and nothing changed, when none had run."""
    start = next((i for i, m in enumerate(messages) if m.turn == turn), None)
    if not steps or start is None:
        return False
    if not close_cancelled(messages, start, turn, "", None, failed_note(str(error))):
        return False
    error.kept = kept_line(steps)
    return True


def drop_cancelled(messages: list[Message], turn: int) -> bool:
    """/undo reverted `turn`'s files: when that turn is the conversation's last and was
    cancelled, its messages go too (the conversation never disagrees with the disk)."""
    if not messages or messages[-1].kind != KIND_CANCELLED or messages[-1].turn != turn:
        return False
    cut = next(i for i, m in enumerate(messages) if m.turn >= turn)
    del messages[cut:]
    return True


def said(kept: bool, steps: int, signal: str = "") -> str:
    """The line a person reads when a turn was cancelled (`signal`: SIGTERM or SIGHUP when one
    stopped it); each face adds how to go on."""
    how = f"turn cancelled ({signal})" if signal else "turn cancelled"
    if not kept:
        return f"{how}; the conversation is as it was before it"
    if steps == 0:  # a call was running: nothing completed, but it may have done part
        return (
            f"{how}; the conversation keeps the call that was running, marked cancelled,"
            " and a note that it stopped"
        )
    done = plural(steps, "completed tool call")
    return f"{how}; the conversation keeps its {done}, as the files do, and a note that it stopped"


def kept_line(steps: int) -> str:
    """What a person reads after an error that ended a turn with completed steps."""
    are, them = ("is", "it") if steps == 1 else ("are", "them")
    return (
        f"the turn's {plural(steps, 'completed tool call')} {are} kept in the conversation, as"
        f" a cancel keeps {them}, with a note that it stopped: say 'continue' to go on (/undo"
        f" takes {them} back)"
    )


def ended_early(messages: list[Message]) -> str:
    """What a person picking a conversation up (--continue, --resume) should know of how its
    last turn ended: cancelled, or ended by an error, part way ('' : it ended as turns do)."""
    if not messages or messages[-1].kind != KIND_CANCELLED:
        return ""
    how = "ended by an error" if messages[-1].content.startswith(FAILED_HEAD) else "cancelled"
    return (
        f"its last turn was {how} part way: what it completed is kept, with a note that it"
        " stopped there; say 'continue' to go on, or /undo to take it back"
    )
