"""Shared HTTP plumbing for the real clients: one httpx client, retries, SSE, error messages.

Every request has an overall deadline (MCA_REQUEST_TIMEOUT) on top of httpx's per-read timeout,
so a server that sends keep-alives forever, or a run of retries, cannot hold a turn for longer.
Every wait before a retry is announced. What is retried is what can succeed: 408/409/429/5xx,
timeouts and dropped connections, but not a refused connection to this machine (no server is
listening) nor other 4xx answers.
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from mca.errors import ContextOverflow, ModelError, ModelHTTPError, StreamError
from mca.models import shape
from mca.models.body import ACCEPT_ENCODING, BadEncoding, body_text, read_body
from mca.models.options import HttpOptions, ModelOptions, Notice
from mca.models.sse import StreamAssembler, capped_lines, over_cap, read_stream, sse_events
from mca.sanitize import excerpt, scrub
from mca.types import Request, Response, TextSink, Usage

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# How servers say "the context overflowed": OpenAI, vLLM, llama.cpp (llama-server and
# llama-cpp-python), Ollama, Anthropic.
CONTEXT_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "context length",
    "context size",
    "exceed context",
    "exceeds the available context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
ERROR_BODY_BYTES = 64 * 1024  # of an error's body: enough for its message, never all of it
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


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter, honouring Retry-After; at most `attempts` tries."""

    attempts: int = 5
    base: float = 1.0
    cap: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = field(default=random.random)
    clock: Callable[[], float] = time.monotonic

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                seconds = float(retry_after)
            except ValueError:
                seconds = -1.0
            if 0 <= seconds < float("inf"):
                return min(seconds, self.cap * 4)
        backoff: float = min(self.cap, self.base * 2 ** (attempt - 1))
        return backoff * (0.5 + self.jitter() / 2)


