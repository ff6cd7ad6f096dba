"""Which sandboxes the tests run their commands in here: one place, so that CI can say which ran.

`MCA_TEST_MECHANISMS` chooses:

    all    (the default) every distinct sandbox this system can give: what mca's probe picks,
           the same without Landlock, Landlock without namespaces, and the older Landlock ABIs
           kernels still in use have (1: 5.13, 3: 6.2 with no TCP rules, 5: 6.10 with no
           scopes), a cap on the ABI mca uses since a kernel cannot be made to offer less;
           two names that come to the same sandbox here run once
    probe  only what mca's probe picks here: what CI runs under each confinement of its
           matrix and as the ordinary user, where only that one depends on the system or the
           uid (the simulated ones are the same sandbox wherever they run)

With `MCA_TEST_RUNLOG` set to a file, every sandbox a test used is written there once at the
end of the run as `cell<TAB>user<TAB>key` (`MCA_TEST_CELL` names the confinement, "host" when
unset): `python -m tests.ci_plan check` compares those with the set CI must cover.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from mca.sandbox.probe import Mechanisms, probe

NAMES = (
    "namespaces",
    "namespaces-only",
    "landlock",
    "landlock-abi1",
    "landlock-abi3",
    "landlock-abi5",
)
ABIS = (1, 3, 5)

_used: set[tuple[str, str, str]] = set()
# Read once, when the tests are collected: each test runs with the MCA_* variables scrubbed
# (tests/conftest.py's clean_env), these included.
CELL = os.environ.get("MCA_TEST_CELL", "host")


def key(mech: Mechanisms) -> str:
    """A sandbox's identity: what decides how a command is contained."""
    return (
        f"landlock={mech.landlock_abi} userns={int(mech.user_namespaces)}"
        f" cgroup={int(mech.pids_cgroup is not None)} proc={int(mech.proc)}"
    )


def simulated(full: Mechanisms, landlock_only: Mechanisms) -> dict[str, Mechanisms]:
    """Every named sandbox this system can give (what it cannot is left out), each distinct
    one once, under the first of NAMES that gives it."""
    named = {
        "namespaces": full,
        "namespaces-only": dataclasses.replace(full, landlock_abi=0),
        "landlock": landlock_only,
        **{
            f"landlock-abi{abi}": dataclasses.replace(
                landlock_only, landlock_abi=min(abi, landlock_only.landlock_abi)
            )
            for abi in ABIS
        },
    }
    out: dict[str, Mechanisms] = {}
    seen: set[str] = set()
    for name in NAMES:
        mech = named[name]
        if _missing(name, mech) or key(mech) in seen:
            continue
        seen.add(key(mech))
        out[name] = mech
    return out


def _missing(name: str, mech: Mechanisms) -> bool:
    if name.startswith("namespaces"):
        return not mech.user_namespaces
    if name.startswith("landlock-abi"):
        return mech.landlock_abi < int(name[len("landlock-abi") :]) or not mech.landlock_abi
    return not mech.landlock_abi


def chosen(
    env: Mapping[str, str] | None = None, only: tuple[str, ...] = NAMES
) -> dict[str, Mechanisms]:
    """The sandboxes to run here, by MCA_TEST_MECHANISMS (see the module's docstring); `only`
    names the ones a test needs of all of them (the Landlock ABIs change nothing about some)."""
    env = os.environ if env is None else env
    which = env.get("MCA_TEST_MECHANISMS", "all")
    full = probe()
    if which == "probe":
        return {"probe": full} if full.available else {}
    if which != "all":
        raise ValueError(f"MCA_TEST_MECHANISMS={which!r}: 'all' or 'probe'")
    return {n: m for n, m in simulated(full, probe(namespaces=False)).items() if n in only}


def used(mech: Mechanisms) -> None:
    """Note that a test ran commands in this sandbox (written at the end of the run)."""
    user = "root" if os.geteuid() == 0 else "user"
    _used.add((CELL, user, key(mech)))


def write_log() -> None:
    """Append what was used to MCA_TEST_RUNLOG, if set."""
    path = os.environ.get("MCA_TEST_RUNLOG")
    if not path or not _used:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.writelines("\t".join(t) + "\n" for t in sorted(_used))
