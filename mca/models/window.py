"""The context window, asked of the server when nothing else says it.

llama.cpp's server reports `n_ctx` at /props, vLLM `max_model_len` at /v1/models, Ollama the
model's `context_length` at /api/show. MCA_CONTEXT_WINDOW (or a known model name) wins; when no
server says, the conservative default stays. Each probe has a short timeout and any failure is
just "not known here".
"""

from __future__ import annotations

from typing import Any

import httpx

from mca.models.body import ACCEPT_ENCODING, read_body

PROBE_SECONDS = 2.0
PROBE_BYTES = 1024 * 1024  # a probe's answer is a small JSON object; more is not read


def _json(client: httpx.Client, method: str, url: str, **kw: Any) -> Any:
    """A probe's JSON answer, of at most PROBE_BYTES (ValueError when it is more)."""
    import json

    with client.stream(method, url, **kw) as response:
        data = read_body(response, PROBE_BYTES)  # BadEncoding is a ValueError too
    if data is None:
        raise ValueError("too large")
    return json.loads(data)


def _root(base_url: str) -> str:
    return base_url.removesuffix("/").removesuffix("/v1")


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 256 <= value <= 100_000_000:
        return value
    return None


def _llama_cpp(client: httpx.Client, base_url: str, model: str) -> int | None:
    body = _json(client, "GET", f"{_root(base_url)}/props")
    settings = body.get("default_generation_settings") or {}
    return _int(settings.get("n_ctx")) or _int(body.get("n_ctx"))


def _vllm(client: httpx.Client, base_url: str, model: str) -> int | None:
    data = _json(client, "GET", f"{_root(base_url)}/v1/models").get("data") or []
    rows = [d for d in data if isinstance(d, dict)]
    chosen = [d for d in rows if d.get("id") == model] or (rows if len(rows) == 1 else [])
    return _int(chosen[0].get("max_model_len")) if chosen else None


def _ollama(client: httpx.Client, base_url: str, model: str) -> int | None:
    body = _json(client, "POST", f"{_root(base_url)}/api/show", json={"model": model})
    info = body.get("model_info") or {}
    for key, value in info.items():
        if str(key).endswith(".context_length"):
            return _int(value)
    return None


PROBES = (("llama.cpp /props", _llama_cpp), ("/v1/models", _vllm), ("Ollama /api/show", _ollama))


def discover_window(
    base_url: str, model: str, transport: httpx.BaseTransport | None = None
) -> tuple[int, str] | None:
    """(window, where it came from), or None when no server says."""
    timeout = httpx.Timeout(PROBE_SECONDS)
    headers = {"Accept-Encoding": ACCEPT_ENCODING}
    with httpx.Client(
        timeout=timeout, transport=transport, follow_redirects=False, headers=headers
    ) as client:
        for label, probe in PROBES:
            try:
                window = probe(client, base_url, model)
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
