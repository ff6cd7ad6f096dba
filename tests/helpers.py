"""Test doubles injected through the real seams (never patched in)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from mca.engine import Engine
from mca.errors import ModelError
from mca.prompt import SystemPrompt
from mca.tools.base import NoSkills
from mca.types import Message, Model, Request, Response, TextSink, ToolCall, Usage

Reply = Response | BaseException | Callable[[Request], Response]


def engine(model: Model, system: str = "sys") -> Engine:
    """An engine around a test model, with a one-piece system prompt."""
    return Engine(model, SystemPrompt(system))


def say(text: str, usage: Usage | None = None) -> Response:
    """An assistant answer."""
    return Response(Message("assistant", text), usage)


def call(name: str, call_id: str = "c1", **arguments: Any) -> Response:
    """An assistant message with one tool call."""
    return Response(Message("assistant", "", tool_calls=(ToolCall(call_id, name, arguments),)))


class FakeModel:
    """Replays a list of replies; records every request it saw."""

    name = "fake"

    def __init__(self, replies: Iterable[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []

    def complete(self, request: Request, on_text: TextSink | None = None) -> Response:
        self.requests.append(request)
        if not self.replies:
            raise ModelError("fake model: no more replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(request)
        if on_text and reply.message.content:
            on_text(reply.message.content)
        return reply

    def close(self) -> None:
        return None


class SkillDirs(NoSkills):
    """Skill access with directories the file tools may read, and no skills to activate."""

    def __init__(self, dirs: Mapping[str, Path]) -> None:
        self._dirs = dirs

    def dirs(self) -> Mapping[str, Path]:
        return self._dirs
