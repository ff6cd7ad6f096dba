"""Anthropic's prompt cache as its documentation describes it, for fake servers and the bench.

A request's prefix is its tools, then its system blocks, then its messages' blocks, in that
order. A block marked `cache_control` is a breakpoint: the prefix up to it is written to the
cache (when it is at least MIN_TOKENS long and not there yet), and a request reads the longest
cached prefix found at one of its breakpoints or at up to LOOKBACK block boundaries before it.
Input is then three parts: read from the cache, written to it, and neither. Tokens are counted
as a quarter of a block's JSON bytes: the bench compares two ways of marking the same
conversation, so the unit does not matter, only that both are counted alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

MIN_TOKENS = 1024  # the shortest prefix Sonnet and Opus cache
LOOKBACK = 20  # block boundaries checked before a breakpoint for an earlier entry


@dataclass(frozen=True)
class CacheUsage:
    fresh: int
    read: int
    written: int

    @property
    def total(self) -> int:
        return self.fresh + self.read + self.written


def tokens(block: dict[str, Any]) -> int:
    return max(1, len(json.dumps(block, sort_keys=True)) // 4)


def blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's prefix, block by block, in the order the cache reads it."""
    out = list(body.get("tools") or [])
    system = body.get("system")
    out += (
        system if isinstance(system, list) else [{"type": "text", "text": system}] if system else []
    )
    for m in body.get("messages") or []:
        content = m.get("content")
        items = content if isinstance(content, list) else [{"type": "text", "text": content}]
        out += [{**b, "role": m.get("role")} for b in items]
    return out


@dataclass
class PromptCache:
    """The entries written so far (digests of prefixes)."""

    entries: set[str] = field(default_factory=set)

    def use(self, body: dict[str, Any]) -> CacheUsage:
        """Read what this request finds, write what its breakpoints add; its three parts."""
        digest = hashlib.sha256()
        prefixes: list[tuple[str, int, bool]] = []  # (digest, tokens so far, a breakpoint)
        total = 0
        for b in blocks(body):
            plain = {k: v for k, v in b.items() if k != "cache_control"}
            digest.update(json.dumps(plain, sort_keys=True).encode())
            total += tokens(plain)
            prefixes.append((digest.hexdigest(), total, "cache_control" in b))
        marks = [i for i, (_, _, marked) in enumerate(prefixes) if marked]
        read = 0
        for p in marks:
            for q in range(p, max(p - LOOKBACK, -1), -1):
                if prefixes[q][0] in self.entries:
                    read = max(read, prefixes[q][1])
                    break
        end = read
        for p in marks:
            key, upto, _ = prefixes[p]
            if upto >= MIN_TOKENS and key not in self.entries:
                self.entries.add(key)
                end = max(end, upto)
        return CacheUsage(total - end, read, end - read)
