"""Which wall a sandboxed command ran into, read from what it printed (pure).

A command that failed on the sandbox's walls can be offered again with exactly the right it
lacked: the network, or writing the protected paths (as `git commit` must). The person decides;
nothing here widens anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mca.sandbox.policy import PROTECTED_NAMES, Grant

__all__ = ["DENIED", "NETWORK_HINT", "NETWORK_SIGNS", "needed"]

# What programs print when there is no network: a new network namespace has no route and no
# DNS, and its loopback is its own (a host service on localhost refuses); Landlock refuses TCP
# with EACCES.
NETWORK_SIGNS = re.compile(
    r"Network is unreachable|Could not resolve host|Temporary failure in name resolution"
    r"|Name or service not known|nodename nor servname|getaddrinfo|ENETUNREACH|EAI_AGAIN"
    r"|Failed to establish a new connection|\[Errno 101\]|Could not connect to"
    r"|unable to access '(?:https?|git)://|Connection refused|ECONNREFUSED|\[Errno 111\]"
    # Landlock's TCP refusal (no namespaces): EACCES from connect
    r"|connect[^\n]*\n?[^\n]*(?:Permission denied|EACCES|\[Errno 13\])|EACCES[^\n]*connect",
    re.IGNORECASE,
)
DENIED = re.compile(r"Read-only file system|Permission denied|Operation not permitted|EROFS")
NETWORK_HINT = (
    "the sandbox has no network: to allow it, start mca with --allow-network (or set"
    " network = true in config.toml)"
)


def _mentions_protected(line: str) -> bool:
    return any(f"{name}/" in line or line.rstrip().endswith(name) for name in PROTECTED_NAMES)


def needed(output: str, notes: Sequence[str], *, network: bool, failed: bool = True) -> Grant:
    """The rights the command lacked (an empty Grant when it hit no wall we can name). What a
    command that succeeded printed is not read: a test suite may print "Connection refused"
    on purpose. Protected paths the sandbox had to put back (`notes`) count either way."""
    wants_net = failed and not network and bool(NETWORK_SIGNS.search(output))
    wants_write = bool(notes) or (
        failed
        and any(DENIED.search(line) and _mentions_protected(line) for line in output.splitlines())
    )
    return Grant(network=wants_net, write_protected=wants_write)
