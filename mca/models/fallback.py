"""A custom base URL spoken to in the Responses API that has none: a proxy or a local server
that serves only Chat Completions answers 404 (405, 501) on /responses. The request goes again
as a chat completion, that is said once, and every later request of the session to that base
URL is a chat completion (as a server that cannot stream with tools gets every later request
unstreamed: mca/models/http.py). The thinking of a Responses reply is not sent back on chat."""

from __future__ import annotations

from typing import Any

from mca.errors import ModelHTTPError
from mca.models.known import CHAT, RESPONSES
from mca.models.openai import OpenAIModel
from mca.models.options import ModelOptions, Notice
from mca.models.responses import ResponsesModel
from mca.types import Model, Request, Response, TextSink

__all__ = ["NO_RESPONSES_API", "ChatFallback", "carried", "no_responses_api"]

NO_RESPONSES_API = (404, 405, 501)  # how servers without the route answer it


def no_responses_api(error: ModelHTTPError) -> bool:
    """Does the error say the server has no Responses API (rather than no such model)?"""
    return error.status in NO_RESPONSES_API and error.url.rstrip("/").endswith("/responses")


class ChatFallback:
    """The Responses API until the base URL answers that it has none; Chat Completions after."""

    def __init__(self, options: ModelOptions, notice: Notice = lambda s: None, **kw: Any) -> None:
        self.options, self.notice, self.kw = options, notice, kw
        self.name = options.model
        self.inner: Model = ResponsesModel(options, notice=notice, **kw)
        self.on_chat = False

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
        """One model call; a 404 on /responses moves this base URL to Chat Completions."""
        try:
            return self.inner.complete(request, on_text, on_thinking)
        except ModelHTTPError as e:
            if self.on_chat or not no_responses_api(e):
                raise
            status = e.status
        self.inner.close()
        self.inner = OpenAIModel(self.options.with_(wire=CHAT), notice=self.notice, **self.kw)
        self.on_chat = True
        self.notice(
            f"{self.options.base_url} has no Responses API (HTTP {status} on /responses): sent as a"
            " chat completion, and so for the rest of the session (MCA_WIRE=chat says it at"
            " the start)"
        )
        return self.inner.complete(request, on_text, on_thinking)

    @property
    def wire(self) -> str:
        """The wire it speaks now (after the fallback: Chat Completions)."""
        return CHAT if self.on_chat else RESPONSES

    def close(self) -> None:
        self.inner.close()


def carried(old: Model, options: ModelOptions) -> ModelOptions:
    """The options of the next model (/model) with what the last one learnt of their common
    base URL: one that has no Responses API gets Chat Completions from the start."""
    if not isinstance(old, ChatFallback) or not old.on_chat or options.wire != RESPONSES:
        return options
    return options.with_(wire=CHAT) if old.options.base_url == options.base_url else options
