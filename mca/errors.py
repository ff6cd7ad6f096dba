"""The McaError tree. Library code raises these; only the command's edge (cli.py, and the
one-shot run that must tell an error beside its JSON) tells them, with `error_line`.

McaError                      anything mca reports to a person (exit code 1)
├── ConfigError               bad settings, unknown model or provider (exit code 2)
├── ModelError                the model client failed; the turn is rolled back
│   ├── ModelHTTPError        an HTTP status from the provider (status, url)
│   │   ├── ContextOverflow   the server says the request is longer than its context
│   │   └── StreamRefused     the server will not stream this request (tools offered)
│   ├── StreamError           a malformed or truncated response
│   │   └── EmptyStream       the stream ended before anything was in it
│   └── ScriptExhausted       MCA_MOCK_SCRIPT ran out of responses
├── ToolError                 a tool refused or failed; goes back to the model as a result
│   └── PathRefused           a path resolved outside the allowed roots
├── PromptTooLong             the prompt alone cannot fit the context window: nothing sent
├── SkillsRefused             --strict-skills and an error diagnostic
└── UndoError                 nothing to undo, or a snapshot is unreadable
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ConfigError",
    "ContextOverflow",
    "EmptyStream",
    "McaError",
    "ModelError",
    "ModelHTTPError",
    "PathRefused",
    "PromptTooLong",
    "ScriptExhausted",
    "SkillsRefused",
    "StreamError",
    "StreamRefused",
    "ToolError",
    "UndoError",
    "error_line",
]


class McaError(Exception):
    """Base class: a message a person can act on; `kept` says what the conversation kept of
    the turn the error ended (its completed steps), after the message."""

    exit_code = 1
    kept = ""

    def __str__(self) -> str:
        said = super().__str__()
        return f"{said}; {self.kept}" if self.kept else said


class ConfigError(McaError):
    """Settings that cannot work: named with their source; mca exits with status 2."""

    exit_code = 2


class ModelError(McaError):
    """The model client failed; the conversation is left as it was before the turn."""


class ModelHTTPError(ModelError):
    """A non-success HTTP status from the provider."""

    def __init__(self, message: str, *, status: int, url: str) -> None:
        super().__init__(message)
        self.status = status
        self.url = url


class ContextOverflow(ModelHTTPError):
    """The server refused the request as longer than its context window."""

    def __init__(self, message: str, *, status: int = 400, url: str = "") -> None:
        super().__init__(message, status=status, url=url)


class StreamRefused(ModelHTTPError):
    """The server refused to stream the request (llama.cpp's server: tools with stream); not
    worth retrying as it is, it may be sent again without streaming."""


class StreamError(ModelError):
    """A response that could not be decoded (bad JSON, cut stream)."""


class EmptyStream(StreamError):
    """A stream that ended with nothing in it (llama-cpp-python's server, asked to stream
    while tools are offered, answers 200 and an empty stream)."""


class ScriptExhausted(ModelError):
    """The scripted mock model has no more responses."""


class PromptTooLong(McaError):
    """The system prompt, the tools and the person's message cannot fit the model's context
    window, whatever compaction does: said before anything is sent."""


class ToolError(McaError):
    """A tool could not do what it was asked; the message goes back to the model."""


class PathRefused(ToolError):
    """A path resolved outside the workspace (or the skill directory)."""


class SkillsRefused(McaError):
    """--strict-skills found an error diagnostic."""


class UndoError(McaError):
    """Nothing to undo, or the snapshot store is damaged."""


def error_line(error: McaError, secrets: Iterable[str] = ()) -> str:
    """The line a person sees on stderr for an error: keys scrubbed (a server may quote the
    key it was sent), control characters made visible."""
    from mca.text.sanitize import for_terminal  # not on `mca --version`'s path, which imports this

    return f"mca: error: {for_terminal(str(error), secrets)}\n"
