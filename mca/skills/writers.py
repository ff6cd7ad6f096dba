"""Who can write a skill root: whoever can put a SKILL.md there decides what mca loads."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["writers"]


def _user(uid: int) -> str:
    import pwd

    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = f"uid {uid}"
    return f"you ({name})" if uid == os.geteuid() else name


def _group(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return f"gid {gid}"


def writers(path: Path, scope: str) -> str:
    """'you (alice)', 'alice, group dev, everyone', 'absent; you (alice) can create it', and for
    a root in the workspace also what its repository's history puts there. From the mode bits
    of the root, or of its nearest existing parent when it is absent (root can always write)."""
    target, absent = path, False
    while True:
        try:
            st = os.stat(target)
            break
        except OSError:
            if target == target.parent:
                return "unknown (nothing on its path can be read)"
            target, absent = target.parent, True
    who = [_user(st.st_uid)]
    if st.st_mode & stat.S_IWGRP:
        who.append(f"group {_group(st.st_gid)}")
    if st.st_mode & stat.S_IWOTH:
        who.append("everyone")
    text = ", ".join(who)
    if absent:
        text = f"absent; {text} can create it"
    if scope == "project":
        text += "; also any commit you check out"
    return text
