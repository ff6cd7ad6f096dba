"""Token estimates with tiktoken, offline: the encodings ship in mca/data and are sha256-checked.

Loading an encoding costs ~0.1-0.2 s, so it happens lazily (or in a background thread started
after the prompt is up), never on the path to the first prompt. Counts are estimates: they are
what the named encoding says, which is not necessarily what a given provider bills.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
import threading
from collections import OrderedDict
from importlib import resources
from typing import Any

from mca.errors import ConfigError

__all__ = [
    "CACHE_SIZE",
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "FITS_CHUNK",
    "MAX_TOKEN_BYTES",
    "Estimator",
    "load_encoding",
]

_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

DEFAULT_ENCODING = "o200k_base"  # today's models' (MCA_ENCODING chooses)
# name -> (bundled file, sha256 of the decompressed ranks as tiktoken expects, pattern, specials)
ENCODINGS: dict[str, tuple[str, str, str, dict[str, int]]] = {
    "o200k_base": (
        "o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": (
        "cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}
CACHE_SIZE = 4096


@functools.cache
def load_encoding(name: str) -> Any:
    """Build a tiktoken Encoding from the bundled, checksum-verified rank file."""
    try:
        filename, expected, pattern, specials = ENCODINGS[name]
    except KeyError:
        raise ConfigError(
            f"unknown encoding {name!r} (available: {', '.join(sorted(ENCODINGS))})"
        ) from None
    import tiktoken

    data = gzip.decompress(resources.files("mca.data").joinpath(filename).read_bytes())
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise ConfigError(f"bundled encoding {filename} is damaged (sha256 {digest[:12]}…)")
    fields = data.split()  # "<base64 token> <rank>" per line; half the time of a line loop
    if len(fields) % 2:
        raise ConfigError(f"bundled encoding {filename} is damaged (an odd number of fields)")
    ranks = dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
    return tiktoken.Encoding(
        name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials
    )


MAX_TOKEN_BYTES = 128  # the longest token of o200k_base and cl100k_base, in bytes
FITS_CHUNK = 8192  # characters per chunk when fits() counts a long text


class Estimator:
    """Counts tokens with one encoding; loads it on first use; caches counts per text."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        if encoding not in ENCODINGS:
            load_encoding(encoding)  # raises the ConfigError listing the choices
        self.encoding = encoding
        self._enc: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, int] = OrderedDict()

    @property
    def label(self) -> str:
        """How counts are made, for every figure shown: 'estimated, o200k_base'."""
        return f"estimated, {self.encoding}"

    @property
    def loaded(self) -> bool:
        return self._enc is not None

    def _encoder(self) -> Any:
        if self._enc is None:
            with self._lock:
                if self._enc is None:
                    self._enc = load_encoding(self.encoding)
        return self._enc

    def preload(self) -> threading.Thread:
        """Load the encoding in a background thread. Not a daemon: an exit waits for it (at
        most the load's 0.1-0.2 s), for a daemon thread still inside tiktoken's native code
        while the interpreter shuts down crashed mca (SIGSEGV, seen where --strict-skills
        refused at once under load)."""
        t = threading.Thread(target=self._encoder, name="mca-tokenizer")
        t.start()
        return t

    def count(self, text: str) -> int:
        """Tokens in text (special-token strings count as plain text)."""
        if not text:
            return 0
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        n = len(self._encoder().encode_ordinary(text))
        self._cache[text] = n
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return n

    def fits(self, text: str, limit: int) -> bool:
        """Whether text is within `limit` tokens, without counting all of a text far over it.

        Every token covers 1 to MAX_TOKEN_BYTES bytes, which settles most questions from the
        length alone. Otherwise the text is counted in line-aligned chunks and the count stops
        as soon as it is over the limit by more than the chunk seams could account for (a seam
        can split one token in two); a text that may fit is always counted whole.
        """
        size = len(text.encode("utf-8"))
        if size <= limit:
            return True
        if size > limit * MAX_TOKEN_BYTES:
            return False
        if len(text) > FITS_CHUNK * 2:
            total, seams, start = 0, 0, 0
            while start < len(text):
                cut = text.find("\n", start + FITS_CHUNK)
                end = len(text) if cut < 0 else cut + 1
                total += self.count(text[start:end])
                seams += 1
                if total > limit + seams:
                    return False
                start = end
        return self.count(text) <= limit
