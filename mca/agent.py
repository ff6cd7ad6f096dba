"""The loop: pre-turn stage -> model -> tools -> repeat, until an answer or the step limit."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from mca.cancel import close_cancelled, close_failed
from mca.context.engine import Engine
from mca.errors import ContextOverflow, McaError, ToolError
from mca.events import ModelWaiting, Notice, ThinkingDelta, ToolCalled, ToolReturned
from mca.process import signals
from mca.repeats import Repeats
from mca.text.counts import plural
from mca.text.sanitize import valid_text
from mca.tools import get_tool, tool_specs
from mca.tools.base import ToolEnv, TurnState
from mca.tools.command import CommandInterrupted
from mca.turn import DEFAULT_MAX_STEPS, StopReason, ToolRecord, TurnResult
from mca.types import Message, Request, Response, TextSink, ToolCall

__all__ = [
    "MAX_CALLS_PER_REPLY",
    "Agent",
    "AsksForSteps",
    "BeforeModel",
    "MoreSteps",
    "PreTurn",
    "no_pre_turn",
]

MAX_CALLS_PER_REPLY = 8
TOO_LONG = (
    "the context is still too long after compacting: start a new conversation (/clear, or"
    " -p without --continue; the files stay as they are), or use a model with a larger window"
)
MoreSteps = Callable[[int, int], bool]  # (model calls made, how many more): go on?


@runtime_checkable
class AsksForSteps(Protocol):
    """A UI that can ask, at a turn's step limit, whether it may go on (the REPL's)."""

    def more_steps(self, calls: int, more: int) -> bool: ...


class PreTurn(Protocol):
    """Decides what goes in ahead of the user's sentence (the skill runtime fills this), given
    the paths the last turn read or wrote. It may revise earlier messages it injected itself
    (a replaced skill); the turn's rollback covers it."""

    def __call__(
        self, sentence: str, history: list[Message], turn: int, touched: Sequence[str]
    ) -> list[Message]: ...


class BeforeModel(Protocol):
    """The context's keeper: sees (and may compact) the history before each model call, says
    how long an answer may be, and compacts at once when the server says the context overflowed."""

    def __call__(self, history: list[Message], turn: int) -> list[Message]: ...

    def output_budget(self, history: list[Message]) -> int: ...

    def overflowed(self, history: list[Message], turn: int) -> list[Message]: ...


def no_pre_turn(
    sentence: str, history: list[Message], turn: int, touched: Sequence[str]
) -> list[Message]:
    """The empty pre-turn stage."""
    return []


def _same(text: str) -> str:
    return text


