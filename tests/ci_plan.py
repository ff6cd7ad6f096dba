"""What CI must cover, and the proof that it covered it.

`.ci/run` takes its matrix from here, and each of its sandbox steps writes down, from inside the
confinement and as the account it runs under, the sandboxes it must run (`expect`); the tests
write the ones they ran (tests/sandbox/mechanisms.py). At the end, `check` holds the two equal:

    python -m tests.ci_plan cells                  # one line per cell: name|what it is|flags
    python -m tests.ci_plan expect FILE            # append what this cell and user must run
    python -m tests.ci_plan check EXPECTED RAN [USERS]   # exit 1, naming each difference

Every cell of the matrix runs as root and as the ordinary user. On this machine as it is
("host") root runs every distinct sandbox the machine can give (the simulated older ones
included: they are the same sandbox wherever they run); under each confinement and as the
ordinary user only what mca's probe picks there runs, since only that depends on the cell or
the uid. A sandbox run twice, a cell dropped, or a user's run lost is a difference.

Only the standard library and mca's probe: it runs under whatever interpreter CI has.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    name: str
    what: str
    flags: tuple[str, ...]  # tests/confine.py's


CELLS = (
    Cell("host", "this machine as it is", ()),
    Cell("no-userns", "no user namespaces (Docker's default, Ubuntu 23.10+)", ("--no-userns",)),
    Cell("no-landlock", "no Landlock (kernels before 5.13)", ("--no-landlock",)),
    Cell(
        "landlock-off",
        "Landlock built in, not enabled at boot",
        ("--no-landlock", "--landlock-errno", "eopnotsupp"),
    ),
    Cell("neither", "neither Landlock nor user namespaces", ("--no-landlock", "--no-userns")),
    Cell("no-mount", "user namespaces without the right to mount", ("--no-mount",)),
    Cell(
        "no-setattr",
        "no Landlock, no mount_setattr (kernels before 5.12)",
        ("--no-landlock", "--no-setattr"),
    ),
    Cell("hidden-proc", "a /proc only root may read (hidepid, some containers)", ("--hide-proc",)),
)
USERS = ("root", "user")
NONE = "-"  # a cell where no sandbox exists: the pair is planned, nothing runs

Triple = tuple[str, str, str]  # (cell, user, the sandbox's key)


def mode(cell: str, user: str) -> str:
    """MCA_TEST_MECHANISMS for a cell and user."""
    return "all" if (cell, user) == ("host", "root") else "probe"


def expected_here() -> list[Triple]:
    """What this process, in its cell and as its user, must run."""
    from tests.sandbox.mechanisms import chosen, key

    cell = os.environ.get("MCA_TEST_CELL", "host")
    user = "root" if os.geteuid() == 0 else "user"
    env = {**os.environ, "MCA_TEST_MECHANISMS": mode(cell, user)}
    keys = sorted({key(m) for m in chosen(env).values()})
    return [(cell, user, k) for k in keys] or [(cell, user, NONE)]


def read(path: str) -> set[Triple]:
    out: set[Triple] = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            cell, user, k = line.rstrip("\n").split("\t")
            out.add((cell, user, k))
    return out


def differences(expected: set[Triple], ran: set[Triple], users: Iterable[str]) -> list[str]:
    """Everything that keeps the run from covering exactly what was required."""
    out = []
    planned = {(c, u) for c, u, _ in expected}
    for cell in CELLS:
        for user in users:
            if (cell.name, user) not in planned:
                out.append(f"{cell.name} as {user}: no step ran there")
    required = {t for t in expected if t[2] != NONE}
    out += [f"{c} as {u}: {k}: required, never run" for c, u, k in sorted(required - ran)]
    out += [f"{c} as {u}: {k}: run, not required" for c, u, k in sorted(ran - required)]
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["cells"]:
        for cell in CELLS:
            print(f"{cell.name}|{cell.what}|{' '.join(cell.flags)}")
        return 0
    if argv[:1] == ["expect"] and len(argv) == 2:
        with open(argv[1], "a", encoding="utf-8") as f:
            f.writelines("\t".join(t) + "\n" for t in expected_here())
        return 0
    if argv[:1] == ["check"] and len(argv) in (3, 4):
        users = argv[3].split(",") if len(argv) == 4 else USERS
        ran = read(argv[2]) if os.path.exists(argv[2]) else set()
        problems = differences(read(argv[1]), ran, users)
        for p in problems:
            print(f"CI coverage: {p}", file=sys.stderr)
        if not problems:
            n = len({t for t in read(argv[1]) if t[2] != NONE})
            print(f"CI coverage: every required sandbox ran, each once ({n} in all)")
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
