"""Running mca as an ordinary user, from a test that runs as root.

`as_user(...)` is a command prefix: tests/confine.py (the kernel refusing what it is told to)
drops to the account and runs mca's entry point under an interpreter that account can execute,
with this checkout and the test venv's packages importable. An interpreter under root's home
(pyenv's) cannot be run by anyone else; the system `python3` of the same version can use the
same packages.
"""

from __future__ import annotations

import os
import pwd
import site
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFINE = REPO / "tests" / "confine.py"
USER = "nobody"


def _candidates() -> list[str]:
    out = [sys.executable]
    system = "/usr/bin/python3"
    if os.path.exists(system):
        out.append(system)
    return out


def _same_version(python: str) -> bool:
    probe = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return probe.stdout.strip() == str(sys.version_info[:2])


@cache
def user_python() -> str | None:
    """An interpreter of this test run's version that USER can execute (None: none here)."""
    if os.geteuid() != 0:
        return None
    for python in _candidates():
        ok = subprocess.run(
            [sys.executable, str(CONFINE), "--user", USER, "--", python, "-c", "pass"],
            capture_output=True,
            timeout=60,
        )
        if ok.returncode == 0 and _same_version(python):
            return python
    return None


@cache
def can_hide_proc() -> bool:
    """Whether /proc can be hidden here (a private mount: refused where mount is, as under
    tests/confine.py --no-mount)."""
    ok = subprocess.run(
        [sys.executable, str(CONFINE), "--hide-proc", "--", "true"], capture_output=True, timeout=60
    )
    return ok.returncode == 0


def skip_unless_proc_can_be_hidden() -> None:
    if not can_hide_proc():
        pytest.skip("/proc cannot be hidden here (mounting is refused)")


def skip_reason() -> str:
    """Why as_user cannot run here ('' when it can)."""
    if os.geteuid() != 0:
        return "needs root to run mca as another account"
    if user_python() is None:
        return f"no Python {sys.version_info[0]}.{sys.version_info[1]} that {USER} may execute"
    return ""


BOOT = "import sys; sys.path[:0] = {paths!r}; from mca.cli import main; sys.exit(main())"


def as_user(*refuse: str, hide_proc: bool = True) -> list[str]:
    """The prefix that runs `mca` as USER, with the kernel refusing `refuse` (confine's flags
    without the dashes: 'no-userns', 'no-landlock', 'no-mount') and /proc hidden unless told."""
    python = user_python()
    assert python is not None, skip_reason()
    if hide_proc:
        skip_unless_proc_can_be_hidden()
    paths = [str(REPO), *site.getsitepackages()]
    flags = [f"--{r}" for r in refuse] + (["--hide-proc"] if hide_proc else [])
    confine = [sys.executable, str(CONFINE), *flags, "--user", USER, "--"]
    return [*confine, python, "-c", BOOT.format(paths=paths)]


def give(*paths: Path) -> None:
    """Make these (and everything below them) USER's."""
    entry = pwd.getpwnam(USER)
    for top in paths:
        for p in [top, *top.rglob("*")] if top.is_dir() else [top]:
            os.chown(p, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
