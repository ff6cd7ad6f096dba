"""What a sandboxed command may use, decided in mca before the fork: its resource limits
(RLIMIT_NPROC's room on top of this user's tasks) and, for root, the capabilities it gives up.
Split from linux.py (what the child does between fork and exec), which applies them."""

from __future__ import annotations

import os
import resource

__all__ = ["drop_list", "last_cap", "rlimits"]

KEEP_CAPS = {0, 1, 2, 3, 4, 6, 7}  # chown, dac_override, dac_read_search, fowner, fsetid, set[ug]id
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40


def drop_list(landlock: bool = True) -> tuple[int, ...]:
    """Capabilities to drop from the bounding set when mca runs as root. Without Landlock to
    bound where root may write, the two that pass over file permissions go too."""
    if os.geteuid() != 0:
        return ()
    keep = KEEP_CAPS if landlock else KEEP_CAPS - {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}
    return tuple(c for c in range(last_cap() + 1) if c not in keep)


def rlimits(
    max_processes: int,
    max_file_bytes: int,
    in_user_ns: bool,
    memory_bytes: int = 0,
    cpu_seconds: int = 0,
) -> list[tuple[int, int]]:
    """Limits for the command. RLIMIT_NPROC counts a user's tasks (processes and threads):
    inside a new user namespace that is the sandbox's own count; without one, every task of this
    user, so the room is added on top of what runs already (a browser and an editor are often
    past a thousand threads). Root is exempt from it outside a user namespace (a pids cgroup
    stands in). The room on top of this user's tasks is the spawner's to add (nproc.py):
    counting them may take lowering a process's own limit. Memory (address space) and CPU time
    are per process, when asked for (0: none)."""
    out = [(resource.RLIMIT_FSIZE, max_file_bytes), (resource.RLIMIT_CORE, 0)]
    out += [(resource.RLIMIT_AS, memory_bytes)] if memory_bytes > 0 else []
    out += [(resource.RLIMIT_CPU, cpu_seconds)] if cpu_seconds > 0 else []
    if in_user_ns:  # root in a user namespace of its own is not exempt
        _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        cap = hard if hard != resource.RLIM_INFINITY else max_processes
        out.append((resource.RLIMIT_NPROC, min(max_processes, cap)))
    return [(kind, _under_hard(kind, value)) for kind, value in out]


def _under_hard(kind: int, value: int) -> int:
    """A process may lower its hard limit, never raise it: ask no more than it has."""
    hard = resource.getrlimit(kind)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)
