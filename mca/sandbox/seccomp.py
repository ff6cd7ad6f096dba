"""Seccomp filters for what Landlock and the rlimits do not cover, refused with EPERM:

- changes of file metadata (modes, owners, times, extended attributes), for sandboxes that
  may write nothing outside a private /tmp. Landlock decides where a process may write a
  file's contents, not whether it may chmod or touch one; a read-only mount covers both but
  needs a mount namespace. Where a command may write nothing (read-only mode: the lab's
  student code), the calls themselves are refused, whatever the path.
- leaving the command's process group (setsid, setpgid), for sandboxes without a PID
  namespace: each command leads a group of its own, so every process it starts stays where
  one kill of the group reaches it (a daemon, `setsid -f`, a double fork included), with no
  need to find them in /proc, which may be hidden.
- every socket but a unix one, for sandboxes without a network namespace and without the
  network: Landlock's network rules (ABI 4) cover TCP only, so UDP, raw and packet sockets
  would reach the host's network. `socket` and `socketpair` are refused for any family but
  AF_UNIX (the family is a register the filter can read); io_uring too, which makes sockets
  without `socket` (IORING_OP_SOCKET); and in the 32-bit ABI, `socketcall` making a socket,
  whose family is in memory the filter cannot read. Netlink sockets are refused too but for
  NETLINK_ROUTE (the interfaces' addresses: what /proc/net shows, and what node's
  os.networkInterfaces() and glibc's getaddrinfo read; changing them takes CAP_NET_ADMIN,
  which a command never has).

A call made through another ABI (32-bit, x32) is checked with that ABI's numbers, or, where
metadata is refused, refused whole: those numbers are not kept here. The program is built in
mca; the child only installs it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from typing import NamedTuple

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
OFF_NR, OFF_ARCH, OFF_ARG0, OFF_ARG2 = 0, 4, 16, 32  # struct seccomp_data; low words
X32_BIT = 0x40000000
AF_UNIX, AF_NETLINK, NETLINK_ROUTE = 1, 16, 0
SYS_SOCKET, SYS_SOCKETPAIR = 1, 8  # socketcall's first argument: which call it makes
IO_URING = (425, 426, 427)  # setup, enter, register: the same number in every ABI


class Abi(NamedTuple):
    """One system-call ABI a machine runs: its audit arch and the numbers this filters."""

    arch: int
    groups: tuple[int, ...]  # setpgid, setsid (setpgrp is setpgid(0, 0) in libc)
    sockets: tuple[int, ...]  # socket, socketpair
    socketcall: int = -1  # the 32-bit multiplexer (-1: none)


class Machine(NamedTuple):
    """A machine mca has programs for: its own ABI, and the others it runs."""

    native: Abi
    metadata: tuple[int, ...]  # the native calls that change metadata
    compat: Abi  # the 32-bit ABI it runs (i386 on x86_64, arm on aarch64)
    x32: bool = False  # x86_64's x32: the native numbers with X32_BIT set


# The calls that change metadata. x86_64: chmod, fchmod, chown, fchown, lchown, utime, utimes,
# futimesat, fchownat, fchmodat, utimensat, setxattr, lsetxattr, fsetxattr, removexattr,
# lremovexattr, fremovexattr; aarch64 has the *at ones and these (no chmod, utime …); newer
# calls have one number everywhere: fchmodat2 452, setxattrat 463, removexattrat 466 (6.13).
X86_64_METADATA = (90, 91, 92, 93, 94, 132, 235, 261, 260, 268, 280, 188, 189, 190, 197, 198, 199)
AARCH64_METADATA = (52, 53, 54, 55, 88, 5, 6, 7, 14, 15, 16)
NEWER_METADATA = (452, 463, 466)
MACHINES = {
    "x86_64": Machine(
        Abi(0xC000003E, (109, 112), (41, 53)),
        (*X86_64_METADATA, *NEWER_METADATA),
        Abi(0x40000003, (57, 66), (359, 360), socketcall=102),
        x32=True,
    ),
    "aarch64": Machine(
        Abi(0xC00000B7, (154, 157), (198, 199)),
        (*AARCH64_METADATA, *NEWER_METADATA),
        # socketcall exists in arm's old ABI only, which arm64 does not run: refused anyway
        Abi(0x40000028, (57, 66), (281, 288), socketcall=102),
    ),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


ALLOW, DENY = _insn(RET_K, RET_ALLOW), _insn(RET_K, RET_ERRNO | errno.EPERM)


def known(machine: str | None = None) -> bool:
    """Whether this machine (default: this one) has programs here."""
    return (machine or os.uname().machine) in MACHINES


def no_metadata_changes() -> bytes | None:
    """The BPF program refusing metadata changes (None on a machine this does not know)."""
    return program(metadata=True, groups=False)


def program(
    *, metadata: bool, groups: bool, no_network: bool = False, machine: str | None = None
) -> bytes | None:
    """The BPF program refusing what is asked (None when nothing is, or on a machine this does
    not know): metadata changes, leaving the group, sockets but unix ones."""
    m = MACHINES.get(machine or os.uname().machine)  # platform.machine(), without its import
    if m is None or not (metadata or groups or no_network):
        return None
    native = _rules(m.native, groups, no_network, m.metadata if metadata else ())
    x32: list[bytes] = []
    if m.x32:
        x32 = [DENY] if metadata else _rules(m.native, groups, no_network, (), X32_BIT)
        native = [_insn(JGE_K, X32_BIT, 0, len(x32)), *x32, *native]
    compat = [DENY] if metadata else _rules(m.compat, groups, no_network, ())
    body = [_insn(LD_W_ABS, OFF_ARCH), _insn(JEQ_K, m.native.arch, 0, len(native) + 1)]
    body += [_insn(LD_W_ABS, OFF_NR), *native]
    body += [_insn(JEQ_K, m.compat.arch, 0, len(compat) + 1), _insn(LD_W_ABS, OFF_NR), *compat]
    body.append(DENY)  # an ABI the machine does not run
    return b"".join(body)


def _rules(
    abi: Abi, groups: bool, no_network: bool, refused: tuple[int, ...], bit: int = 0
) -> list[bytes]:
    """One ABI's checks, the call's number loaded; each ends in a return, the last allows."""
    deny = (*refused, *(abi.groups if groups else ()), *(IO_URING if no_network else ()))
    out: list[bytes] = []
    for call in deny:
        out += [_insn(JEQ_K, call | bit, 0, 1), DENY]
    for call in abi.sockets if no_network else ():  # allowed: AF_UNIX, AF_NETLINK's ROUTE
        out += [_insn(JEQ_K, call | bit, 0, 7), _insn(LD_W_ABS, OFF_ARG0)]
        out += [_insn(JEQ_K, AF_UNIX, 3, 0), _insn(JEQ_K, AF_NETLINK, 0, 3)]
        out += [_insn(LD_W_ABS, OFF_ARG2), _insn(JEQ_K, NETLINK_ROUTE, 0, 1), ALLOW, DENY]
    if no_network and abi.socketcall >= 0:  # which call it makes: socket, socketpair refused
        out += [_insn(JEQ_K, abi.socketcall, 0, 5), _insn(LD_W_ABS, OFF_ARG0)]
        out += [_insn(JEQ_K, SYS_SOCKET, 2, 0), _insn(JEQ_K, SYS_SOCKETPAIR, 1, 0), ALLOW, DENY]
    return [*out, ALLOW]


class Installer:
    """Installs a prepared program in the child: one prctl on buffers made before the fork."""

    def __init__(self, program: bytes) -> None:
        self._code = ctypes.create_string_buffer(program, len(program))
        fprog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(self._code))
        self._prog = ctypes.create_string_buffer(fprog, len(fprog))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl

    def install(self) -> None:
        """After no_new_privs (the kernel requires one or CAP_SYS_ADMIN)."""
        if self._prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._prog, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"sandbox: seccomp: {errno.errorcode.get(err, err)}")
