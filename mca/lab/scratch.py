"""A hand-in's private /tmp has a total: `RLIMIT_FSIZE` bounds each file, and the total
bounds them all (bytes and entries). Where the child has namespaces its /tmp is a tmpfs of
that size (mca/sandbox/view.py), so the kernel refuses more, and `Sized` tells the grader when
it filled; elsewhere `Scratch` keeps a running total, measured while the grader waits on the
child. Going over is the hand-in's failure, said so; the grader's disk is never filled.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

__all__ = ["EVERY", "Scratch", "Sized", "usage"]

EVERY = 0.25  # seconds between two measurements (the channel's poll)
MIB = 1024 * 1024


def usage(root: Path, stop_bytes: int, stop_files: int) -> tuple[int, int]:
    """(bytes on disk, entries) under root, links not followed; the walk stops once either
    passes its stop (a hand-in's folder of a million files costs the grader no more)."""
    used = files = 0
    todo = [str(root)]
    while todo and used <= stop_bytes and files <= stop_files:
        entries = _entries(todo.pop())
        for entry in entries:
            files += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            used += st.st_blocks * 512
            if stat.S_ISDIR(st.st_mode):
                todo.append(entry.path)
    return used, files


def _entries(folder: str) -> list[os.DirEntry[str]]:
    """A folder's entries; one the child made unreadable (mode 000) is opened to its owner
    first, so nothing it holds is left out of the total."""
    for attempt in range(2):
        try:
            return list(os.scandir(folder))
        except PermissionError:
            if attempt == 0:
                try:
                    os.chmod(folder, 0o700)
                except OSError:
                    break
        except OSError:
            break
    return []


class Scratch:
    """The guard a channel calls while it waits: '' while the folder is within its total,
    else why it is not."""

    def __init__(self, where: Path | None, limit_mb: int, limit_files: int) -> None:
        self.where, self.limit_mb, self.limit_files = where, limit_mb, limit_files
        self.next = 0.0

    def _due(self) -> bool:
        now = time.monotonic()
        if self.where is None or now < self.next:
            return False
        self.next = now + EVERY
        return True

    def __call__(self) -> str:
        if not self._due() or self.where is None:
            return ""
        limit = self.limit_mb * MIB
        used, files = usage(self.where, limit, self.limit_files)
        if used > limit:
            return f"its /tmp went over its total of {self.limit_mb} MiB"
        if files > self.limit_files:
            return f"its /tmp went over its total of {self.limit_files} files"
        return ""


class Sized(Scratch):
    """The guard for a /tmp the kernel sizes (a tmpfs of the total): '' until it is full, then
    why. `where` is that tmpfs as the grader reaches it, through the child's own root
    (/proc/PID/root/…); where the grader may not look there, the kernel's limit holds still,
    unsaid."""

    def __call__(self) -> str:
        if not self._due() or self.where is None:
            return ""
        try:
            st = os.statvfs(self.where)
        except OSError:
            return ""
        if st.f_bfree == 0:
            return f"its /tmp filled its total of {self.limit_mb} MiB (the kernel refused more)"
        if st.f_ffree == 0:
            return (
                f"its /tmp filled its total of {self.limit_files} files (the kernel refused more)"
            )
        return ""
