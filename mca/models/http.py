"""Shared HTTP plumbing for the real clients: one httpx client, retries, SSE, error messages."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from mca.config import Settings
from mca.errors import ModelError, ModelHTTPError, StreamError
from mca.sanitize import scrub
from mca.types import Request, Response, TextSink

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
CONTEXT_HINTS = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "prompt is too long",
    "too many tokens",
)
Notice = Callable[[str], None]


def make_client(settings: Settings, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """One client per session: connection reuse and explicit timeouts."""
    timeout = httpx.Timeout(connect=10.0, read=settings.read_timeout, write=30.0, pool=10.0)
    return httpx.Client(timeout=timeout, transport=transport, follow_redirects=False)


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter, honouring Retry-After; at most `attempts` tries."""

    attempts: int = 5
    base: float = 1.0
    cap: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.cap * 4)
            except ValueError:
                pass
        backoff: float = min(self.cap, self.base * 2 ** (attempt - 1))
        return backoff * (0.5 + self.jitter() / 2)


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("type") or err)[:300]
        return str(err)[:300]
    return str(body)[:300]


def http_error(response: httpx.Response, settings: Settings) -> ModelHTTPError:
    """A message a person can act on, for a non-2xx status."""
    status, url = response.status_code, str(response.request.url)
    detail = _error_text(response)
    low = detail.lower()
    if status in (401, 403):
        where = (
            f"the key from {settings.api_key_var}"
            if settings.api_key_var
            else "no key (set MCA_API_KEY or the provider's *_API_KEY)"
        )
        msg = f"HTTP {status}: the API key is missing or wrong; mca sent {where} ({detail})"
    elif status == 404:
        msg = (
            f"HTTP 404: model {settings.model!r} or its endpoint was not found at base URL"
            f" {settings.base_url} ({detail})"
        )
    elif any(h in low for h in CONTEXT_HINTS):
        msg = (
            f"HTTP {status}: the conversation is longer than the model's context window;"
            f" use /compact or /clear ({detail})"
        )
    else:
        msg = f"HTTP {status} from {settings.provider} at {settings.base_url}: {detail}"
    return ModelHTTPError(msg, status=status, url=url)


def send(
    client: httpx.Client,
    build: Callable[[], httpx.Request],
    settings: Settings,
    policy: RetryPolicy,
    notice: Notice,
) -> httpx.Response:
    """Send (streaming), retrying 429/5xx and timeouts. The caller closes the response."""
    for attempt in range(1, policy.attempts + 1):
        last = attempt == policy.attempts
        try:
            response = client.send(build(), stream=True)
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:
            if last:
                raise ModelError(
                    f"cannot reach {settings.base_url} after {attempt} attempts: {e!r}"
                ) from None
            wait = policy.delay(attempt, None)
            notice(f"retry {attempt}/{policy.attempts - 1} in {wait:.1f}s: {type(e).__name__}")
            policy.sleep(wait)
            continue
        if response.status_code < 400:
            return response
        response.read()
        response.close()
        if response.status_code not in RETRY_STATUSES or last:
            raise http_error(response, settings)
        wait = policy.delay(attempt, response.headers.get("retry-after"))
        notice(f"retry {attempt}/{policy.attempts - 1} in {wait:.1f}s: HTTP {response.status_code}")
        policy.sleep(wait)
    raise ModelError("unreachable")  # pragma: no cover


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """(event, data) pairs from server-sent-event lines."""
    event, data = "", list[str]()
    for line in lines:
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "", list[str]()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield event, "\n".join(data)


def parse_json(text: str, what: str) -> Any:
    """json.loads with a StreamError naming what was being decoded."""
    try:
        return json.loads(text)
    except ValueError as e:
        raise StreamError(f"the model sent invalid JSON in {what}: {e}") from None


def read_json(response: httpx.Response) -> Any:
    """A whole non-streamed JSON body."""
    try:
        response.read()
    except httpx.HTTPError as e:
        raise StreamError(f"the response was cut off: {e!r}") from None
    return parse_json(response.text, "the response body")


def iter_sse(response: httpx.Response) -> Iterator[tuple[str, str]]:
    """SSE events of a streaming response; a dropped connection becomes a StreamError."""
    try:
        yield from sse_events(response.iter_lines())
    except httpx.HTTPError as e:
        raise StreamError(f"the response stream was cut off: {e!r}") from None


class HttpModel:
    """What both wire protocols share: one client, retries, stream or not, cleanup.

    A protocol supplies `url`, `headers`, `body`, `assemble` (SSE events -> Response) and
    `parse` (a JSON body -> Response).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        policy: RetryPolicy | None = None,
        notice: Notice = lambda s: None,
    ) -> None:
        self.settings = settings
        self.name = settings.model
        self.client = make_client(settings, transport)
        self.policy = policy or RetryPolicy(base=settings.retry_base)
        self.notice = notice

    def url(self) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: Request, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def assemble(self, events: Iterator[tuple[str, str]], on_text: TextSink | None) -> Response:
        raise NotImplementedError

    def parse(self, body: Any) -> Response:
        raise NotImplementedError

    def complete(self, request: Request, on_text: TextSink | None = None) -> Response:
        """One model call; the response is always closed, even on Ctrl-C."""
        stream = self.settings.stream
        # The last guard on what leaves the machine: no known key in the body, whatever put it
        # in the conversation (keys are plain ASCII, identical inside JSON strings).
        raw = json.dumps(self.body(request, stream), separators=(",", ":"))
        content = scrub(raw, self.settings.secrets).encode()
        headers = {"content-type": "application/json", **self.headers()}

        def build() -> httpx.Request:
            return self.client.build_request("POST", self.url(), content=content, headers=headers)

        response = send(self.client, build, self.settings, self.policy, self.notice)
        try:
            if stream:
                return self.assemble(iter_sse(response), on_text)
            result = self.parse(read_json(response))
        finally:
            response.close()
        if on_text and result.message.content:
            on_text(result.message.content)
        return result

    def close(self) -> None:
        self.client.close()
