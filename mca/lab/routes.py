"""Which route a grade takes, checked before any hand-in runs: mca's sandbox, where it holds
what grading needs; or, with --unsandboxed, another account that reads neither mca's package
(the answers) nor the grader's files; else a refusal that says why. The results name the route
(mca/lab/launch.py: Isolation.route).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from mca.lab.account import Account, accounted
from mca.lab.childkit import MCA_DIR
from mca.lab.defaults import ACCOUNT
from mca.sandbox.probe import Mechanisms

__all__ = ["account_or_refuse", "sandbox_or_refuse", "secret_paths"]


def secret_paths(env: Mapping[str, str], also: Sequence[Path] = ()) -> list[Path]:
    """What a hand-in run as another account must not read: mca's package (an answer in it by
    name, too), the grader's home and mca's, and `also` (the class, the outputs)."""
    from mca.config.settings import homes

    user_home, mca_home = homes(env)
    answers = MCA_DIR / "skills" / "gates.py"
    return [MCA_DIR, answers, user_home, mca_home, *also]


def account_or_refuse(name: str, env: Mapping[str, str], also: Sequence[Path] = ()) -> Account:
    """--unsandboxed: the account each hand-in runs as, checked (mca/lab/account.py), and said."""
    account = accounted(name, secret_paths(env, also))
    sys.stderr.write(
        f"mca lab grade: --unsandboxed: each hand-in runs as {name} (uid {account.uid}), one at"
        " a time, with limits only; it cannot read mca's package or your files\n"
    )
    return account


def sandbox_or_refuse(
    mechanisms: Mechanisms | None, unsandboxed: bool, env: Mapping[str, str]
) -> Mechanisms | None:
    """The sandbox to grade in. --unsandboxed: None (then `account_or_refuse` says who student
    code runs as); without it, a machine with no sandbox refuses to grade."""
    from mca.errors import McaError
    from mca.sandbox.probe import probe

    if unsandboxed:
        return None
    mech = probe() if mechanisms is None else mechanisms
    if mech.available:
        return _contained_or_refuse(mech, env)
    raise McaError(
        f"mca lab grade: {mech.describe()}, so student code would run with your rights and"
        " could read and change your files, its classmates' and the grades. Grade inside a"
        " throwaway container or VM and add --unsandboxed there (as root: each hand-in then runs"
        f" as the account {ACCOUNT}, which must exist and not read mca's package or your files)."
    )


def _contained_or_refuse(mech: Mechanisms, env: Mapping[str, str]) -> Mechanisms:
    """Before the first hand-in: what grading needs of the sandbox, tried in a real child on
    this system as this user; refused, with what the trial saw, where it does not hold."""
    from mca.config.settings import homes  # the lab is an entry of its own: it reads the settings
    from mca.errors import McaError
    from mca.sandbox.check import check_system, refusal
    from mca.sandbox.properties import LAB_NEEDS
    from mca.sandbox.rights import Mode
    from mca.sandbox.view import allow_list_held

    user_home, mca_home = homes(env)
    missing = refusal(check_system(mech, user_home, mca_home, Mode.READ_ONLY), LAB_NEEDS)
    if not missing and not allow_list_held(mech):
        missing = (
            "reads by allow-list (no Landlock, and no private view: pivot_root is not known"
            " for this machine)"
        )
    if not missing:
        return mech
    raise McaError(
        f"mca lab grade: the sandbox here ({mech.describe()}) cannot contain student code:"
        f" {missing}. A hand-in could change what another's grade rests on. Grade where user"
        " namespaces are allowed (`mca sandbox check --lab` says when), or inside a throwaway"
        " container or VM with --unsandboxed."
    )
