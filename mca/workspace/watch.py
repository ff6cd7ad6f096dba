"""Which workspace paths changed since the last walk, from Linux inotify (through ctypes: no
dependency), so a checkpoint re-examines those paths instead of walking 5,000 files again.

Every directory a walk records is watched (never through a link: IN_DONT_FOLLOW, IN_ONLYDIR).
An event names a path; a directory that appears is walked whole when the checkpoint is taken
(files made in it before its watch existed are found then). Anything uncertain answers None,
and the caller walks everything: no inotify here, a full queue (IN_Q_OVERFLOW), a watch that
could not be added (the per-user limit), an unreadable event. inotify does not see a change
made only through a memory map of a file, nor one made through a hard link from outside the
workspace; each session's first checkpoint is a full walk all the same.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import struct

_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = (
    0x00000002  # IN_MODIFY
    | 0x00000004  # IN_ATTRIB
    | 0x00000008  # IN_CLOSE_WRITE
    | 0x00000040  # IN_MOVED_FROM
    | 0x00000080  # IN_MOVED_TO
    | 0x00000100  # IN_CREATE
    | 0x00000200  # IN_DELETE
    | 0x00000400  # IN_DELETE_SELF
    | 0x00000800  # IN_MOVE_SELF
    | 0x01000000  # IN_ONLYDIR
    | 0x02000000  # IN_DONT_FOLLOW
)
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
MAX_WATCHES = 4_096  # more directories are walked instead: watches are a per-user budget
# (editors and file watchers share it), and mca should not take much of it


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


class Watcher:
    """An inotify descriptor over one workspace's directories."""

    def __init__(self, libc: ctypes.CDLL, fd: int, root: str) -> None:
        self.libc = libc
        self.fd = fd
        self.root = root
        self.dirs: dict[int, str] = {}  # watch descriptor -> directory, relative ('' the root)
        self.broken = False  # a watch failed or the queue overflowed: walk everything

    @classmethod
    def open(cls, root: str) -> Watcher | None:
        """A watcher on nothing yet; None where inotify is not available."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        return cls(libc, fd, root) if fd >= 0 else None

    def watch(self, rel_dir: str) -> None:
        """Watch one directory of the workspace (after a walk recorded it)."""
        if self.broken or len(self.dirs) >= MAX_WATCHES:
            self.broken = True
            return
        path = os.path.join(self.root, rel_dir) if rel_dir else self.root
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), _MASK)
        if wd < 0:
            self.broken = True
            return
        self.dirs[wd] = rel_dir

    def reset(self) -> None:
        """Forget every watch (before a full walk adds them again)."""
        self.drain()
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = self.libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        self.dirs.clear()
        self.broken = self.fd < 0

    def drain(self) -> set[str] | None:
        """The paths named since the last call (relative); None when that cannot be known."""
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 65_536)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                self.broken = True
                break
            if not data:
                break
            self._parse(data, changed)
        return None if self.broken else changed

    def _parse(self, data: bytes, changed: set[str]) -> None:
        at = 0
        while at + _HEADER.size <= len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, at)
            raw = data[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
            at += _HEADER.size + size
            if mask & _IN_Q_OVERFLOW:
                self.broken = True
                return
            if mask & _IN_IGNORED:
                self.dirs.pop(wd, None)
                continue
            rel_dir = self.dirs.get(wd)
            if rel_dir is None:
                continue  # a watch already dropped
            name = os.fsdecode(raw)
            rel = f"{rel_dir}/{name}" if rel_dir and name else name or rel_dir
            changed.add(rel)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
