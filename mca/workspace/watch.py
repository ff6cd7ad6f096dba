"""Which workspace paths changed since the last walk, from Linux inotify (through ctypes: no
dependency), so a checkpoint re-examines those paths instead of walking 5,000 files again.

Every directory a walk lists is watched (never through a link: IN_DONT_FOLLOW, IN_ONLYDIR).
An event names a path; a directory that appears is walked whole when the checkpoint is taken
(files made in it before its watch existed are found then). Anything uncertain answers None,
and the caller walks everything: no inotify here, a full queue (IN_Q_OVERFLOW), a directory
watch that could not be added (the per-user limit), an unreadable event.

Every file a walk records is watched too, for IN_ATTRIB alone: inotify tells a directory's
watch of a write only under the name written through, so a write through another name of the
file (a hard link in an ignored directory, outside the workspace) would go unseen; but making
or removing a name changes the file's link count, which its own watch hears. The file is then
looked at again (and, with more names than before, everything is walked: its other names may
be anywhere), and every file with more than one name is looked at again at each checkpoint.
Past MAX_FILE_WATCHES, the files not watched are looked at again at each checkpoint instead.
inotify does not see a change made only through a memory map of a file; each session's first
checkpoint is a full walk all the same.
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
_FILE_MASK = 0x00000004 | 0x02000000  # IN_ATTRIB (a name made or removed), IN_DONT_FOLLOW
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
MAX_WATCHES = 4_096  # more directories are walked instead: watches are a per-user budget
# (editors and file watchers share it), and mca should not take much of it
MAX_FILE_WATCHES = 16_384  # files past it are looked at again at each checkpoint (about 1 KB
# of kernel memory each, and the inode kept in memory); and never more than an eighth of the
# user's limit (8,192 on older systems): an editor's watcher needs the rest


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


def _file_budget() -> int:
    """The files mca watches at most here: MAX_FILE_WATCHES, within an eighth of the limit."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", "rb") as f:
            limit = int(f.read().strip())
    except (OSError, ValueError):
        limit = 8_192  # the old kernels' default
    return max(0, min(MAX_FILE_WATCHES, limit // 8))


class Watcher:
    """An inotify descriptor over one workspace's directories."""

    def __init__(self, libc: ctypes.CDLL, fd: int, root: str) -> None:
        self.libc = libc
        self.fd = fd
        self.root = root
        self.dirs: dict[int, str] = {}  # watch descriptor -> directory, relative ('' the root)
        self.files: dict[int, set[str]] = {}  # watch descriptor -> a file's names (relative)
        self.file_watches = 0
        self.max_file_watches = _file_budget()
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

    def watch_file(self, rel: str) -> bool:
        """Hear when one file of the workspace gains or loses a name (after a walk recorded
        it); False when it is not watched (the caller looks at it again each time instead)."""
        if self.broken or self.file_watches >= self.max_file_watches:
            return False
        path = os.path.join(self.root, rel)
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), _FILE_MASK)
        if wd < 0:
            return False
        if wd not in self.files:
            self.files[wd] = set()
            self.file_watches += 1
        self.files[wd].add(rel)  # the same file under two names: one watch
        return True

    def reset(self) -> None:
        """Forget every watch (before a full walk adds them again)."""
        self.drain()
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = self.libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        self.dirs.clear()
        self.files.clear()
        self.file_watches = 0
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
                if self.files.pop(wd, None) is not None:
                    self.file_watches -= 1
                continue
            names = self.files.get(wd)
            if names is not None:
                changed.update(names)  # a name made or removed elsewhere, a mode, a time
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
