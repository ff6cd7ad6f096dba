"""A test-only launcher: run a command on a system that refuses what this one allows.

The kernel does the refusing, the way the systems mca's users run look to it, so nothing in mca
is told what is missing; it has to find out:

    --no-userns       unshare/clone with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS (so
                      libc falls back to clone, whose flags a filter can read): Docker's default
                      seccomp profile, devcontainers, hardened distributions
    --no-mount        mount and the new mount API fail with EPERM, user namespaces allowed: a
                      user namespace without the rights to mount (Ubuntu 23.10+'s AppArmor rule)
    --no-setattr      mount_setattr fails with ENOSYS (kernels before 5.12)
    --no-landlock     the landlock_* calls fail with ENOSYS (kernels before 5.13), or with
                      EOPNOTSUPP (--landlock-errno eopnotsupp: built in, not enabled at boot)
    --hide-proc       /proc is an empty directory only root may enter (root only: a private
                      mount namespace): a process that cannot read its own /proc entries, as
                      with hidepid, some container runtimes and non-dumpable processes
    --user NAME       drop to that account before exec (root only): what `runuser -u` does

A seccomp filter stays on everything the command starts and cannot be removed. Usage:

    python -m tests.confine --no-userns --user nobody -- mca -p "..."

Only the standard library: it runs under whatever interpreter the unprivileged account has.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import platform
import pwd
import struct
import sys
from collections.abc import Sequence

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
MS_REC, MS_PRIVATE = 16384, 1 << 18
OFF_NR, OFF_ARCH, OFF_ARG0 = 0, 4, 16  # struct seccomp_data; arg0's low word (little-endian)

# audit arch and syscall numbers, per machine
ARCHES = {
    "x86_64": (
        0xC000003E,
        {"clone": 56, "unshare": 272, "mount": 165, "open_tree": 428, "move_mount": 429},
    ),
    "aarch64": (
        0xC00000B7,
        {"clone": 220, "unshare": 97, "mount": 40, "open_tree": 428, "move_mount": 429},
    ),
}
COMMON = {"clone3": 435, "fsopen": 430, "fsmount": 432, "mount_setattr": 442}
LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(
    *,
    userns: bool,
    mount: bool,
    landlock: bool,
    setattr: bool = False,
    landlock_errno: int = errno.ENOSYS,
) -> bytes:
    """The BPF program: refuse what is asked (True means refuse), allow everything else."""
    arch, nr = ARCHES[platform.machine()]
    nr = {**nr, **COMMON}
    refusals: list[tuple[int, int]] = []  # (syscall, errno) refused outright
    if landlock:
        refusals += [(n, landlock_errno) for n in LANDLOCK]
    if userns:
        refusals.append((nr["clone3"], errno.ENOSYS))
    if setattr and not mount:
        refusals.append((nr["mount_setattr"], errno.ENOSYS))
    if mount:
        names = ("mount", "open_tree", "move_mount", "fsopen", "fsmount", "mount_setattr")
        refusals += [(nr[n], errno.EPERM) for n in names]
    flagged = [nr["unshare"], nr["clone"]] if userns else []

    body = [_insn(LD_W_ABS, OFF_ARCH), _insn(JEQ_K, arch, 1, 0), _insn(RET_K, RET_ALLOW)]
    body.append(_insn(LD_W_ABS, OFF_NR))
    for call, err in refusals:
        body += [_insn(JEQ_K, call, 0, 1), _insn(RET_K, RET_ERRNO | err)]
    for call in flagged:
        # nr == call: look at the flags; a user namespace asked for is refused
        body += [
            _insn(JEQ_K, call, 0, 4),
            _insn(LD_W_ABS, OFF_ARG0),
            _insn(JSET_K, CLONE_NEWUSER, 0, 1),
            _insn(RET_K, RET_ERRNO | errno.EPERM),
            _insn(RET_K, RET_ALLOW),
        ]
    body.append(_insn(RET_K, RET_ALLOW))
    return b"".join(body)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _ok(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"confine: {what}: {os.strerror(err)}")


def install(filter_code: bytes) -> None:
    """no_new_privs, then the filter: from here on the kernel refuses what it says."""
    libc = _libc()
    _ok(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    buf = ctypes.create_string_buffer(filter_code, len(filter_code))
    fprog = struct.pack("HxxxxxxP", len(filter_code) // 8, ctypes.addressof(buf))
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    _ok(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0), "seccomp")


def hide_proc() -> None:
    """A private mount namespace in which /proc is an empty directory only root may enter."""
    libc = _libc()
    _ok(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _ok(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private /")
    _ok(libc.mount(b"tmpfs", b"/proc", b"tmpfs", 0, b"mode=0700,size=4k"), "tmpfs over /proc")


def become(name: str) -> None:
    """Drop to the account (groups, gid, then uid: the order that cannot be undone)."""
    entry = pwd.getpwnam(name)
    os.setgroups([])
    os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
    os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.confine", description=__doc__.split("\n")[0])
    p.add_argument("--no-userns", action="store_true")
    p.add_argument("--no-mount", action="store_true")
    p.add_argument("--no-setattr", action="store_true")
    p.add_argument("--no-landlock", action="store_true")
    p.add_argument("--landlock-errno", choices=("enosys", "eopnotsupp"), default="enosys")
    p.add_argument("--hide-proc", action="store_true")
    p.add_argument("--user")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        p.error("no command given (after --)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.hide_proc:
        hide_proc()
    if args.user:
        become(args.user)
    if args.no_userns or args.no_mount or args.no_landlock or args.no_setattr:
        err = errno.EOPNOTSUPP if args.landlock_errno == "eopnotsupp" else errno.ENOSYS
        install(
            program(
                userns=args.no_userns,
                mount=args.no_mount,
                landlock=args.no_landlock,
                setattr=args.no_setattr,
                landlock_errno=err,
            )
        )
    os.execvp(args.command[0], args.command)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
