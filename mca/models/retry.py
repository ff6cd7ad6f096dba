"""Sending with retries: what is retried is what can succeed (408/409/429/5xx, timeouts and
dropped connections, but not a refused connection to this machine, where no server is
listening, nor other 4xx answers), every wait is announced, and no try passes the request's
overall deadline (MCA_REQUEST_TIMEOUT)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from mca.errors import ContextOverflow, ModelError, StreamError, StreamRefused
from mca.models.body import read_body
from mca.models.http_errors import http_error, reading
from mca.models.options import RETRY_BASE, ModelOptions, Notice

__all__ = ["LOCAL_HOSTS", "RETRY_STATUSES", "Deadline", "RetryPolicy", "send"]

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
ERROR_BODY_BYTES = 64 * 1024  # of an error's body: enough for its message, never all of it


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter, honouring Retry-After; at most `attempts` tries."""

    attempts: int = 5
    base: float = RETRY_BASE
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
        with reading(target.http, "the error's body"):
            body = read_body(response, ERROR_BODY_BYTES) or b""
        response.close()
        error = http_error(response, target, body)
        final = isinstance(error, (ContextOverflow, StreamRefused))  # the same again: the same no
        retry = response.status_code in RETRY_STATUSES and not final
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
