"""Small blobs kept together: a checkpoint's new small files go into one pack file and one
index, instead of a file each (creating 5,000 files cost the first checkpoint of a 5,000-file
workspace seconds; reading them costs a fraction of that).

    packs/<sha256 of the pack>.pack   the blobs, one after another
    packs/<same>.idx                  JSON {blob sha256: [offset, size]}

A pack and its index are renamed into place whole; a blob read from a pack is checked against
its name like any other, so a damaged or forged pack can only make an undo say "damaged".
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from mca.fs.careful import open_regular, read_regular, sha256, unlink_contained

PACK_MAX_BLOB = 256 * 1024  # larger blobs are files of their own
PACK_MAX_BYTES = 64 * 1024 * 1024  # a pack is written when its pending blobs reach this
MAX_INDEX_BYTES = 64 * 1024 * 1024
_PACK = re.compile(r"([0-9a-f]{64})\.idx\Z")
_HASH = re.compile(r"[0-9a-f]{64}\Z")


class Packs:
    """The packs of one store: an index of all of them (read once), and blobs not written yet."""

    def __init__(self, where: Path, write: Callable[[Path, bytes], None]) -> None:
        self.where = where
        self.write = write
        self.index: dict[str, tuple[str, int, int]] | None = None  # blob -> pack, offset, size
        self.pending: dict[str, bytes] = {}
        self.pending_bytes = 0

    def _load(self) -> dict[str, tuple[str, int, int]]:
        if self.index is not None:
            return self.index
        self.index = {}
        try:
            with os.scandir(self.where) as it:
                names = sorted(m[1] for e in it if (m := _PACK.match(e.name)))
        except OSError:
            return self.index
        for pack in names:
            with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
                raw = json.loads(read_regular(self.where / f"{pack}.idx", cap=MAX_INDEX_BYTES))
                for blob, (offset, size) in raw.items():
                    if _HASH.match(blob) and isinstance(offset, int) and isinstance(size, int):
                        self.index[blob] = (pack, offset, size)
        return self.index

    def has(self, blob: str) -> bool:
        return blob in self.pending or blob in self._load()

    def add(self, blob: str, data: bytes) -> None:
        """Keep a blob for the next pack (written now when the pending ones are large)."""
        self.pending[blob] = data
        self.pending_bytes += len(data)
        if self.pending_bytes >= PACK_MAX_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the pending blobs as one pack and its index (nothing when none are pending)."""
        if not self.pending:
            return
        offsets: dict[str, list[int]] = {}
        at = 0
        for blob, data in self.pending.items():
            offsets[blob] = [at, len(data)]
            at += len(data)
        body = b"".join(self.pending.values())
        pack = sha256(body)
        self.write(self.where / f"{pack}.pack", body)
        self.write(self.where / f"{pack}.idx", json.dumps(offsets).encode())
        index = self._load()
        for blob, (offset, size) in offsets.items():
            index[blob] = (pack, offset, size)
        self.pending.clear()
        self.pending_bytes = 0

    def get(self, blob: str) -> bytes | None:
        """A blob's bytes as stored (unchecked), or None when no pack has it."""
        if blob in self.pending:
            return self.pending[blob]
        found = self._load().get(blob)
        if found is None:
            return None
        pack, offset, size = found
        with open_regular(self.where / f"{pack}.pack") as (f, _):
            f.seek(offset)
            return f.read(size)

    def prune(self, keep: set[str]) -> None:
        """Remove packs none of whose blobs is in `keep`."""
        self.flush()
        used: dict[str, bool] = {}
        for blob, (pack, _, _) in self._load().items():
            used[pack] = used.get(pack, False) or blob in keep
        where = self.where.resolve()
        for pack, needed in used.items():
            if not needed:
                for ext in (".idx", ".pack"):
                    with contextlib.suppress(OSError):
                        unlink_contained(where / f"{pack}{ext}", where)
        self.index = None
