"""Test doubles injected through the real seams (never patched in)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mca.config.settings import Settings, load_settings
from mca.context.engine import Engine
from mca.context.prompt import SystemPrompt
from mca.errors import ModelError
from mca.models.registry import PROVIDERS
from mca.tools.base import NoSkills
from mca.types import Message, Model, Request, Response, TextSink, ToolCall, Usage
from tests.conftest import REPO

if TYPE_CHECKING:
    from mca.session.session import Session
    from mca.ui.repl import Repl

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

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
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


WIRE_KEY = "sk-test-0123456789abcdef"
WIRE_MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5"}


def settings_for(
    provider: str, tmp_path: Path, stream: bool = True, *, server: str = "", **env: str
) -> Settings:
    """Settings for a real wire with a key (WIRE_KEY): at the provider's own URL with its own key
    variable, or at `server` (a fake on this machine; the OpenAI wire's base adds /v1) with
    MCA_API_KEY, the only key sent to a custom URL. `env` adds or overrides variables."""
    values = {
        "MCA_PROVIDER": provider,
        "MCA_MODEL": WIRE_MODELS[provider],
        "MCA_HOME": str(tmp_path / "home"),
    }
    if server:
        values["MCA_BASE_URL"] = f"{server}/v1" if provider == "openai" else server
        values["MCA_API_KEY"] = WIRE_KEY
    else:
        values[PROVIDERS[provider].key_vars[0]] = WIRE_KEY
    return load_settings({**values, **env}, workspace=tmp_path).with_(stream=stream)


def lab_session(ws: Path, model: Model, **env: str) -> Session:
    """A headless session on `ws` with the lab's packs as a skills directory."""
    from mca.assembly.assemble import open_session
    from mca.session.faces import HeadlessUI

    settings = load_settings(
        {"MCA_HOME": str(ws.parent / "home"), "HOME": str(ws.parent), **env}, workspace=ws
    ).with_(skills_dirs=(REPO / "skills",))
    return open_session(settings, HeadlessUI(), model=model)


def piped_repl(settings: Settings, keys: str, **kw: Any) -> tuple[str, Repl]:
    """The REPL on `settings` fed `keys` through prompt_toolkit's pipe input, as a person types
    them; what it printed, and the REPL (`kw`: the Repl's own, an `opener` too). It has run."""
    import io

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.history import InMemoryHistory
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from mca.cli.start import repl_for

    out = io.StringIO()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(keys)
        kw.setdefault("history", InMemoryHistory())
        repl = repl_for(settings, input=pipe, output=DummyOutput(), out=out, **kw)
        repl.run()
    return out.getvalue(), repl
