"""The careful operations of mca.fs.careful at an open directory handle: the caller has checked
the handle once (inside the workspace), and each operation names one entry in it, never
following a link and never resolving a path again. A restore of 60,000 paths opens and checks
each directory once, not once per path (each check walks up the whole tree).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

__all__ = ["atomic_write_at", "file_kind", "link_at", "mkdir_at", "symlink_at", "unlink_at"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _temp(name: str) -> str:
    """A temp name beside `name` (what the workspace's walk and undo know to skip)."""
    return f".{name}.mca-tmp-{os.getpid()}-{os.urandom(4).hex()}"


def file_kind(mode: int) -> str:
    """'a FIFO', 'a directory', ... for an st_mode that is not a regular file."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def atomic_write_at(
    dfd: int, name: str, data: bytes, mode: int | None = None, *, sync: bool = True
) -> None:
    """atomic_write of `name` in the directory held by `dfd` (checked by the caller)."""
    tmp = _temp(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o600, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode if mode is not None else 0o644)
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    if sync:
        with contextlib.suppress(OSError):
            os.fsync(dfd)


def unlink_at(dfd: int, name: str) -> None:
    """unlink_contained of `name` in the directory held by `dfd` (a directory is refused by
    the kernel itself: EISDIR on Linux, for root too)."""
    try:
        os.unlink(name, dir_fd=dfd)
    except IsADirectoryError:
        raise IsADirectoryError(errno.EISDIR, f"{name}: is a directory; not removed") from None


def symlink_at(dfd: int, name: str, target: str) -> None:
    """symlink_contained of `name` in the directory held by `dfd`."""
    tmp = _temp(name)
    os.symlink(target, tmp, dir_fd=dfd)
    _replace_with(dfd, tmp, name)


def link_at(dfd: int, name: str, src_dfd: int, src_name: str) -> None:
    """Make `name` (in `dfd`) another name of the regular file `src_name` (in `src_dfd`),
    replacing what is there (not a directory) atomically; the source is never followed."""
    tmp = _temp(name)
    os.link(src_name, tmp, src_dir_fd=src_dfd, dst_dir_fd=dfd, follow_symlinks=False)
    _replace_with(dfd, tmp, name)


def _replace_with(dfd: int, tmp: str, name: str) -> None:
    """`tmp` (just made in `dfd`) takes `name`'s place atomically, or is removed."""
    try:
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise


def mkdir_at(dfd: int, name: str, mode: int) -> None:
    """mkdir_contained of `name` in the directory held by `dfd`."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, mode, dir_fd=dfd)
    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, f"{name}: is {file_kind(st.st_mode)}")
