"""What a sandboxed child mounts in its own mount namespace, decided in mca before the fork.

Secrets are *absent* from the child's view, not only refused: each path of the secret list that
exists is covered by an empty read-only tmpfs (a directory) or an empty file nobody may open (a
file, made by the child in a tmpfs of its own), so a way round Landlock's rules (or a system
without Landlock) finds nothing there.

Without Landlock, read-only mounts are the write wall: the whole tree is made read-only with
mount_setattr (Linux 5.12); on older kernels each mount point listed in /proc/self/mountinfo is
remounted read-only instead, keeping the flags a user namespace may not clear.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from mca.sandbox.linux import MS_NODEV, MS_NOEXEC, MS_NOSUID
from mca.sandbox.rights import Policy

# Flags a bind mount in a user namespace must keep when it is made read-only (the kernel locks
# them): nosuid, nodev, noexec, and the access-time flags (statvfs reports them as these bits).
ST_LOCKED = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}


def locked_flags(path: str) -> int:
    """The mount flags a read-only remount of `path` must keep."""
    f = os.statvfs(path).f_flag
    return sum(ms for st, ms in ST_LOCKED.items() if f & st)


def masks(deny: Iterable[Path], *, files: bool = True) -> tuple[tuple[bytes, bool], ...]:
    """(real path, is a directory) for each secret that exists now (directories only unless
    `files`: there is nothing to cover a file with)."""
    out: dict[bytes, bool] = {}
    for path in deny:
        try:
            if not os.path.exists(path):  # most of the list: nothing to resolve
                continue
            real = os.path.realpath(path)
            is_dir = os.path.isdir(real)
        except (OSError, ValueError):
            continue
        if is_dir or files:
            out.setdefault(os.fsencode(real), is_dir)
    return tuple(out.items())


def read_only(paths: Iterable[Path]) -> list[tuple[bytes, int]]:
    """(path, flags to keep) for each path to bind read-only onto itself: a git directory or
    a `.git` file (a link cannot be mounted on; what it leads to is, on its own)."""
    out = []
    for p in paths:
        with contextlib.suppress(OSError):
            if not os.path.islink(p):
                out.append((bytes(p), locked_flags(str(p))))
    return out


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mount_points(
    keep_writable: Iterable[bytes], hidden: Iterable[bytes] = ()
) -> tuple[tuple[bytes, int], ...] | None:
    """Every mount point but the writable ones and what is below them (and what a cover
    hides), shallowest first, with the flags a read-only remount must keep; None where
    /proc/self/mountinfo cannot be read."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    writable = [os.fsdecode(w) for w in keep_writable]
    covers = [os.fsdecode(h) for h in hidden]
    points: dict[str, int] = {}
    for line in lines:
        fields = line.split(" ")
        if len(fields) < 5:
            continue
        where = _unescape(fields[4])
        if any(where == w or where.startswith(w.rstrip("/") + "/") for w in writable):
            continue
        if any(where == h or where.startswith(h.rstrip("/") + "/") for h in covers):
            continue  # under a cover: out of sight, and its path no longer leads to it
        try:
            points[where] = locked_flags(where)
        except OSError:
            continue  # hidden or gone: nothing there to write
    ordered = sorted(points, key=lambda p: (p.count("/"), p))
    return tuple((os.fsencode(p), points[p]) for p in ordered)


TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # each is the private directory inside


def tmp_binds(
    policy: Policy, tmp: Path, extra: tuple[Path, ...]
) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """The private directory `tmp` over /tmp, /var/tmp and /dev/shm (not over one that holds
    the workspace), the workspace and the other writable directories bound onto themselves;
    and which of them stay writable."""
    ws = policy.workspace
    binds: list[tuple[bytes, bytes]] = []
    covered = []
    for target in TMP_DIRS[::-1]:  # /tmp last: the private directory is reached through it
        if os.path.isdir(target) and not ws.is_relative_to(target):
            binds.append((bytes(tmp), target.encode()))
            covered.append(target.encode())
    if b"/tmp" not in covered:
        binds.insert(0, (bytes(tmp), bytes(tmp)))
        covered.append(bytes(tmp))
    writable = list(covered)
    if policy.writes_workspace:
        binds.insert(0, (bytes(ws), bytes(ws)))
        writable.append(bytes(ws))
    # first: the workspace or /tmp inside one of them is bound over it afterwards
    binds[:0] = [(bytes(d), bytes(d)) for d in extra]
    writable += [bytes(d) for d in extra]
    return binds, writable
