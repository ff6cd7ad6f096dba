"""Shared HTTP plumbing for the real clients: one httpx client, one SSE loop, bodies capped.

Every request has an overall deadline (MCA_REQUEST_TIMEOUT) on top of httpx's per-read timeout,
so a server that sends keep-alives forever, or a run of retries, cannot hold a turn for longer
(retry.py sends; http_errors.py says what an error answer means).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx

from mca.errors import (
    ContextOverflow,
    EmptyStream,
    ModelError,
    ModelHTTPError,
    StreamError,
    StreamRefused,
)
from mca.models import shape
from mca.models.body import ACCEPT_ENCODING, body_text, read_body
from mca.models.http_errors import html_message, is_html, reading
from mca.models.options import HttpOptions, ModelOptions, Notice
from mca.models.retry import Deadline, RetryPolicy, send
from mca.models.sse import StreamAssembler, capped_lines, over_cap, read_stream, sse_events
from mca.text.sanitize import scrub
from mca.types import Request, Response, TextSink, Usage

# Usage a server may report for one request: no more prompt tokens than the request had bytes
# (a token is at least one byte) plus what a chat template adds, no more answer tokens than
# were allowed (or, with no limit sent, than this).
USAGE_SLACK = 16_384
MAX_ANSWER_TOKENS = 1_000_000


def make_client(http: HttpOptions, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """One client per session: connection reuse and explicit timeouts."""
    timeout = httpx.Timeout(connect=10.0, read=http.read_timeout, write=30.0, pool=10.0)
    return httpx.Client(
        timeout=timeout,
        transport=transport,
        follow_redirects=False,
        headers={"Accept-Encoding": ACCEPT_ENCODING},  # only what mca inflates itself
    )


def read_json(response: httpx.Response, http: HttpOptions) -> Any:
    """A whole non-streamed JSON body, of at most MCA_MAX_RESPONSE_BYTES."""
    with reading(http, "the response"):
        body = read_body(response, http.max_response_bytes)
    if body is None:
        raise over_cap("the answer", http.max_response_bytes)
    encoding = response.encoding or "utf-8"
    return shape.loads(body.decode(encoding, "replace"), "the response body")


def iter_sse(
    response: httpx.Response, target: ModelOptions, deadline: Deadline
) -> Iterator[tuple[str, str]]:
    """SSE events of a streaming response; a dropped or stalled stream becomes a StreamError,
    a line longer than MCA_MAX_RESPONSE_BYTES too."""

    def lines() -> Iterator[str]:
        for line in capped_lines(body_text(response), target.http.max_response_bytes):
            deadline.check(target.base_url)  # keep-alives alone never extend a request forever
            yield line

    with reading(target.http, "the response stream"):
        yield from sse_events(lines())


def sane_usage(usage: Usage | None, request: Request, sent: int, notice: Notice) -> Usage | None:
    """The usage a server reported, or None (with a notice) when it cannot be true of this
    request: a bill of 10^12 tokens for a few kilobytes is the server's error, not a cost."""
    if usage is None:
        return None
    prompt_max = sent + USAGE_SLACK
    answer_max = (request.max_output or MAX_ANSWER_TOKENS) + USAGE_SLACK
    if (
        usage.prompt_tokens <= prompt_max
        and usage.completion_tokens <= answer_max
        and usage.cached_tokens + usage.cache_write_tokens <= usage.prompt_tokens
        and usage.reasoning_tokens <= usage.completion_tokens
    ):
        return usage
    notice(
        f"the server reported a usage of {usage.prompt_tokens:,} prompt and"
        f" {usage.completion_tokens:,} answer tokens for a request of {sent:,} bytes: that"
        " cannot be, so it is ignored (the estimate is used)"
    )
    return None


def _is_event_stream(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "").lower()
    return "event-stream" in kind or not kind


