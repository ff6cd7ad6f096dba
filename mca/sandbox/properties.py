"""What the sandbox holds on this system, property by property, and what holds each (pure).

The mechanisms a system offers decide which property a sandboxed command meets and through
what: `expected(mechanisms, root)` says so for the banner line and docs/security.md's table;
`mca sandbox check` (check.py) then tries each one in a real sandboxed child, and what the
trial saw is the answer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from mca.sandbox import seccomp
from mca.sandbox.probe import Mechanisms

__all__ = ["LAB_NEEDS", "Expected", "Prop", "expected", "no_network", "weaker_line"]


class Prop(enum.StrEnum):
    """The properties, in the order they are shown."""

    WRITES = "writes outside the workspace"
    METADATA = "modes and times of files outside"
    SECRETS = "reads of your secrets"
    NETWORK = "the network"
    SOCKETS = "unix sockets outside the workspace"
    SURVIVORS = "processes left running"
    PROTECTED = "writes to .git/ (every repository in it) and .mca/"
    PROCESSES = "how many processes (fork bombs)"
    SIGNALS = "signals to your other processes"


@dataclass(frozen=True)
class Expected:
    """One property on this system: whether the sandbox means to hold it, and what does."""

    prop: Prop
    held: bool
    by: str


# What grading student code needs held: a hand-in that could write, chmod or signal outside,
# read what is not its own, outlive its run or fork without bound could change another's grade.
LAB_NEEDS = (
    Prop.WRITES,
    Prop.METADATA,
    Prop.SECRETS,
    Prop.SURVIVORS,
    Prop.PROCESSES,
    Prop.SIGNALS,
)


def expected(mech: Mechanisms, *, root: bool, read_only: bool = False) -> list[Expected]:
    """Each property and its mechanism, for these mechanisms (for root or another user; in
    read-only mode, where metadata calls are refused whole)."""
    if not mech.available:
        nothing = "nothing: no sandbox here, so every command asks first (auto-edit)"
        return [Expected(p, False, nothing) for p in Prop]
    ns, abi = mech.user_namespaces, mech.landlock_abi
    ll = "Landlock" if abi else ""
    return [
        Expected(Prop.WRITES, True, _both(ll, "read-only mounts" if ns else "")),
        _metadata(ns, read_only),
        Expected(Prop.SECRETS, True, _both(ll, "covered by empty mounts" if ns else "")),
        _network(ns, abi),
        _sockets(ns, abi),
        _survivors(mech, root),
        Expected(
            Prop.PROTECTED,
            True,
            "read-only bind mounts"
            if ns
            else "recorded before each command (on disk), put back however it ends (by the"
            " next mca if this one is killed)",
        ),
        _processes(mech, root),
        _signals(ns, abi),
    ]


def _both(a: str, b: str) -> str:
    return " + ".join(x for x in (a, b) if x)


def _metadata(ns: bool, read_only: bool) -> Expected:
    if ns:
        return Expected(Prop.METADATA, True, "read-only mounts")
    if read_only:
        return Expected(Prop.METADATA, True, "seccomp: no chmod, chown, utime or xattr at all")
    return Expected(Prop.METADATA, False, "nothing (Landlock does not cover chmod and utime)")


def _network(ns: bool, abi: int) -> Expected:
    if ns:
        return Expected(Prop.NETWORK, True, "a network namespace of its own")
    if seccomp.known():  # Landlock's TCP rules alone would leave UDP, raw and packet sockets
        tcp = " (and Landlock's TCP rules)" if abi >= 4 else ""
        return Expected(Prop.NETWORK, True, f"seccomp: no socket but a unix one{tcp}")
    if abi >= 4:
        return Expected(Prop.NETWORK, False, "Landlock's TCP rules: TCP only, UDP is not blocked")
    return Expected(Prop.NETWORK, False, f"nothing (Landlock ABI {abi} has no network rules)")


def no_network(mech: Mechanisms) -> str:
    """What a line that names the sandbox says of a command without the network: 'no network'
    only where nothing of it is reachable."""
    if _network(mech.user_namespaces, mech.landlock_abi).held:
        return "no network"
    return "no TCP (UDP open)" if mech.landlock_abi >= 4 else "network open"


def _sockets(ns: bool, abi: int) -> Expected:
    if ns:
        return Expected(
            Prop.SOCKETS, True, "where they live (/run, $XDG_RUNTIME_DIR …) covered by empty mounts"
        )
    # abstract sockets (no file: X11's, some D-Bus buses) are per network namespace, and
    # without one Landlock's scope (ABI 6) keeps them to the sandbox's own
    if abi >= 9:
        only = "Landlock ABI 9: only the workspace's and /tmp's (abstract ones: its scope)"
        return Expected(Prop.SOCKETS, True, only)
    abstract = "" if abi >= 6 else ", nor a scope for abstract ones"
    return Expected(
        Prop.SOCKETS,
        False,
        f"nothing (Landlock ABI {abi} has no rule for them{abstract}): your ssh-agent, D-Bus and"
        " any container engine socket you may use stay reachable",
    )


def _survivors(mech: Mechanisms, root: bool) -> Expected:
    if mech.user_namespaces:
        return Expected(Prop.SURVIVORS, True, "a PID namespace of its own")
    if mech.landlock_abi < 6:  # the command could end mca and its spawner before they clean up
        return Expected(
            Prop.SURVIVORS,
            False,
            f"nothing sure (Landlock ABI {mech.landlock_abi} has no signal scope: a command can"
            " end mca before it cleans up)",
        )
    if root and mech.pids_cgroup is not None:
        return Expected(Prop.SURVIVORS, True, "a pids cgroup")
    if not seccomp.known():
        return Expected(
            Prop.SURVIVORS, False, "its process group only (no seccomp program for this machine)"
        )
    return Expected(
        Prop.SURVIVORS,
        True,
        "its process group, which seccomp keeps every process in (setsid, setpgid refused)",
    )


def _processes(mech: Mechanisms, root: bool) -> Expected:
    if mech.user_namespaces:
        return Expected(Prop.PROCESSES, True, "RLIMIT_NPROC in its own user namespace")
    if root:
        if mech.pids_cgroup is not None:
            return Expected(Prop.PROCESSES, True, "a pids cgroup")
        return Expected(Prop.PROCESSES, False, "nothing (root is exempt from RLIMIT_NPROC)")
    return Expected(Prop.PROCESSES, True, "RLIMIT_NPROC above the tasks you run now")


def _signals(ns: bool, abi: int) -> Expected:
    if ns:
        return Expected(Prop.SIGNALS, True, "a PID namespace (nothing outside is visible)")
    if abi >= 6:
        return Expected(Prop.SIGNALS, True, "Landlock's signal scope")
    return Expected(Prop.SIGNALS, False, f"nothing (Landlock ABI {abi} has no signal scope)")


def weaker_line(mech: Mechanisms, *, root: bool, read_only: bool = False) -> str:
    """One line for start-up when the sandbox holds less than everything ('' when it holds
    all): which properties are missing and what mca does instead."""
    if not mech.available:
        return ""  # said by the unsandboxed notice
    missing = [e for e in expected(mech, root=root, read_only=read_only) if not e.held]
    if not missing:
        return ""
    what = "; ".join(f"{e.prop}: {e.by}" for e in missing)
    return f"note: the sandbox holds less here ({mech.describe()}). {what} (mca sandbox check)"
