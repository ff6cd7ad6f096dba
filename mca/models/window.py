"""The context window, asked of the server when nothing else says it.

llama.cpp's server reports `n_ctx` at /props, vLLM `max_model_len` at /v1/models, Ollama the
model's `context_length` at /api/show. MCA_CONTEXT_WINDOW (or a known model name) wins; when no
server says, the conservative default stays. Asking is bounded as a whole (PROBES_SECONDS: a
server that never answers, or answers a byte at a time, holds the first turn no longer) and
any failure is just "not known here".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from mca.models.body import ACCEPT_ENCODING, body_chunks

PROBE_SECONDS = 2.0  # one probe, at most
PROBES_SECONDS = 3.0  # every probe together, at most (a read under way may add PROBE_SECONDS)
PROBE_BYTES = 1024 * 1024  # a probe's answer is a small JSON object; more is not read


def _json(client: httpx.Client, method: str, url: str, deadline: float, **kw: Any) -> Any:
    """A probe's JSON answer, of at most PROBE_BYTES, read before `deadline` (ValueError when
    it is more, or later)."""
    import json

    left = deadline - time.monotonic()
    if left <= 0:
        raise ValueError("no time left")
    pieces = []
    with client.stream(method, url, timeout=min(left, PROBE_SECONDS), **kw) as response:
        for piece in body_chunks(response, PROBE_BYTES):  # TooLarge, BadEncoding: ValueErrors
            pieces.append(piece)
            if time.monotonic() > deadline:
                raise ValueError("too slow")
    return json.loads(b"".join(pieces))


def _root(base_url: str) -> str:
    return base_url.removesuffix("/").removesuffix("/v1")


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 256 <= value <= 100_000_000:
        return value
    return None


def _llama_cpp(client: httpx.Client, base_url: str, model: str, deadline: float) -> int | None:
    body = _json(client, "GET", f"{_root(base_url)}/props", deadline)
    settings = body.get("default_generation_settings") or {}
    return _int(settings.get("n_ctx")) or _int(body.get("n_ctx"))


def _vllm(client: httpx.Client, base_url: str, model: str, deadline: float) -> int | None:
    data = _json(client, "GET", f"{_root(base_url)}/v1/models", deadline).get("data") or []
    rows = [d for d in data if isinstance(d, dict)]
    chosen = [d for d in rows if d.get("id") == model] or (rows if len(rows) == 1 else [])
    return _int(chosen[0].get("max_model_len")) if chosen else None


def _ollama(client: httpx.Client, base_url: str, model: str, deadline: float) -> int | None:
    body = _json(client, "POST", f"{_root(base_url)}/api/show", deadline, json={"model": model})
    info = body.get("model_info") or {}
    for key, value in info.items():
        if str(key).endswith(".context_length"):
            return _int(value)
    return None


Probe = Callable[[httpx.Client, str, str, float], int | None]
PROBES: tuple[tuple[str, Probe], ...] = (
    ("llama.cpp /props", _llama_cpp),
    ("/v1/models", _vllm),
    ("Ollama /api/show", _ollama),
)


def discover_window(
    base_url: str,
    model: str,
    transport: httpx.BaseTransport | None = None,
    seconds: float = PROBES_SECONDS,
) -> tuple[int, str] | None:
    """(window, where it came from), or None when no server says within `seconds`."""
    deadline = time.monotonic() + seconds
    timeout = httpx.Timeout(PROBE_SECONDS)
    headers = {"Accept-Encoding": ACCEPT_ENCODING}
    with httpx.Client(
        timeout=timeout, transport=transport, follow_redirects=False, headers=headers
    ) as client:
        for label, probe in PROBES:
            try:
                window = probe(client, base_url, model, deadline)
            except (
                httpx.HTTPError,
                ValueError,
                AttributeError,
                TypeError,
                IndexError,
                RecursionError,
            ):
                continue
            if window:
                return window, label
    return None