class HttpModel:
    """What the wire protocols share: one client, retries, stream or not, cleanup.

    A protocol supplies `url`, `headers`, `body`, `assembler` (a StreamAssembler for one
    streamed reply, given the sink for the model's thinking) and `parse` (a JSON body ->
    Response); `adapt` may change what it sends when a server's 400 asks for something else
    (the request is then sent once more, saying so).

    A server that cannot stream while tools are offered (llama-cpp-python's answers an empty
    stream, an older llama-server a 500) gets the request again without streaming, is said to
    once, and gets every later request with tools unstreamed (for the session: a /model
    switch builds a new client).
    """

    def __init__(
        self,
        options: ModelOptions,
        *,
        transport: httpx.BaseTransport | None = None,
        policy: RetryPolicy | None = None,
        notice: Notice = lambda s: None,
    ) -> None:
        self.options = options
        self.name = options.model
        self.client = make_client(options.http, transport)
        self.policy = policy or RetryPolicy(base=options.http.retry_base)
        self.notice = notice
        self.tools_unstreamed = False  # this server cannot stream while tools are offered

    def url(self) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def assembler(self, on_thinking: TextSink | None = None) -> StreamAssembler:
        raise NotImplementedError

    def parse(self, body: Any) -> Response:
        raise NotImplementedError

    def adapt(self, error: ModelHTTPError) -> str:
        """After a 400: change what is sent as the server asks and say so; '' to give up."""
        return ""

    def _content(self, request: Request, stream: bool) -> bytes:
        # The last guard on what leaves the machine: no known key in the body, whatever put it
        # in the conversation (keys are plain ASCII, identical inside JSON strings).
        raw = json.dumps(self.body(request, stream), separators=(",", ":"))
        return scrub(raw, self.options.http.secrets).encode()

    def _send(
        self, request: Request, stream: bool, deadline: Deadline
    ) -> tuple[bytes, httpx.Response]:
        """The body sent and the server's answer: sent once more, changed, when a 400 asks for
        something the wire can give (`adapt`)."""
        headers = {"content-type": "application/json", **self.headers()}
        for last in (False, True):
            content = self._content(request, stream)
            build = functools.partial(
                self.client.build_request, "POST", self.url(), content=content, headers=headers
            )
            try:
                sent = send(self.client, build, self.options, self.policy, self.notice, deadline)
                return content, sent
            except ModelHTTPError as e:
                final = isinstance(e, (ContextOverflow, StreamRefused))
                said = "" if last or final else self.adapt(e)
                if not said:
                    raise
                self.notice(said)
        raise ModelError("unreachable")  # pragma: no cover

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
        """One model call; the response is always closed, even on Ctrl-C."""
        stream = self.options.http.stream and not (request.tools and self.tools_unstreamed)
        try:
            return self._complete(request, stream, on_text, on_thinking)
        except (EmptyStream, StreamRefused):
            if not (stream and request.tools):
                raise  # nothing to fall back on: say what happened
        self.tools_unstreamed = True  # nothing was shown of that answer: ask again, whole
        self.notice(
            "the server cannot stream an answer while tools are offered: sent again without"
            " streaming (and so for the rest of the session; --no-stream says it at the start)"
        )
        return self._complete(request, False, on_text, on_thinking)

    def _complete(
        self,
        request: Request,
        stream: bool,
        on_text: TextSink | None,
        on_thinking: TextSink | None,
    ) -> Response:
        http = self.options.http
        deadline = Deadline(http.request_timeout, self.policy.clock)
        content, response = self._send(request, stream, deadline)
        try:
            if is_html(response):
                raise StreamError(html_message(response))
            if stream and _is_event_stream(response):
                events = iter_sse(response, self.options, deadline)
                cap = http.max_response_bytes
                result = read_stream(events, self.assembler(on_thinking), on_text, cap)
            else:  # asked or not: one body
                result = self.parse(read_json(response, http))
                thought = "\n\n".join(r.text for r in result.message.reasoning if r.text)
                if on_thinking and thought:
                    on_thinking(thought)
                if on_text and result.message.content:
                    on_text(result.message.content)
        finally:
            response.close()
        usage = sane_usage(result.usage, request, len(content), self.notice)
        return result if usage is result.usage else replace(result, usage=usage)

    def close(self) -> None:
        self.client.close()
