"""A snapshot manifest read back is untrusted data: this says whether it has exactly the shape
mca writes (plain relative paths inside the workspace, sha256 hashes, permission bits)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from mca.errors import UndoError
from mca.fsutil import sha256

HASH = re.compile(r"[0-9a-f]{64}\Z")


class BadManifest(ValueError):
    """A manifest that is not what mca writes; it is reported and never acted on."""


def check_rel(rel: Any) -> str:
    """A plain relative path inside the workspace, or BadManifest."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise BadManifest(f"bad path {rel!r}")
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or str(p) != rel or rel == ".":
        raise BadManifest(f"path {rel!r} is not a plain relative path")
    return rel


def _check_hash(value: Any, what: str, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not HASH.match(value):
        raise BadManifest(f"{what} is not a sha256 ({value!r})")


def validate_manifest(data: Any) -> dict[str, Any]:
    """The manifest if it has exactly the shape mca writes; BadManifest otherwise."""
    if not isinstance(data, dict):
        raise BadManifest(f"not a JSON object ({type(data).__name__})")
    if not isinstance(data.get("session"), str) or not isinstance(data.get("turn"), int):
        raise BadManifest("no session or turn")
    files = data.get("files")
    if not isinstance(files, list):
        raise BadManifest("no list of files")
    for f in files:
        if not isinstance(f, dict):
            raise BadManifest("a file entry is not an object")
        check_rel(f.get("path"))
        if not isinstance(f.get("existed"), bool):
            raise BadManifest(f"{f.get('path')}: 'existed' is not true or false")
        _check_hash(f.get("old"), "old", optional=not f["existed"])
        _check_hash(f.get("new"), "new", optional=False)
        for h in f.get("seen", []):
            _check_hash(h, "seen", optional=False)
        mode = f.get("mode")
        if f["existed"] and (not isinstance(mode, int) or not 0 <= mode <= 0o7777):
            raise BadManifest(f"{f['path']}: bad mode {mode!r}")
    return data


def checked_object(read: Callable[[], bytes | None], name: str, store: str) -> bytes:
    """A stored copy's bytes, checked against its name (its sha256); UndoError when it is
    missing (`read` returns None or finds no file) or damaged."""
    try:
        data = read()
    except FileNotFoundError:
        data = None
    if data is None:
        raise UndoError(f"its saved copy is missing from the {store}")
    if sha256(data) != name:
        raise UndoError("its saved copy is damaged (the content does not match its hash)")
    return data
