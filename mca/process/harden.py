"""Process hardening: keep mca's memory and environment (which hold API keys) from its children.

`run_command`'s children get no variable whose name is a secret's (childenv.py), but on Linux
any process of the same user could read them from /proc/<mca's pid>/environ or attach a
debugger. Marking mca non-dumpable
(prctl PR_SET_DUMPABLE 0) makes /proc/<pid>/environ, mem and ptrace refuse same-user processes.
Root (and processes with CAP_SYS_PTRACE) can still read mca's memory; so can anything started
before mca that already holds the keys (the shell that exported them). For them, mca also
overwrites its model keys in its own copy of the environment the kernel shows as
/proc/<pid>/environ (Python keeps its own copy in os.environ, which mca reads). Only those: a
child started without an environment of its own (an editor) inherits that block, and the
person's other tokens are theirs to use there.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

__all__ = ["PR_SET_DUMPABLE", "make_undumpable", "scrub_environ_block"]

PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """True when the process is now non-dumpable (Linux only; elsewhere False)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def scrub_environ_block(names: Iterable[str]) -> int:
    """Overwrite the values of these variables in the environment the kernel shows as
    /proc/self/environ (Linux; os.environ, Python's copy, keeps them). Returns how many.

    libc's `environ` points at the strings the kernel put on the stack at exec (the block it
    shows), so they are overwritten in place through it: no read of /proc, which a process may
    not be allowed."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    try:
        env = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError):
        return 0
    wanted = {n.encode() for n in names}
    done = 0
    for i in range(100_000):
        address = env[i]
        if not address:
            break
        entry = ctypes.string_at(address)
        name, eq, value = entry.partition(b"=")
        if eq and name in wanted and value:
            ctypes.memset(address + len(name) + 1, ord("x"), len(value))
            done += 1
    return done
