"""The wire between mca and its spawner (mca/sandbox/spawning/spawner.py), and between the
spawner and its forkers: frames of `!II` (payload length, descriptors carried) and a marshal'd
tuple, the descriptors carried with SCM_RIGHTS; a ChildPlan read back from it; and the few
calls both ends of it make quietly."""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import socket
import struct
from typing import Any

from mca.sandbox.linux import ChildPlan

__all__ = [
    "HEADER",
    "MAX_FDS",
    "close_quietly",
    "drain",
    "frame",
    "kill_group",
    "plan_fields",
    "plan_from_wire",
    "send_to",
]

HEADER = struct.Struct("!II")  # payload length, descriptors carried
MAX_FDS = 64


def frame(message: tuple[Any, ...], nfds: int = 0) -> bytes:
    payload = marshal.dumps(message)
    return HEADER.pack(len(payload), nfds) + payload


def send_to(sock: socket.socket, message: tuple[Any, ...], fds: list[int]) -> bool:
    """One frame and its descriptors; False when the other end is gone."""
    data = frame(message, len(fds))
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))]
    try:
        sent = sock.sendmsg([data], rights if fds else [])
        sock.sendall(data[sent:])
    except OSError:
        return False
    return True


def drain(fd: int) -> bool:
    """Read what a non-blocking pipe holds; False once it is empty."""
    try:
        return bool(os.read(fd, 512))
    except (BlockingIOError, InterruptedError):
        return False


def close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def kill_group(pid: int) -> None:
    """SIGKILL to the group `pid` leads, or to `pid` alone where it leads none."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)


def plan_fields(plan: ChildPlan) -> dict[str, Any]:
    """A ChildPlan's fields, to make another with some changed."""
    return {name: getattr(plan, name) for name in plan.__dataclass_fields__}


def plan_from_wire(wire: dict[str, Any], fds: list[int]) -> ChildPlan:
    """The ChildPlan as mca made it, its Landlock ruleset the descriptor that came along."""
    fields = dict(wire)
    if fields.get("ruleset_fd", -1) >= 0:
        fields["ruleset_fd"] = fds[-1]
    return ChildPlan(**fields)
