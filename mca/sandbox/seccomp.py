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

The program is built in mca; the child only installs it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
X32_BIT = 0x40000000

# audit arch, and the calls that change metadata, per machine (fchmodat2 is 452 on both)
CALLS = {
    "x86_64": (
        0xC000003E,
        (90, 91, 92, 93, 94, 132, 235, 261, 260, 268, 280, 188, 189, 190, 197, 198, 199, 452),
    ),
    "aarch64": (0xC00000B7, (52, 53, 54, 55, 88, 5, 6, 7, 14, 15, 16, 452)),
}
# setpgid, setsid (setpgrp is setpgid(0, 0) in libc), per machine; and in the 32-bit ABI each
# runs too (i386 on x86_64, arm on aarch64: 57 and 66 on both), which stays usable here
GROUP_CALLS = {"x86_64": (109, 112), "aarch64": (154, 157)}
COMPAT = {"x86_64": (0x40000003, (57, 66)), "aarch64": (0x40000028, (57, 66))}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def no_metadata_changes() -> bytes | None:
    """The BPF program refusing metadata changes (None on a machine this does not know)."""
    return program(metadata=True, groups=False)


def program(*, metadata: bool, groups: bool) -> bytes | None:
    """The BPF program refusing what is asked (None when nothing is, or on a machine this
    does not know). A call made through another ABI (32-bit, x32) is refused whole: its
    numbers differ."""
    machine = os.uname().machine  # platform.machine(), without importing platform
    known = CALLS.get(machine)
    if known is None or not (metadata or groups):
        return None
    arch, metadata_calls = known
    deny = _insn(RET_K, RET_ERRNO | errno.EPERM)
    if not metadata:
        return _groups_only(machine, arch, deny)
    calls = (*metadata_calls, *(GROUP_CALLS[machine] if groups else ()))
    body = [_insn(LD_W_ABS, 4), _insn(JEQ_K, arch, 1, 0), deny, _insn(LD_W_ABS, 0)]
    body.append(_insn(JGE_K, X32_BIT, 0, 1))
    body.append(deny)
    for call in calls:
        body += [_insn(JEQ_K, call, 0, 1), deny]
    body.append(_insn(RET_K, RET_ALLOW))
    return b"".join(body)


def _groups_only(machine: str, arch: int, deny: bytes) -> bytes:
    """setsid and setpgid refused in every ABI the machine runs (a 32-bit or x32 program
    keeps working, but cannot leave the group either)."""
    allow = _insn(RET_K, RET_ALLOW)
    native = GROUP_CALLS[machine]
    compat_arch, compat = COMPAT[machine]
    x32 = tuple(c | X32_BIT for c in native) if machine == "x86_64" else ()

    def refuse(calls: tuple[int, ...]) -> list[bytes]:
        out = []
        for call in calls:
            out += [_insn(JEQ_K, call, 0, 1), deny]
        return [*out, allow]

    native_part = [_insn(LD_W_ABS, 0), *refuse((*native, *x32))]
    compat_part = [_insn(LD_W_ABS, 0), *refuse(compat)]
    body = [_insn(LD_W_ABS, 4), _insn(JEQ_K, arch, 0, len(native_part))]
    body += native_part
    body += [_insn(JEQ_K, compat_arch, 0, len(compat_part)), *compat_part, allow]
    return b"".join(body)


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
