"""The session's Landlock rulesets: built from the read grants and the writable directories,
kept while the grants stand (a secret made or removed since means a new walk)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mca.sandbox import landlock
from mca.sandbox.rules import ReadGrants, inside, read_grants, signature

__all__ = ["SINKS", "Rulesets"]

# Devices every program may write to (sinks); everything else in /dev is read-only.
SINKS = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


@dataclass
class _Cached:
    ruleset: landlock.Ruleset
    signature: tuple[tuple[str, int], ...]
    kept: tuple[bytes, ...] = ()  # what a cover hides the way to, granted itself (reach.py)


@dataclass
class Rulesets:
    """One ruleset per (network, writable directories); reused while nothing it read changed."""

    abi: int
    deny_read: tuple[Path, ...]
    allow_read: tuple[Path, ...] | None = None  # only these readable (None: all but deny_read)
    _cache: dict[tuple[bool, tuple[Path, ...]], _Cached] = field(default_factory=dict)

    def get(
        self, tcp_open: bool, writable: tuple[Path, ...], kept: tuple[bytes, ...] = ()
    ) -> landlock.Ruleset:
        """Reading everywhere but the secrets, writing `writable` (TCP open or not), and
        reading what a cover hides the way to (`kept`)."""
        key = (tcp_open, writable)
        cached = self._cache.get(key)
        if cached is not None:
            same = signature(Path(p) for p, _ in cached.signature) == cached.signature
            if same and cached.kept == kept:
                return cached.ruleset
            cached.ruleset.close()
        grants = read_grants(self.deny_read) if self.allow_read is None else ReadGrants()
        denied = [(d, str(d), os.path.realpath(d)) for d in self.deny_read]
        for top in self.allow_read or ():
            within = [d for d, p, real in denied if inside(p, str(top)) or inside(real, str(top))]
            if not within:  # the common case
                grants.whole.append(top)
                continue
            beneath = read_grants(within, top)  # all of it but what is denied
            grants.whole += beneath.whole
            grants.list_only += beneath.list_only
            grants.walked += beneath.walked
        rs = landlock.create(self.abi, network=tcp_open)
        _allow_all(rs, grants.list_only, landlock.READ_DIR)
        _allow_all(rs, grants.whole, landlock.READ)
        _allow_all(rs, writable, landlock.WRITE)
        _allow_all(rs, (Path(s) for s in SINKS), landlock.READ_FILE | landlock.WRITE_FILE)
        _allow_all(rs, (Path(os.fsdecode(s)) for s in kept), landlock.READ)
        self._cache[key] = _Cached(rs, signature(grants.walked), kept)
        return rs

    def close(self) -> None:
        for cached in self._cache.values():
            cached.ruleset.close()
        self._cache.clear()


def _allow_all(rs: landlock.Ruleset, paths: Iterable[Path], rights: int) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError, PermissionError):
            landlock.allow_path(rs, str(path), rights)
