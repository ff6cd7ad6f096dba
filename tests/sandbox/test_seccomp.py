"""The seccomp programs, run call by call in a BPF interpreter for each machine mca knows
(tests/sandbox/bpf.py: whatever this machine and its kernel are), then installed for real in
a child here, where the kernel answers."""

from __future__ import annotations

import errno
import subprocess
import sys

import pytest

from mca.sandbox.seccomp import AF_UNIX, MACHINES, RET_ALLOW, RET_ERRNO, X32_BIT, program
from tests.sandbox.bpf import run

REFUSED = RET_ERRNO | errno.EPERM
AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK = 2, 10, 16, 17, 40
NOT_UNIX = (AF_INET, AF_INET6, AF_PACKET, AF_VSOCK, 0, 0xFFFF)
NETLINK_ROUTE, NETLINK_SOCK_DIAG, NETLINK_KOBJECT_UEVENT = 0, 4, 15
# per machine: setxattrat, getxattrat, listxattrat, removexattrat (Linux 6.13), socket,
# socketpair, sendto, connect; the 32-bit ABI's socket, socketpair, socketcall, setsid
NUMBERS = {
    "x86_64": ((463, 464, 465, 466), (41, 53, 44, 42), (359, 360, 102, 66)),
    "aarch64": ((463, 464, 465, 466), (198, 199, 206, 203), (281, 288, 102, 66)),
}


def _answer(machine: str, nr: int, *args: int, compat: bool = False, **asked: bool) -> int:
    prog = program(machine=machine, **{"metadata": False, "groups": False, **asked})
    assert prog is not None
    m = MACHINES[machine]
    return run(prog, nr, (m.compat if compat else m.native).arch, args)


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_the_metadata_filter_refuses_the_xattrat_calls_that_change(machine: str) -> None:
    """setxattrat and removexattrat (Linux 6.13) change metadata as setxattr does; reading
    (getxattrat, listxattrat) stays allowed."""
    (set_at, get_at, list_at, remove_at), _, _ = NUMBERS[machine]
    for nr in (set_at, remove_at, 452):
        assert _answer(machine, nr, metadata=True) == REFUSED, nr
    for nr in (get_at, list_at):
        assert _answer(machine, nr, metadata=True) == RET_ALLOW, nr
    assert _answer(machine, set_at, groups=True) == RET_ALLOW  # only where metadata is refused
    assert _answer(machine, 66, compat=True, metadata=True) == REFUSED  # other ABIs: whole


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_without_the_network_only_unix_sockets_are_made(machine: str) -> None:
    _, (socket, socketpair, sendto, connect), _ = NUMBERS[machine]
    for family in NOT_UNIX:
        for nr in (socket, socketpair):
            assert _answer(machine, nr, family, 2, 0, no_network=True) == REFUSED, (nr, family)
            assert _answer(machine, nr, family, 2, 0, groups=True) == RET_ALLOW
    for nr in (socket, socketpair):
        assert _answer(machine, nr, AF_UNIX, 1, 0, no_network=True) == RET_ALLOW
        # netlink reads the interfaces (NETLINK_ROUTE), nothing else: not the host's sockets
        assert _answer(machine, nr, AF_NETLINK, 3, NETLINK_ROUTE, no_network=True) == RET_ALLOW
        for protocol in (NETLINK_SOCK_DIAG, NETLINK_KOBJECT_UEVENT, 1 << 8):
            assert _answer(machine, nr, AF_NETLINK, 3, protocol, no_network=True) == REFUSED
        # the kernel reads the family as an int: the upper half of the register is not it
        assert _answer(machine, nr, AF_UNIX | 1 << 32, no_network=True) == RET_ALLOW
        assert _answer(machine, nr, AF_INET | 1 << 32, no_network=True) == REFUSED
    for nr in (425, 426, 427):  # io_uring makes sockets without socket()
        assert _answer(machine, nr, no_network=True, metadata=True) == REFUSED
        assert _answer(machine, nr, metadata=True) == RET_ALLOW
    for nr in (sendto, connect):  # on what exists (a unix socket): no family to check
        assert _answer(machine, nr, 3, no_network=True, groups=True) == RET_ALLOW


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_the_32_bit_abi_is_checked_with_its_own_numbers(machine: str) -> None:
    """socket and socketpair by family, socketcall's socket and socketpair whole (their family
    is in memory a filter cannot read), its other calls as they are; setsid refused."""
    _, _, (socket, socketpair, socketcall, setsid) = NUMBERS[machine]
    ask = {"compat": True, "no_network": True, "groups": True}
    for nr in (socket, socketpair):
        assert _answer(machine, nr, AF_INET, **ask) == REFUSED
        assert _answer(machine, nr, AF_UNIX, **ask) == RET_ALLOW
    assert _answer(machine, socketcall, 1, **ask) == REFUSED  # SYS_SOCKET
    assert _answer(machine, socketcall, 8, **ask) == REFUSED  # SYS_SOCKETPAIR
    assert _answer(machine, socketcall, 3, **ask) == RET_ALLOW  # SYS_CONNECT
    assert _answer(machine, socketcall, 1, compat=True, groups=True) == RET_ALLOW
    assert _answer(machine, setsid, **ask) == REFUSED
    assert _answer(machine, 425, **ask) == REFUSED


def test_x32_and_unknown_abis() -> None:
    prog = program(machine="x86_64", metadata=False, groups=True, no_network=True)
    assert prog is not None
    arch = MACHINES["x86_64"].native.arch
    assert run(prog, 41 | X32_BIT, arch, (AF_INET6,)) == REFUSED
    assert run(prog, 41 | X32_BIT, arch, (AF_UNIX,)) == RET_ALLOW
    assert run(prog, 112 | X32_BIT, arch) == REFUSED  # setsid
    assert run(prog, 0 | X32_BIT, arch) == RET_ALLOW  # read
    assert run(prog, 41, 0x12345678, (AF_UNIX,)) == REFUSED  # an ABI the machine does not run
    metadata = program(machine="x86_64", metadata=True, groups=False)
    assert metadata is not None and run(metadata, 0 | X32_BIT, arch) == REFUSED
    assert program(machine="x86_64", metadata=False, groups=False) is None
    assert program(machine="riscv64", metadata=True, groups=True, no_network=True) is None


_CHILD = """
import ctypes, errno, os, socket, sys
from mca.sandbox.seccomp import Installer, program
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.prctl(38, 1, 0, 0, 0) == 0  # no_new_privs
Installer(program(metadata=True, groups=False, no_network=True)).install()
def answer(what):
    try:
        what().close()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
print(answer(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
      answer(lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM)),
      answer(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4)),
      answer(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)),
      answer(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
      answer(lambda: socket.socketpair()[0]),
      call(int(sys.argv[1]), -100, b"/", 0, b"user.x", None, 0),
      call(int(sys.argv[2]), -100, b"/", 0, b"user.x"),
      call(425, 1, ctypes.create_string_buffer(120)))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp is Linux's")
def test_the_kernel_answers_as_the_interpreter_says() -> None:
    """Installed for real: sockets but unix and netlink route ones, the xattrat calls that
    change and io_uring refused, whether or not this kernel has those calls (the filter
    answers before the kernel looks)."""
    import os

    if not MACHINES.get(os.uname().machine):
        pytest.skip(f"no seccomp program for {os.uname().machine}")
    set_at, _, _, remove_at = NUMBERS[os.uname().machine][0]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(set_at), str(remove_at)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    refused, made = ["EPERM"] * 3, ["ok"] * 3
    assert out.stdout.split() == [*refused, *made, *refused], out
