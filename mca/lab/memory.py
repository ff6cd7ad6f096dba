"""Memory shared fairly: a run's `--jobs` hand-ins, each allowed `--memory-mb`, must fit in
what the grader can use (the machine's MemAvailable, or what its cgroup's memory.max leaves),
or the kernel's OOM killer picks a child that kept to its own limit, and a classmate scores 0
for another's memory. `fit_jobs` lowers --jobs until they fit, or refuses, saying so.
"""

from __future__ import annotations

from pathlib import Path

from mca.errors import McaError

__all__ = ["fit_jobs", "per_handin", "usable_mib"]

MIB = 1024 * 1024
MIN_MB = 256  # the least a hand-in may be given


def _meminfo(path: Path) -> int | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 // MIB
    except (OSError, ValueError, IndexError):
        return None
    return None


# (the line of /proc/self/cgroup, the folder under the cgroup root, the limit's file, usage's)
_HIERARCHIES = (
    ("0::", "", "memory.max", "memory.current"),  # cgroup v2
    ("memory", "memory", "memory.limit_in_bytes", "memory.usage_in_bytes"),  # v1
)


def _cgroup_left(root: Path, own: Path) -> int | None:
    """What the tightest memory limit of this process's cgroup and its ancestors leaves."""
    try:
        lines = own.read_text().splitlines()
    except OSError:  # /proc/self unreadable (hidepid, or an account switched to by runuser)
        return None
    left: list[int] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for key, sub, limit_file, used_file in _HIERARCHIES:
            if f"{parts[0]}::" == key or (key != "0::" and key in parts[1].split(",")):
                left += _left(root / sub, parts[2], limit_file, used_file)
    return min(left) if left else None


def _left(base: Path, rel: str, limit_file: str, used_file: str) -> list[int]:
    group = base / rel.lstrip("/")
    out = []
    for folder in (group, *group.parents):
        if not folder.is_relative_to(base):
            break
        try:
            limit = (folder / limit_file).read_text().strip()
            used = int((folder / used_file).read_text().strip())
        except (OSError, ValueError):
            continue
        if limit != "max" and int(limit) < 1 << 60:  # v1 says "no limit" with a huge number
            out.append(max(int(limit) - used, 0) // MIB)
    return out


def usable_mib(
    meminfo: Path = Path("/proc/meminfo"),
    cgroups: Path = Path("/sys/fs/cgroup"),
    own: Path = Path("/proc/self/cgroup"),
) -> int | None:
    """MiB the grader's children can use now: the least of MemAvailable and what its cgroups
    leave (None: neither is known here)."""
    known = [m for m in (_meminfo(meminfo), _cgroup_left(cgroups, own)) if m is not None]
    return min(known) if known else None


def fit_jobs(jobs: int, memory_mb: int, usable: int | None, tmp_mb: int = 0) -> tuple[int, str]:
    """(jobs that fit, what to say: '' when nothing changed). McaError when one does not fit.
    `tmp_mb`: what each hand-in's /tmp may hold in memory (a tmpfs of its own: its pages are
    the machine's memory too)."""
    each = memory_mb + tmp_mb
    if usable is None or jobs * each <= usable:
        return jobs, ""
    what = f"--memory-mb {memory_mb}" + (f" + its /tmp's {tmp_mb} MiB" if tmp_mb else "")
    if each > usable:
        raise McaError(
            f"mca lab grade: {what} is more than the {usable} MiB this grader can use now: a"
            " hand-in within its limit could be killed by the system. Lower --memory-mb, or"
            " grade where more memory is free"
        )
    fit = usable // each
    return fit, (
        f"mca lab grade: --jobs {jobs} x ({what}) is more than the {usable} MiB this grader"
        f" can use: grading {fit} at a time, so no hand-in is killed for another's memory"
    )


def per_handin(given: int | None, default: int, usable: int | None) -> tuple[int, str]:
    """Each hand-in's memory: as given; or, when --memory-mb was not given, the default lowered
    to what this grader can use (never below MIN_MB), said so. A default that does not fit a
    small grader (a 768 MiB Gradescope container) is no reason to refuse a class."""
    if given is not None or usable is None or usable >= default:
        return (default if given is None else given), ""
    lowered = max(usable, MIN_MB)
    return lowered, (
        f"mca lab grade: {usable} MiB is free for hand-ins here: each may use {lowered} MiB, not"
        f" the default {default} (--memory-mb sets it)"
    )
