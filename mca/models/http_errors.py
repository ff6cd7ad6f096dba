"""What a server's error answer means for a person: a message they can act on (HTTP status,
an HTML page where the API should be, an overflowing context), and a stalled or dropped body as
a StreamError saying what was being read."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import httpx

from mca.errors import ContextOverflow, ModelHTTPError, StreamError, StreamRefused
from mca.models.body import BadEncoding
from mca.models.options import HttpOptions, ModelOptions
from mca.text.sanitize import excerpt

__all__ = [
    "CONTEXT_HINTS",
    "STREAM_REFUSED_HINTS",
    "html_message",
    "http_error",
    "is_context_error",
    "is_html",
    "reading",
]

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

# How servers say "not streamed, with tools": llama.cpp's llama-server before it streamed tool
# calls (HTTP 500 "Cannot use tools with stream").
STREAM_REFUSED_HINTS = ("tools with stream", "streaming tool", "stream with tools")


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
    if is_html(response):
        return ModelHTTPError(html_message(response), status=status, url=url)
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
    elif status in (400, 500, 501) and any(h in detail.lower() for h in STREAM_REFUSED_HINTS):
        msg = f"HTTP {status}: the server cannot stream an answer when tools are offered ({detail})"
        return StreamRefused(msg, status=status, url=url)
    else:
        msg = f"HTTP {status} from {target.provider} at {target.base_url}: {detail}"
    return ModelHTTPError(msg, status=status, url=url)


def is_html(response: httpx.Response) -> bool:
    return "text/html" in response.headers.get("content-type", "").lower()


def html_message(response: httpx.Response) -> str:
    return (
        f"HTTP {response.status_code}: {response.request.url} answered with a web page, not the"
        " model API; check the base URL (MCA_BASE_URL; OpenAI-compatible servers usually end"
        " in /v1)"
    )


@contextlib.contextmanager
def reading(http: HttpOptions, what: str) -> Iterator[None]:
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
