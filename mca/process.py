"""Process hardening: keep mca's memory and environment (which hold API keys) from its children.

`run_command`'s children get no *_API_KEY variables, but on Linux any process of the same user
could read them from /proc/<mca's pid>/environ or attach a debugger. Marking mca non-dumpable
(prctl PR_SET_DUMPABLE 0) makes /proc/<pid>/environ, mem and ptrace refuse same-user processes.
Root (and processes with CAP_SYS_PTRACE) can still read everything; so can anything started
before mca that already holds the keys (the shell that exported them).
"""

from __future__ import annotations

import sys

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
