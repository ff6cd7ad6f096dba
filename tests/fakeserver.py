"""A small scripted model server on 127.0.0.1 (asyncio, in a background thread).

It records every request (headers and body, as received) and answers from a handler, so a test
can check exactly what mca sent and make the server misbehave: wrong shapes, cut streams, slow
or no answers. Helpers build well-formed OpenAI and Anthropic answers, streamed or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Received:
    """One request as it arrived."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body or b"null")

    @property
    def raw(self) -> bytes:
        head = "".join(f"{k}: {v}\n" for k, v in self.headers.items())
        return f"{self.method} {self.path}\n{head}\n".encode() + self.body


@dataclass
class Reply:
    """What to send back: a status, headers, and a body in chunks (each after a delay)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Sequence[bytes] = ()
    delays: Sequence[float] = ()
    hang: bool = False  # never answer (until the client gives up)
    close_early: bool = False  # drop the connection after the chunks, without finishing


Handler = Callable[[Received], Reply]


def _stream(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def openai_reply(
    request: Received, content: str = "", calls: Sequence[tuple[str, dict[str, Any]]] = ()
) -> Reply:
    """A well-formed chat-completions answer (streamed when the request asked for it)."""
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]
    finish = "tool_calls" if calls else "stop"
    if not request.json.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        body = {
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        }
        return Reply(
            headers={"content-type": "application/json"}, chunks=[json.dumps(body).encode()]
        )
    chunks = []
    if content:
        chunks.append(_stream({"choices": [{"index": 0, "delta": {"content": content}}]}))
    for i, tc in enumerate(tool_calls):
        chunks.append(
            _stream({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, **tc}]}}]})
        )
    chunks.append(_stream({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    chunks.append(b"data: [DONE]\n\n")
    return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


def sse(events: Sequence[Any]) -> Reply:
    """A raw SSE reply from JSON-able events (or raw bytes taken as they are)."""
    chunks = [e if isinstance(e, bytes) else _stream(e) for e in events]
    return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


class FakeServer:
    """The server; use `serve(handler)` to run one for the length of a `with` block."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.received: list[Received] = []
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._stop = asyncio.Event()

        async def main() -> None:
            server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop.wait()
            server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.wait_closed()

        try:
            self.loop.run_until_complete(main())
        finally:
            self.loop.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (h := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                req = Received(method, path, headers, body)
                self.received.append(req)
                if not await self._answer(self.handler(req), writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        if reply.hang:
            await asyncio.sleep(3600)
            return False
        head = [f"HTTP/1.1 {reply.status} X", "transfer-encoding: chunked"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        delays = list(reply.delays) + [0.0] * len(reply.chunks)
        for chunk, delay in zip(reply.chunks, delays, strict=False):
            if delay:
                await asyncio.sleep(delay)
            if chunk:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
        if reply.close_early:
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


@contextmanager
def serve(handler: Handler) -> Iterator[FakeServer]:
    """A running server for the block."""
    server = FakeServer(handler)
    server.start()
    try:
        yield server
    finally:
        server.stop()
