"""Which directories above the workspace speak for the project (AGENTS.md, project skills).

Like git, the walk goes up to the first `.git`; unlike a plain walk, a directory above the
workspace counts only when it is the user's own: the `.git` and every directory on the way
must belong to the user (git's safe.directory rule: a repository someone else planted in /tmp
must not speak to your agent), and `$HOME` is never a project root for a workspace below it
(a dotfiles repository in your home does not make ~/Downloads/x part of one project). When
any of that fails, the workspace alone speaks for itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from mca.fs.careful import resolved


def mine(path: Path) -> bool:
    """The entry itself (never what a link leads to) belongs to the user running mca."""
    try:
        return os.lstat(path).st_uid == os.getuid()
    except OSError:
        return False


def project_dirs(workspace: Path, user_home: Path | None = None) -> tuple[Path, list[Path]]:
    """(the project's top, the directories from it down to the workspace, in that order)."""
    here = resolved(workspace)
    home = resolved(user_home) if user_home is not None else None
    for d in (here, *here.parents):
        if d != here and (not mine(d) or d == home):
            break
        if os.path.lexists(d / ".git"):
            if d != here and not mine(d / ".git"):
                break
            chain = [p for p in (here, *here.parents) if p.is_relative_to(d)]
            return d, chain[::-1]
    return here, [here]