def _error_text(raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return excerpt(raw.decode("utf-8", "replace"))
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return excerpt(err.get("message") or err.get("type") or err)
        return excerpt(err)
    return excerpt(body)


def is_context_error(status: int, detail: str) -> bool:
    """Does an error say the conversation is longer than the model's context window?"""
    return status in (400, 413, 422, 500, 503) and any(h in detail.lower() for h in CONTEXT_HINTS)


def http_error(
    response: httpx.Response, target: ModelOptions, body: bytes | None = None
) -> ModelHTTPError:
    """A message a person can act on, for a non-2xx status (`body`: what was read of it)."""
    status, url = response.status_code, str(response.request.url)
    if 300 <= status < 400:
        where = response.headers.get("location", "somewhere else")
        msg = (
            f"HTTP {status}: {url} redirects to {where}; mca does not follow redirects, so"
            " check the base URL (MCA_BASE_URL)"
        )
        return ModelHTTPError(msg, status=status, url=url)
    if _is_html(response):
        return ModelHTTPError(_html_message(response), status=status, url=url)
    detail = _error_text(response.content if body is None else body)
    if status in (401, 403):
        where = (
            f"the key from {target.api_key_var}"
            if target.api_key_var
            else "no key (set MCA_API_KEY, or the provider's *_API_KEY for its own URL)"
        )
        msg = f"HTTP {status}: the API key is missing or wrong; mca sent {where} ({detail})"
    elif status == 404:
        msg = (
            f"HTTP 404: model {target.model!r} or its endpoint was not found at base URL"
            f" {target.base_url} ({detail})"
        )
    elif is_context_error(status, detail):
        msg = (
            f"HTTP {status}: the conversation is longer than the model's context window;"
            f" use /compact or /clear ({detail})"
        )
        return ContextOverflow(msg, status=status, url=url)
    else:
        msg = f"HTTP {status} from {target.provider} at {target.base_url}: {detail}"
    return ModelHTTPError(msg, status=status, url=url)


def _is_html(response: httpx.Response) -> bool:
    return "text/html" in response.headers.get("content-type", "").lower()


def _html_message(response: httpx.Response) -> str:
    return (
        f"HTTP {response.status_code}: {response.request.url} answered with a web page, not the"
        " model API; check the base URL (MCA_BASE_URL; OpenAI-compatible servers usually end"
        " in /v1)"
    )


def _is_local(request: httpx.Request) -> bool:
    return request.url.host in LOCAL_HOSTS


def _network_problem(e: httpx.HTTPError, target: ModelOptions) -> str:
    url = target.base_url
    if isinstance(e, httpx.ConnectTimeout):
        return f"cannot reach {url}: no connection within 10 s"
    if isinstance(e, httpx.TimeoutException):
        return f"no answer from {url} within {target.http.read_timeout:g} s"
    if isinstance(e, httpx.ConnectError):
        return f"cannot reach {url} ({e})"
    return f"the connection to {url} failed ({type(e).__name__}: {e})"


class Deadline:
    """The overall time a request may take, retries and streaming included."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self.clock = seconds, clock
        self.end = clock() + seconds

    def left(self) -> float:
        return self.end - self.clock()

    def check(self, base_url: str) -> None:
        if self.left() <= 0:
            raise StreamError(
                f"no complete answer from {base_url} within {self.seconds:g} s"
                " (MCA_REQUEST_TIMEOUT)"
            )


def send(
    client: httpx.Client,
    build: Callable[[], httpx.Request],
    target: ModelOptions,
    policy: RetryPolicy,
    notice: Notice,
    deadline: Deadline | None = None,
) -> httpx.Response:
    """Send (streaming), retrying what can succeed within the deadline. The caller closes it."""
    deadline = deadline or Deadline(target.http.request_timeout, policy.clock)
    for attempt in range(1, policy.attempts + 1):
        request = build()
        try:
            response = client.send(request, stream=True)
        except httpx.HTTPError as e:
            problem = _network_problem(e, target)
            refused = isinstance(e, httpx.ConnectError) and _is_local(request)
            if refused or attempt == policy.attempts:
                more = f" after {attempt} attempts" if attempt > 1 else ""
                hint = "; is the server running?" if refused else ""
                raise ModelError(f"{problem}{more}{hint}") from None
            _wait(policy, deadline, attempt, None, problem, notice)
            continue
        if response.status_code < 300:
            return response
        with _reading(target.http, "the error's body"):
            body = read_body(response, ERROR_BODY_BYTES) or b""
        response.close()
        error = http_error(response, target, body)
        retry = response.status_code in RETRY_STATUSES and not isinstance(error, ContextOverflow)
        if not retry or attempt == policy.attempts:
            raise error
        retry_after = response.headers.get("retry-after")
        _wait(policy, deadline, attempt, retry_after, f"HTTP {response.status_code}", notice)
    raise ModelError("unreachable")  # pragma: no cover


def _wait(
    policy: RetryPolicy,
    deadline: Deadline,
    attempt: int,
    retry_after: str | None,
    why: str,
    notice: Notice,
) -> None:
    wait = policy.delay(attempt, retry_after)
    if wait >= deadline.left():
        raise ModelError(
            f"{why}; giving up: another try would pass the {deadline.seconds:g} s limit"
            " (MCA_REQUEST_TIMEOUT)"
        )
    notice(f"{why}, retrying in {wait:.1f} s ({attempt}/{policy.attempts - 1})")
    policy.sleep(wait)


@contextlib.contextmanager
def _reading(http: HttpOptions, what: str) -> Iterator[None]:
    """A stalled or dropped body becomes a StreamError saying what was being read."""
    try:
        yield
    except httpx.TimeoutException:
        raise StreamError(
            f"the answer stopped: nothing more within {http.read_timeout:g} s"
        ) from None
    except httpx.HTTPError as e:
        raise StreamError(f"{what} was cut off: {e!r}") from None
    except BadEncoding as e:
        raise StreamError(f"{what}: {e}") from None


def read_json(response: httpx.Response, http: HttpOptions) -> Any:
    """A whole non-streamed JSON body, of at most MCA_MAX_RESPONSE_BYTES."""
    with _reading(http, "the response"):
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

    with _reading(target.http, "the response stream"):
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
                said = "" if last or isinstance(e, ContextOverflow) else self.adapt(e)
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
        http = self.options.http
        stream = http.stream
        deadline = Deadline(http.request_timeout, self.policy.clock)
        content, response = self._send(request, stream, deadline)
        try:
            if _is_html(response):
                raise StreamError(_html_message(response))
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
