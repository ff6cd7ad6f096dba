"""A workspace's whole state as an oracle: every path's kind, mode and bytes (or link target),
read without following anything, and sessions that run real commands in it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mca.assembly.assemble import open_session
from mca.config.settings import load_settings
from mca.session.faces import HeadlessUI
from mca.session.session import Session
from tests.helpers import FakeModel, Reply, call, say

State = dict[str, tuple[str, int, bytes]]


def state(root: Path) -> State:
    """Every path under `root` (nothing followed): kind, permission bits, contents."""
    out: State = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), b"")
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
            else:
                out[rel] = ("special", stat.S_IMODE(st.st_mode), b"")
    return out


def session(ws: Path, *replies: Reply, **env: str) -> Session:
    """A session on `ws` (commands run unsandboxed: the oracle, not a sandbox, is the judge)."""
    values = {"MOCK": "1", "MCA_HOME": str(ws.parent / "home"), "MCA_SANDBOX": "off", **env}
    settings = load_settings(values, workspace=ws)
    return open_session(settings, HeadlessUI(), model=FakeModel(replies), log_to_disk=True)


def command_turn(command: str) -> list[Reply]:
    """A turn that runs one command, then answers."""
    return [call("run_command", command=command), say("done")]
