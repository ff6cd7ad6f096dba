"""Careful file I/O for untrusted trees.

Reads open only regular files (a FIFO, device or socket is refused without blocking), never
follow a final symlink they were not told to, check the size before reading and read only what
they return. Writes go to a temp file and are renamed into place, so a crash leaves the old file
or the new one, never half of one. Both can confirm through the open handle that what they
touched is inside an allowed root, so a directory swapped for a symlink cannot redirect them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from mca.fs.at import atomic_write_at, file_kind, mkdir_at, symlink_at, unlink_at

__all__ = [
    "ContainmentError",
    "FileTooLarge",
    "NotRegularFile",
    "SharedDirectory",
    "atomic_write",
    "dir_inside",
    "exists",
    "file_kind",
    "is_dir",
    "mkdir_contained",
    "open_dir",
    "open_private",
    "open_regular",
    "private_dir",
    "read_head",
    "read_regular",
    "read_regular_at",
    "read_regular_stat",
    "read_tail",
    "resolved",
    "rmdir_contained",
    "sha256",
    "symlink_contained",
    "unlink_contained",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_PATH = getattr(os, "O_PATH", os.O_RDONLY)


def sha256(data: bytes) -> str:
    """Hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


class ContainmentError(OSError):
    """An opened path turned out to be outside the allowed root (a swapped symlink)."""


class SharedDirectory(OSError):
    """A directory of mca's own turned out to be shared with every user (such as /tmp)."""


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: mca only reads regular files."""


class FileTooLarge(OSError):
    """A file over the size a read allows (checked before reading)."""


def dir_inside(dfd: int, root: Path) -> bool:
    """Whether the directory held by `dfd` is `root` or beneath it, found by walking `..` from
    the descriptor: the kernel's own tree, which no link swapped in a path can bend, and no read
    of /proc, which a process may not be allowed."""
    try:
        want = os.stat(root)
    except OSError:
        return False
    goal = (want.st_dev, want.st_ino)
    fd = os.dup(dfd)
    try:
        for _ in range(4096):
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == goal:
                return True
            up = os.open("..", _PATH | _DIRECTORY | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = up
            above = os.fstat(fd)
            if (above.st_dev, above.st_ino) == (st.st_dev, st.st_ino):
                return False  # the top of the tree
        return False
    except OSError:
        return False
    finally:
        os.close(fd)


def _swapped(path: Path, root: Path) -> ContainmentError:
    return ContainmentError(errno.EXDEV, f"{path}: refused, it was swapped to point outside {root}")


def _open_in(path: Path, root: Path, flags: int) -> int:
    """Open `path`'s last component relative to its directory, once that directory is known to
    be inside `root`: a directory swapped for a link out between a check and the open leads
    the open nowhere else."""
    dfd = os.open(path.parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        if not dir_inside(dfd, root):
            raise _swapped(path, root)
        return os.open(path.name, flags | _NOFOLLOW, dir_fd=dfd)
    finally:
        os.close(dfd)


def is_dir(path: Path | str) -> bool:
    """Like Path.is_dir, but False for a path that cannot even be looked at (EACCES, a name
    too long, ...) instead of an exception: such paths come from untrusted trees."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def exists(path: Path | str) -> bool:
    """Like Path.exists (following links), but False on any error."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def resolved(path: Path) -> Path:
    """path.resolve(), or the absolute path when it cannot be resolved."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(path))


