"""Crash-safe file writing: a crash leaves the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from pathlib import Path


def sha256(data: bytes) -> str:
    """Hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def fd_path(fd: int) -> Path | None:
    """The real path of an open file descriptor (Linux /proc), or None where unknown."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def _check_fd(fd: int, root: Path | None, what: Path) -> None:
    if root is None:
        return
    real = fd_path(fd)
    if real is not None and not (real == root or real.is_relative_to(root)):
        raise ContainmentError(f"{what}: refused, it was swapped to point outside {root}")


class ContainmentError(OSError):
    """An opened path turned out to be outside the allowed root (a swapped symlink)."""


def read_contained(path: Path, root: Path | None = None, limit: int = -1) -> bytes:
    """Read a file, then confirm what was actually opened is inside `root`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        _check_fd(fd, root, path)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit)
    finally:
        os.close(fd)


def atomic_write(
    path: Path, data: bytes, mode: int | None = None, root: Path | None = None
) -> None:
    """Write `data` to a temp file beside `path`, fsync it, then rename it over `path`.

    Both steps go through one open handle on the directory, checked to be inside `root`, so a
    directory swapped for a symlink between the path check and the write cannot redirect it.
    """
    dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _check_fd(dfd, root, path)
        tmp = f".{path.name}.mca-tmp-{os.getpid()}-{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fchmod(f.fileno(), mode if mode is not None else 0o644)
                os.fsync(f.fileno())
            os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)
