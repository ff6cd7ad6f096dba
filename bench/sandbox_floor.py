"""The floor under a sandboxed command's start (issue #33 item 6): `true` started plainly
(subprocess, which uses vfork) against `true` started with the least kernel work a sandboxed
command needs, alternating, medians in ms. Done by util-linux's `unshare` (C) and by a Python
fork as the spawner does it (unshare of the mount, PID and IPC namespaces, a second fork to be
the PID namespace's first process, /proc, exec), the answer taken either when the process
holding the namespaces has ended (as the spawner did) or when the command's pipe closes (as
it does now). Root only (no user namespace here).

    sudo .venv/bin/python -m bench.sandbox_floor [N]
"""

from __future__ import annotations

import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

NEWNS, NEWPID, NEWIPC = 0x00020000, 0x20000000, 0x08000000
MS_REC, MS_PRIVATE, MS_QUIET = 16384, 1 << 18, 2 | 4 | 8  # nosuid, nodev, noexec
LIBC = ctypes.CDLL(None, use_errno=True)


def plain() -> None:
    subprocess.run(["/bin/true"], check=False)


def by_unshare(*flags: str) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(["unshare", *flags, "/bin/true"], check=False)

    return run


def _child(flags: int, out: int) -> None:
    """The spawner's child, reduced to the kernel's work: never returns."""
    try:
        if flags:
            LIBC.unshare(flags)
            LIBC.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
            if os.fork():  # the waiter: holds the namespaces until it ends
                os.close(out)
                os.wait()
                os._exit(0)
            LIBC.mount(b"proc", b"/proc", b"proc", MS_QUIET, None)
        os.dup2(out, 1)
        os.execv("/bin/true", ["true"])
    finally:
        os._exit(127)


def by_python_fork(flags: int, at_eof: bool) -> Callable[[], None]:
    """A Python fork; the answer when the pipe closes (at_eof) or when the child is reaped."""

    def run() -> None:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(flags, w)
        os.close(w)
        if at_eof:
            os.read(r, 1)
            os.close(r)  # the waiter is reaped later, outside the timing
        else:
            os.close(r)
            os.waitpid(pid, 0)

    return run


def main(n: int) -> None:
    ns = NEWNS | NEWPID | NEWIPC
    cases: dict[str, Callable[[], None]] = {
        "Python fork + exec, no namespaces": by_python_fork(0, at_eof=False),
        "Python fork, mnt+pid+ipc, fork, /proc; at reaping": by_python_fork(ns, at_eof=False),
        "Python fork, mnt+pid+ipc, fork, /proc; at EOF": by_python_fork(ns, at_eof=True),
    }
    if shutil.which("unshare"):
        cases["unshare(1), no namespaces"] = by_unshare()
        cases["unshare(1) -m -i -p -f --mount-proc"] = by_unshare(
            "-m", "-i", "-p", "-f", "--mount-proc"
        )
    print(f"load {os.getloadavg()[0]:.2f}; medians of {n}, alternating with a plain `true`")
    for name, start in cases.items():
        base, timed = [], []
        for _ in range(n):
            t = time.perf_counter()
            plain()
            base.append(time.perf_counter() - t)
            t = time.perf_counter()
            start()
            timed.append(time.perf_counter() - t)
            while True:  # the EOF cases' children, reaped outside the timing
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
        a, b = statistics.median(base) * 1000, statistics.median(timed) * 1000
        print(f"{name:52s} {b:6.2f} ms  plain {a:5.2f} ms  {b - a:+6.2f} ms")


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("bench.sandbox_floor: run as root (it unshares without a user namespace)")
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
