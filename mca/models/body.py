"""A server's response body, inflated here in bounded steps so a cap holds to the byte.

httpx inflates a gzip body a network chunk at a time, and one 64 KiB chunk of a gzip bomb is
64 MiB of output before any cap can look at it. mca asks only for the codings it inflates
itself (`ACCEPT_ENCODING`), reads the raw body, and inflates at most `STEP` bytes at a time.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import Iterator

import httpx

ACCEPT_ENCODING = "gzip, deflate"
STEP = 64 * 1024


class TooLarge(ValueError):
    """The body went over its cap; the rest was not read."""


class BadEncoding(ValueError):
    """A Content-Encoding mca did not ask for, or a body that does not inflate."""


def _inflater(coding: str) -> zlib._Decompress | None:
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib or gzip header
    raise BadEncoding(f"the server sent a body in {coding!r}, which mca did not ask for")


def _inflate(inflater: zlib._Decompress, raw: bytes) -> Iterator[bytes]:
    data = raw
    while True:
        try:
            out = inflater.decompress(data, STEP)
        except zlib.error as e:
            raise BadEncoding(f"the server's compressed body is damaged ({e})") from None
        if out:
            yield out
        data = inflater.unconsumed_tail
        if not data and len(out) < STEP:
            return


def body_chunks(response: httpx.Response, cap: int | None) -> Iterator[bytes]:
    """The body after its Content-Encoding, in pieces of at most STEP bytes when inflated;
    TooLarge as soon as more than `cap` bytes came out (None: no cap here)."""
    if response.is_stream_consumed:  # read whole already (an in-memory response): decoded
        raws: Iterator[bytes] = iter([response.content])
        inflater = None
    else:
        raws = response.iter_raw()
        inflater = _inflater(response.headers.get("content-encoding", "").strip().lower())
    total = 0
    for raw in raws:
        for piece in [raw] if inflater is None else _inflate(inflater, raw):
            total += len(piece)
            if cap is not None and total > cap:
                raise TooLarge(f"over {cap} bytes")
            yield piece
    if inflater is not None and (rest := inflater.flush()):
        if cap is not None and total + len(rest) > cap:
            raise TooLarge(f"over {cap} bytes")
        yield rest


def read_body(response: httpx.Response, cap: int) -> bytes | None:
    """The whole body, or None as soon as it is longer than `cap` bytes."""
    try:
        return b"".join(body_chunks(response, cap))
    except TooLarge:
        return None


def body_text(response: httpx.Response) -> Iterator[str]:
    """The body decoded as text, piece by piece (invalid bytes replaced)."""
    decoder = codecs.getincrementaldecoder(response.encoding or "utf-8")("replace")
    for piece in body_chunks(response, None):
        if text := decoder.decode(piece):
            yield text
    if text := decoder.decode(b"", final=True):
        yield text
