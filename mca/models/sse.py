"""A streamed answer, read as untrusted input: lines of a bounded length, server-sent events,
and an assembler per wire protocol that may hold at most so much of the reply.

A server decides how long its lines are and how much it sends: without a bound, one line with
no end, or a reply of 400 MB, takes all the memory there is. Every line and every assembled
reply is held to the session's MCA_MAX_RESPONSE_BYTES, and going over ends the turn with an
error that says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from mca.errors import EmptyStream, StreamError
from mca.models.options import MAX_RESPONSE_BYTES
from mca.types import Response, TextSink

DEFAULT_CAP = MAX_RESPONSE_BYTES  # what the settings' MCA_MAX_RESPONSE_BYTES defaults to
_LINE_END = re.compile(r"\r\n|\r|\n")


def size_text(n: int) -> str:
    """A byte count as a person reads it (1 MiB, 512 KiB, 300 bytes)."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def over_cap(what: str, cap: int) -> StreamError:
    """The error for a server that sent more than mca takes."""
    return StreamError(
        f"{what} is larger than {size_text(cap)}, the most mca takes from a server"
        " (MCA_MAX_RESPONSE_BYTES); it was not read further"
    )


def capped_lines(chunks: Iterator[str], cap: int = DEFAULT_CAP) -> Iterator[str]:
    """Lines of decoded text (ended by \\r\\n, \\r or \\n), none longer than `cap` characters.

    Only each new chunk is searched for line ends, so a long line costs its length, once."""
    pending: list[str] = []
    size = 0
    after_cr = False  # the last chunk ended with \r: a \n that starts this one belongs to it
    for chunk in chunks:
        if after_cr and chunk.startswith("\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith("\r")
        parts = _LINE_END.split(chunk)
        size += len(parts[0])
        if size > cap:
            raise over_cap("a line of the response stream", cap)
        pending.append(parts[0])
        if len(parts) == 1:
            continue
        yield "".join(pending)
        yield from parts[1:-1]
        pending, size = [parts[-1]], len(parts[-1])
    if "".join(pending):
        yield "".join(pending)


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


class StreamAssembler(Protocol):
    """What a wire protocol supplies to read its stream: one SSE data field at a time."""

    def feed_data(self, data: str, on_text: TextSink | None) -> bool:
        """Take one event's data; True when the stream is over."""
        ...

    def size(self) -> int:
        """Characters of the reply held so far (text and tool-call arguments)."""
        ...

    def response(self, on_text: TextSink | None = None) -> Response:
        """The reply read so far (a StreamError when the stream was cut off)."""
        ...


def read_stream(
    events: Iterator[tuple[str, str]],
    acc: StreamAssembler,
    on_text: TextSink | None,
    cap: int = DEFAULT_CAP,
) -> Response:
    """Feed SSE events into an assembler until it says the stream is over; its Response."""
    seen = False
    for _, data in events:
        seen = True
        if acc.feed_data(data, on_text):
            break
        if acc.size() > cap:
            raise over_cap("the streamed answer", cap)
    if not seen:
        raise EmptyStream("the server ended the stream without sending anything")
    return acc.response(on_text)
