"""Linux Landlock through ctypes: a ruleset built in mca, enforced in the child before exec.

Landlock is an allow-list: once a process restricts itself, it (and everything it starts) may
only touch what a rule grants, for the kinds of access the ruleset handles; root is not exempt.
A ruleset is built once in mca (opening each path with O_PATH) and only `restrict` runs in the
child, so the forked child does two system calls and allocates nothing.

ABI levels used: 1 files, 2 link/rename across directories (REFER), 3 truncate, 4 TCP
bind/connect, 5 device ioctl, 6 scopes (signals and abstract unix sockets to processes outside
the sandbox), 9 connecting to a pathname unix socket (RESOLVE_UNIX: granted only where writing
is, so a socket outside the workspace and the private /tmp is out of reach; Linux 7.1). The
kernel says which it has; rights it does not know are left out.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from dataclasses import dataclass

__all__ = [
    "CREATE_RULESET_VERSION",
    "EXECUTE",
    "FILE_RIGHTS",
    "IOCTL_DEV",
    "MAKE_BLOCK",
    "MAKE_CHAR",
    "MAKE_DIR",
    "MAKE_FIFO",
    "MAKE_REG",
    "MAKE_SOCK",
    "MAKE_SYM",
    "NET_BIND_TCP",
    "NET_CONNECT_TCP",
    "PR_SET_NO_NEW_PRIVS",
    "READ",
    "READ_DIR",
    "READ_FILE",
    "REFER",
    "REMOVE_DIR",
    "REMOVE_FILE",
    "RESOLVE_UNIX",
    "SCOPE_ABSTRACT_UNIX_SOCKET",
    "SCOPE_SIGNAL",
    "TRUNCATE",
    "WRITE",
    "WRITE_FILE",
    "Enforcer",
    "LandlockError",
    "Ruleset",
    "abi_version",
    "allow_path",
    "create",
    "writable",
]

# The syscall numbers are the same on every architecture that has Landlock (asm-generic).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
RESOLVE_UNIX = 1 << 16  # ABI 9
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a file rule may hold
# Everything a writable tree allows; device nodes are never made.
WRITE = (
    READ
    | WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
    | IOCTL_DEV
    | RESOLVE_UNIX
)


def _fs_rights(abi: int) -> int:
    """Every filesystem right this ABI handles."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    if abi >= 9:
        rights |= RESOLVE_UNIX
    return rights


def writable(abi: int) -> int:
    """What a writable tree's rule holds under this ABI."""
    return WRITE & _fs_rights(abi)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class LandlockError(OSError):
    """The kernel refused a Landlock call."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        v = int(libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(v, 0)


@dataclass
class Ruleset:
    """An open Landlock ruleset (a file descriptor mca keeps for the session)."""

    fd: int
    abi: int
    fs_rights: int

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock {what}: {os.strerror(err)}")
    return result


def create(abi: int, *, network: bool) -> Ruleset:
    """A ruleset handling every filesystem right this ABI knows, TCP unless `network`, and the
    signal and abstract-socket scopes where the kernel has them."""
    fs = _fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and not network else 0
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fd = _check(
        int(libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)),
        "create_ruleset",
    )
    os.set_inheritable(fd, False)
    return Ruleset(fd, abi, fs)


def allow_path(ruleset: Ruleset, path: str, rights: int) -> None:
    """Grant `rights` on a file or a directory and everything beneath it (a file gets only the
    rights a file can have)."""
    flags = os.O_PATH | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        # fstat answers on an O_PATH descriptor; /proc/self may be unreadable (hidepid, a
        # non-dumpable process, a uid switched from root), and a directory taken for a file
        # would get an empty rule, which the kernel refuses
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        attr = _PathBeneathAttr(rights & ruleset.fs_rights, fd)
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        _check(
            int(libc.syscall(SYS_ADD_RULE, ruleset.fd, RULE_PATH_BENEATH, ctypes.byref(attr), 0)),
            f"add_rule {path}",
        )
    finally:
        os.close(fd)


class Enforcer:
    """The two calls a child makes before exec, resolved in advance (no lookups after fork)."""

    def __init__(self) -> None:
        libc = _libc()
        self._prctl = libc.prctl
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long

    def no_new_privs(self) -> None:
        _check(int(self._prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)), "no_new_privs")

    def restrict(self, ruleset_fd: int) -> None:
        _check(int(self._syscall(SYS_RESTRICT_SELF, ruleset_fd, 0)), "restrict_self")