@dataclass
class Agent:
    """One conversation: its messages, the engine it asks, and what its tools may use."""

    engine: Engine
    env: ToolEnv
    max_steps: int = DEFAULT_MAX_STEPS  # model calls in one turn
    pre_turn: PreTurn = no_pre_turn
    before_model: BeforeModel | None = None
    on_text: TextSink | None = None
    redact: Callable[[str], str] = _same  # scrubs known secrets from workspace text
    max_calls: int = MAX_CALLS_PER_REPLY  # tool calls run from one reply
    more_steps: MoreSteps | None = None  # asked at the step limit (the REPL); None: stop there
    messages: list[Message] = field(default_factory=list)
    turn: int = 0
    state: TurnState = field(default_factory=lambda: TurnState(0))  # the latest turn's
    last: TurnResult | None = None  # the latest turn, also when it failed (for --json)

    def run_turn(self, sentence: str) -> TurnResult:
        """Run one user turn. On an exception the conversation is put back as it was, but for
        an interruption once a tool call began: what the turn completed stays, closed by a note
        (mca/cancel.py), and the result says committed. On return it holds the turn."""
        before, started = list(self.messages), time.monotonic()
        self.turn += 1
        result = self.last = TurnResult(self.turn, "")
        try:
            touched = sorted(self.state.touched)
            injected = self.pre_turn(sentence, self.messages, self.turn, touched)
            self.messages.extend(replace(m, content=self.redact(m.content)) for m in injected)
            self.state = TurnState(self.turn, self.messages)
            self.messages.append(Message("user", sentence, turn=self.turn))
            self._loop(result)
        except KeyboardInterrupt as stop:  # Esc, Ctrl-C, SIGTERM, SIGHUP
            self._cancelled(stop, before, result)
            raise
        except McaError as e:  # completed steps stay, as a cancel keeps them
            result.stop = StopReason.ERROR
            if close_failed(self.messages, self.turn, len(result.tools), e):
                result.committed, result.failed_after = True, "the next model call"
            else:
                self.messages[:] = before
            raise
        except BaseException:
            self.messages[:] = before
            raise
        finally:
            result.seconds = time.monotonic() - started
        result.committed = True
        return result

    def _cancelled(
        self, stop: KeyboardInterrupt, before: list[Message], result: TurnResult
    ) -> None:
        """Keep what the stopped turn completed, closed by a note, once a tool call had begun
        (mca/cancel.py); otherwise put the conversation back as it was."""
        result.stop = StopReason.INTERRUPTED
        ran = None  # what the stopped command printed so far, and what was put back after it
        if isinstance(stop, CommandInterrupted):
            ran = "\n".join([stop.output.rstrip("\n"), *(f"[mca: {n}]" for n in stop.notes)])
        running = None if ran is None else self.redact(valid_text(ran))
        # where the turn begins now (compacting may have shortened what came before it)
        start = next((i for i, m in enumerate(self.messages) if m.turn == self.turn), len(before))
        result.committed = close_cancelled(self.messages, start, self.turn, signals.why(), running)
        if not result.committed:
            self.messages[:] = before

    def _loop(self, result: TurnResult) -> None:
        calls, limit, retried, repeats = 0, self.max_steps, False, Repeats()
        while calls < limit or self._go_on(calls):
            if calls >= limit:  # the person let it go on
                limit = calls + self.max_steps
            response = self._ask(result)
            if response is None:  # the context overflowed: compacted, try once more
                if retried:
                    raise ContextOverflow(TOO_LONG)
                retried = True
                continue
            calls += 1
            reply = response.message
            self.messages.append(reply)
            if not reply.tool_calls:
                result.answer = reply.content
                if response.cut:
                    result.notice = (
                        "the answer stopped at the output limit; say 'continue' for the rest"
                    )
                elif not reply.content.strip():
                    result.notice = "the model returned an empty answer"
                return
            for i, call in enumerate(reply.tool_calls):
                if call.invalid:
                    self.messages.append(self._unreadable(call, response.cut, result))
                elif i < self.max_calls:
                    self.messages.append(self._call_tool(call, result, repeats.see(call)))
                else:
                    self.messages.append(self._not_run(call))
            # what the tools asked to add (a skill the model read) comes after all the results
            pending, self.state.pending = self.state.pending, []
            self.messages.extend(replace(m, content=self.redact(m.content)) for m in pending)
        result.stop = StopReason.STEP_LIMIT
        result.answer = (
            f"stopped: the turn reached its step limit of {plural(calls, 'model call')};"
            " say 'continue' to go on (/steps N or --max-steps N raises the limit)"
        )

    def _go_on(self, calls: int) -> bool:
        """At the step limit: whether the person lets the turn make max_steps more calls."""
        return calls > 0 and self.more_steps is not None and self.more_steps(calls, self.max_steps)

    def _ask(self, result: TurnResult) -> Response | None:
        """One model call within the output budget; None after compacting for an overflow."""
        keeper = self.before_model
        if keeper is not None:
            self.messages[:] = keeper(self.messages, self.turn)
        budget = keeper.output_budget(self.messages) if keeper is not None else 0
        request = Request(self.engine.prompt.text, tuple(self.messages), tool_specs(), budget)
        result.requests.append(request)
        self.env.emit(ModelWaiting(len(result.requests)))
        try:
            response = self.engine.model.complete(request, self.on_text, self._thinking)
        except ContextOverflow:
            if keeper is None:
                raise
            self.env.emit(Notice("the server says the context is too long: compacting"))
            self.messages[:] = keeper.overflowed(self.messages, self.turn)
            result.requests.pop()
            return None
        result.request_usage.append(response.usage)
        if response.usage is not None:
            result.usage += response.usage
            result.usage_reported = True
        return response

    def _thinking(self, text: str) -> None:
        """The model's thinking as it streams: an event of its own, never the answer's text
        (each face scrubs it as it scrubs the text)."""
        self.env.emit(ThinkingDelta(text))

    def _not_run(self, call: ToolCall) -> Message:
        text = (
            f"not run: too many calls in one reply (mca runs at most {self.max_calls} per reply);"
            " ask again for this one"
        )
        return self._refusal(call, text)

    def _unreadable(self, call: ToolCall, cut: bool, result: TurnResult) -> Message:
        """A call whose arguments are not a JSON object: answered, shown, never run."""
        text = f"not run: {call.invalid}"
        if cut:
            limit = result.requests[-1].max_output if result.requests else 0
            tokens = f" ({limit} tokens)" if limit else ""
            text += (
                f"; your reply was cut at the output limit{tokens} before they were complete:"
                " make this call again, with less text before it"
            )
        text = self.redact(valid_text(text))
        self.env.emit(ToolCalled(call.name, {}, unreadable=True, id=call.id))
        self.env.emit(ToolReturned(call.name, False, text, call.id))
        result.tools.append(ToolRecord(call.name, {}, False, text))
        return self._refusal(call, text)

    def _refusal(self, call: ToolCall, text: str) -> Message:
        return Message(
            "tool", text, tool_call_id=call.id, tool_name=call.name, is_error=True, turn=self.turn
        )

    def _call_tool(self, call: ToolCall, result: TurnResult, repeated: int = 1) -> Message:
        """Run one call; `repeated`: the times in a row it has now been made (mca/repeats.py)."""
        self.env.emit(ToolCalled(call.name, dict(call.arguments), id=call.id))
        try:
            text, ok = get_tool(call.name).invoke(self.env, self.state, call.arguments), True
        except ToolError as e:
            text, ok = str(e), False
        except OSError as e:  # the file system said no in a way the tool did not foresee
            text, ok = f"{call.name} failed: {e}", False
        text = self.redact(valid_text(text))
        self.env.emit(ToolReturned(call.name, ok, text, call.id))
        result.tools.append(ToolRecord(call.name, dict(call.arguments), ok, text))
        if line := Repeats.said(repeated, f"{call.name} {json.dumps(dict(call.arguments))}"[:120]):
            self.env.emit(Notice(line))
        text += Repeats.told(repeated)
        return Message(
            "tool", text, tool_call_id=call.id, tool_name=call.name, is_error=not ok, turn=self.turn
        )

    def clear(self) -> None:
        """Start a new conversation (files and snapshots are untouched). The last turn's
        file paths go with it: they must not pick skills for the new one."""
        self.messages.clear()
        self.state = TurnState(self.turn)
