"""Compaction: when the context nears the window, older turns become a summary.

Protected messages (skill bodies injected by the pre-turn stage) are never summarised away:
they are kept verbatim, ahead of the summary, so a convention loaded early still applies.
"""

from __future__ import annotations

from collections.abc import Callable

from mca.context.engine import Engine
from mca.context.prompt import SystemPrompt
from mca.errors import PromptTooLong
from mca.events import COMPACT_ASKED, ContextCompacted, EventSink
from mca.ledger import message_text, tools_text
from mca.tokens import Estimator
from mca.types import KIND_SUMMARY, Message, Request, ToolSpec

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "KEEP_TURNS",
    "MIN_OUTPUT",
    "SUMMARIZE_PROMPT",
    "SUMMARY_TOKENS",
    "THRESHOLD",
    "Compactor",
]

THRESHOLD = 0.80
KEEP_TURNS = 2
DEFAULT_MAX_OUTPUT = 8192
MIN_OUTPUT = 256
SUMMARY_TOKENS = 1024
SUMMARIZE_PROMPT = (
    "SUMMARIZE: you are compacting a coding session. Write a short summary of the"
    " conversation below: what the user asked, what was changed (files, commands), what was"
    " decided and what is still open. Plain text, no preamble."
)


def _transcript(messages: list[Message]) -> str:
    lines = []
    for m in messages:
        who = {"user": "User", "assistant": "Assistant", "tool": f"Tool {m.tool_name}"}[m.role]
        text = message_text(m)
        lines.append(f"{who}: {text[:2000]}")
    return "\n".join(lines)


class Compactor:
    """The agent's before-model hook, and /compact."""

    def __init__(
        self,
        engine: Engine,
        estimator: Estimator,
        *,
        window: int,
        tools: tuple[ToolSpec, ...],
        emit: EventSink,
        threshold: float = THRESHOLD,
        keep_turns: int = KEEP_TURNS,
        max_output: int = 0,
        factor: Callable[[], float | None] = lambda: None,
    ) -> None:
        self.engine = engine  # the model that summarises, the prompt that is counted
        self.est = estimator
        self.window = window
        self.max_output = max_output  # 0: a default that fits the window
        self.factor = factor  # provider tokens per estimated token, once calibrated
        self.tools = tools
        # the prompt and tools' size, counted on first use (the tokenizer loads lazily) and
        # again when the prompt changes (the catalog was rebuilt)
        self._fixed: tuple[SystemPrompt, int] | None = None
        self.threshold = threshold
        self.keep_turns = keep_turns
        self.emit = emit
        self.last: ContextCompacted | None = None

    def tokens(self, history: list[Message]) -> int:
        """Estimated tokens of the whole context (per-message counts are cached)."""
        prompt = self.engine.prompt
        if self._fixed is None or self._fixed[0] is not prompt:
            count = self.est.count(prompt.text) + self.est.count(tools_text(self.tools))
            self._fixed = (prompt, count)
        return self._fixed[1] + sum(self.est.count(message_text(m)) for m in history)

    def server_tokens(self, history: list[Message]) -> int:
        """The estimate as the server will count it: calibrated when a factor is known. Before
        the tokenizer has loaded, bytes stand in (a token is at least one byte, so this only
        ever overstates) unless they come near the window: the first request need not wait."""
        factor = max(self.factor() or 1.0, 1.0)
        if not self.est.loaded:
            size = len(self.engine.prompt.text.encode())
            size += sum(len(message_text(m).encode()) for m in history)
            size += len(tools_text(self.tools).encode())
            if size * factor < self.threshold * self.window / 2:
                return round(size * factor)
        return round(self.tokens(history) * factor)

    def __call__(self, history: list[Message], turn: int) -> list[Message]:
        if self.server_tokens(history) <= self.threshold * self.window:
            return history
        self.fits(history, turn)  # before a summary is asked for: nothing is sent at all
        reason = f"context passed {self.threshold:.0%} of the {self.window:,}-token window"
        return self.compact(history, turn, reason)

    def fits(self, history: list[Message], turn: int) -> None:
        """Raise PromptTooLong when the prompt, the tools and this turn's own messages up to
        its first model call leave no room for an answer: no compaction can make them fit."""
        first = next((i for i, m in enumerate(history) if m.turn == turn), len(history))
        replies = [m for m in history[first:] if m.role == "assistant"]
        if replies:  # what the turn's tools added is the next compaction's (or the server's)
            return
        own = self.server_tokens(history[first:])
        room = self.window - self.window // 50 - MIN_OUTPUT
        if own <= room:
            return
        raise PromptTooLong(
            f"the prompt does not fit the model's context window: about {own:,} tokens with"
            f" mca's instructions and tools, and the window is {self.window:,} (with room kept"
            f" for an answer, {room:,}); nothing was sent. Send less (name the files and let"
            " the model read what it needs), or use a model with a larger window (--model; or"
            " MCA_CONTEXT_WINDOW when the server's is larger than mca knows)"
        )

    def output_budget(self, history: list[Message]) -> int:
        """How long the answer may be: the configured cap (or a quarter of the window, at most
        8,192), and never more than the window has left after the prompt."""
        cap = self.max_output or min(DEFAULT_MAX_OUTPUT, self.window // 4)
        left = self.window - self.server_tokens(history) - self.window // 50
        return min(cap, max(left, MIN_OUTPUT))  # when even that does not fit, the server says

    def overflowed(self, history: list[Message], turn: int) -> list[Message]:
        """The server refused the context as too long: compact now, whatever the estimate."""
        return self.compact(history, turn, "the server said the context was too long")

    def compact(
        self, history: list[Message], turn: int, reason: str = COMPACT_ASKED
    ) -> list[Message]:
        """Summarise all but the last turns; keep protected messages verbatim."""
        keep_from = turn - self.keep_turns + 1
        older = [m for m in history if m.turn < keep_from]
        recent = [m for m in history if m.turn >= keep_from]
        protected = [m for m in older if m.protected]
        to_summarize = [m for m in older if not m.protected]
        if not to_summarize:
            return history
        before = self.tokens(history)
        text = _transcript(to_summarize)
        request = Request(SUMMARIZE_PROMPT, (Message("user", text),), (), SUMMARY_TOKENS)
        summary = self.engine.model.complete(request).message.content.strip()
        note = Message(
            "user",
            f"[Summary of earlier turns, made by compaction]\n{summary}",
            kind=KIND_SUMMARY,
            turn=keep_from - 1,
        )
        out = [*protected, note, *recent]
        kept = [name for m in protected for name in m.skills]
        self.last = ContextCompacted(
            turn, before, self.tokens(out), len(to_summarize), kept, reason
        )
        self.emit(self.last)
        return out
