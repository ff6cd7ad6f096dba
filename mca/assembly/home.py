"""What a session keeps in $MCA_HOME: its ids, the event log, the workspace store and the saved
conversation; when $MCA_HOME cannot be used, the workspace store goes to a private temporary
directory and the rest stays off."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from mca.config.settings import Settings
from mca.events import EventSink, Notice
from mca.fs.careful import private_dir
from mca.state.conversations import SessionStore, prune_saved
from mca.state.log import SessionLog, prune_logs
from mca.workspace.store import WorkspaceStore, store_dir
from mca.workspace.walk import Caps


def new_ids() -> tuple[str, str]:
    """(started stamp, short session id). The stamp has microseconds: sessions started in the
    same second still sort in the order they started (undo walks back in that order)."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}"
    return stamp, secrets.token_hex(3)


def prepare_home(home: Path) -> str:
    """'' when $MCA_HOME is a usable private directory, else what is wrong with it."""
    try:
        if home.exists() and not home.is_dir():
            return "it is not a directory"
        private_dir(home)
        if not os.access(home, os.W_OK | os.X_OK):
            return "not writable"
    except OSError as e:
        return e.strerror or str(e)
    return ""


def open_log(settings: Settings, name: str, on_disk: bool, show: EventSink) -> SessionLog:
    """The session's event log (old logs pruned); a log that fails later says so via `show`."""
    path = settings.home / "logs" / f"{name}.jsonl"
    log = SessionLog(
        path if on_disk else None,
        secrets=settings.secrets,
        on_fail=lambda message: show(Notice(f"warning: {message}")),
    )
    if log.path is not None:
        prune_logs(path.parent)
    return log


def open_workspace(
    settings: Settings, sid: str, started: str, home_problem: str
) -> tuple[WorkspaceStore, list[str]]:
    """The workspace's store in $MCA_HOME (a private temporary one when that is unusable),
    started: the session's lock taken, old records pruned; and what to tell the person."""
    ws = settings.workspace
    caps = Caps(file=settings.checkpoint_file_cap, total=settings.checkpoint_cap)
    if not home_problem:
        store = WorkspaceStore(ws, store_dir(settings.home, ws), sid, started, caps)
        return store, store.start()
    store = WorkspaceStore.in_temp(ws, sid, started, caps)
    notice = (
        f"warning: MCA_HOME {settings.home} cannot be used ({home_problem}): the session log,"
        f" calibration and history are off, and /undo only covers this session (snapshots in"
        f" {store.base.parent})"
    )
    return store, [notice, *store.start()]


def open_store(settings: Settings, sid: str, on_disk: bool) -> SessionStore:
    """Where the conversation is saved after each turn (nowhere when not on disk)."""
    if not on_disk:
        return SessionStore(None, "", Path(), "")
    where = settings.home / "sessions"
    prune_saved(where)  # the conversations used last stay
    return SessionStore(where, sid, settings.workspace, settings.model, settings.secrets)
