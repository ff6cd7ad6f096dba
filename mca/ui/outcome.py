"""What the REPL says of the conversation when a turn ended without its answer: cancelled
(its completed steps kept or not), or failed (kept before the failure, or rolled back)."""

from __future__ import annotations

from mca.cancel import said
from mca.errors import McaError
from mca.process import signals
from mca.turn import StopReason, TurnResult

ROLLED_BACK = "the conversation is as it was before this turn"


def cancelled(last: TurnResult | None, before: TurnResult | None, then: str) -> str:
    """What a cancelled turn left in the conversation (its completed steps, once a tool call
    had begun) and, when it kept them, `then`: how to go on or take them back. `before`: the
    latest turn before this one."""
    kept = last is not None and last is not before and last.committed
    if last is None or not kept or last.stop is not StopReason.INTERRUPTED:
        return said(False, 0, signals.name())
    return f"{said(True, len(last.tools), signals.name())}; {then}"


def kept(last: TurnResult | None, before: TurnResult | None) -> str:
    """After a failed turn: what is true of the conversation when the turn was committed
    before the failure (ROLLED_BACK when it was rolled back, or never started)."""
    if last is None or last is before or not last.committed:
        return ROLLED_BACK
    return (
        f"the turn was kept (the conversation has it); {last.failed_after or 'a step after it'}"
        " failed after it"
    )


def after_error(error: McaError, last: TurnResult | None, before: TurnResult | None) -> str:
    """The error's line and what the conversation kept; an error that says it itself (the
    completed steps kept, mca/cancel.py's kept_line) says it once."""
    return f"error: {error}" if error.kept else f"error: {error}\n{kept(last, before)}"