@contextlib.contextmanager
def open_regular(
    path: Path, root: Path | None = None, *, follow: bool = False
) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """Open a regular file for reading without ever blocking; yields (file, fstat).

    O_NONBLOCK makes opening a FIFO return at once (then fstat refuses it); O_NOFOLLOW refuses a
    final symlink unless `follow`; `root` confirms the opened file is inside it.
    """
    fd, st = _open_checked(path, root, follow)
    try:
        f = os.fdopen(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f, st


def _open_checked(path: Path, root: Path | None, follow: bool) -> tuple[int, os.stat_result]:
    """A descriptor on a regular file (inside `root` when given), and its fstat."""
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:  # not `with _no_link`: skill discovery opens thousands, and a with costs a generator
        if root is None:
            fd = os.open(path, flags)
        else:  # a final link is followed by resolving it now; what is opened is not a link
            fd = _open_in(Path(os.path.realpath(path)) if follow else path, root, flags)
    except OSError as e:
        raise _link_refused(e, path) from None
    try:
        return fd, _regular_stat(fd, path)
    except BaseException:
        os.close(fd)
        raise


def _link_refused(e: OSError, label: object) -> OSError:
    """What to raise for a failed open: one refused for a final symbolic link (O_NOFOLLOW)
    says so; any other error is itself."""
    if e.errno == errno.ELOOP:
        return NotRegularFile(errno.ELOOP, f"{label}: is a symbolic link; not followed")
    return e


def _regular_stat(fd: int, label: object) -> os.stat_result:
    """The fstat of a descriptor that must be on a regular file."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        kind = file_kind(st.st_mode)
        raise NotRegularFile(errno.EINVAL, f"{label}: is {kind}, not a regular file")
    return st


def read_regular_stat(
    path: Path, root: Path | None = None, *, cap: int, follow: bool = False
) -> tuple[bytes, os.stat_result]:
    """(contents, fstat) of a regular file of at most `cap` bytes (the size is checked first).

    The same checks as open_regular, on a bare descriptor: skill discovery reads thousands.
    """
    fd, st = _open_checked(path, root, follow)
    try:
        return _read_capped(fd, st, cap, path), st
    finally:
        os.close(fd)


def read_regular_at(dfd: int, name: str, *, cap: int) -> tuple[bytes, os.stat_result]:
    """(contents, fstat) of the regular file `name` in the directory held by `dfd`: the same
    checks as read_regular_stat, with no path to resolve (a walk opens each directory once)."""
    try:
        fd = os.open(name, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _NOFOLLOW, dir_fd=dfd)
    except OSError as e:
        raise _link_refused(e, name) from None
    try:
        st = _regular_stat(fd, name)
        return _read_capped(fd, st, cap, name), st
    finally:
        os.close(fd)


def _read_capped(fd: int, st: os.stat_result, cap: int, label: object) -> bytes:
    if st.st_size > cap:
        raise FileTooLarge(errno.EFBIG, f"{label}: {st.st_size:,} bytes, over {cap:,}")
    data = os.read(fd, cap + 1)  # a regular file gives all it has, up to the count
    while len(data) < st.st_size and (more := os.read(fd, cap + 1 - len(data))):
        data += more  # interrupted short read
    if len(data) > cap:  # it grew after fstat
        raise FileTooLarge(errno.EFBIG, f"{label}: over {cap:,} bytes")
    return data


def read_regular(path: Path, root: Path | None = None, *, cap: int, follow: bool = False) -> bytes:
    """A whole regular file of at most `cap` bytes (FileTooLarge over it, checked first)."""
    return read_regular_stat(path, root, cap=cap, follow=follow)[0]


def read_tail(path: Path, *, limit: int) -> bytes:
    """The last `limit` bytes of a regular file (all of it when it is smaller)."""
    with open_regular(path) as (f, st):
        f.seek(max(0, st.st_size - limit))
        return f.read(limit)


def read_head(path: Path, root: Path | None = None, *, limit: int) -> tuple[bytes, int]:
    """(the first `limit` bytes, the file's size) of a regular file."""
    with open_regular(path, root) as (f, st):
        return f.read(limit), st.st_size


def private_dir(path: Path) -> Path:
    """Create `path` and any missing parents as 0700 directories, and tighten `path` itself.

    Only `path` (a directory of mca's own, such as $MCA_HOME) is ever chmod-ed, never a parent
    that already existed, and never through a symlink. A directory every user may write to
    (sticky or world-writable, such as /tmp) is refused, never tightened: SharedDirectory.
    """
    missing = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700)
    try:
        st = os.lstat(path)
    except OSError:
        return path
    if stat.S_ISDIR(st.st_mode) and st.st_mode & (stat.S_ISVTX | stat.S_IWOTH):
        raise SharedDirectory(errno.EPERM, "a directory every user can write to, not mca's own")
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and st.st_mode & 0o077:
        with contextlib.suppress(OSError):
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
    return path


def open_private(path: Path, append: bool = True) -> int:
    """An fd on a 0600 regular file of mca's own (created if missing, never through a symlink;
    a FIFO or a device put in its place is refused, never waited on: O_NONBLOCK, then fstat)."""
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK
    flags |= os.O_APPEND if append else 0
    fd = os.open(path, flags, 0o600)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"{path}: {file_kind(st.st_mode)}, not a file")
        if not append:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o600)
    return fd


def _open_dir(path: Path, root: Path | None) -> int:
    dfd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    if root is not None and not dir_inside(dfd, root):
        os.close(dfd)
        raise _swapped(path, root)
    return dfd


def atomic_write(
    path: Path, data: bytes, mode: int | None = None, root: Path | None = None, *, sync: bool = True
) -> None:
    """Write `data` to a temp file beside `path`, fsync it, then rename it over `path`.

    Both steps go through one open handle on the directory, checked to be inside `root`, so a
    directory swapped for a symlink between the path check and the write cannot redirect it.
    `sync=False` skips both syncs: the file is still whole or absent after a crash of mca, but
    a crash of the machine may lose it (for what can be lost: a checkpoint's blobs and trees).
    """
    dfd = _open_dir(path.parent, root)
    try:
        atomic_write_at(dfd, path.name, data, mode, sync=sync)
    finally:
        os.close(dfd)


def open_dir(path: Path, root: Path | None = None) -> int:
    """A handle on the directory `path`, checked to be inside `root` (the caller closes it)."""
    return _open_dir(path, root)


def unlink_contained(path: Path, root: Path | None = None) -> None:
    """Remove one directory entry (a symlink itself, never what it points to) inside `root`."""
    dfd = _open_dir(path.parent, root)
    try:
        unlink_at(dfd, path.name)
    finally:
        os.close(dfd)


def symlink_contained(path: Path, target: str, root: Path | None = None) -> None:
    """Make `path` a symlink to `target` (text, never followed here), replacing what is there
    (not a directory) atomically, through a directory handle checked to be inside `root`."""
    dfd = _open_dir(path.parent, root)
    try:
        symlink_at(dfd, path.name, target)
    finally:
        os.close(dfd)


def mkdir_contained(path: Path, mode: int, root: Path | None = None) -> None:
    """Create one directory (its parent must exist inside `root`); an existing one is kept."""
    dfd = _open_dir(path.parent, root)
    try:
        mkdir_at(dfd, path.name, mode)
    finally:
        os.close(dfd)


def rmdir_contained(path: Path, root: Path | None = None) -> None:
    """Remove one empty directory inside `root` (OSError when it is not empty)."""
    dfd = _open_dir(path.parent, root)
    try:
        os.rmdir(path.name, dir_fd=dfd)
    finally:
        os.close(dfd)
