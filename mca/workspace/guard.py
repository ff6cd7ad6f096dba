"""The protected paths' guard: what a command did to `.git/`, `.mca/` and `.agents/skills/`.

Landlock cannot make part of a writable tree read-only. With a mount namespace mca mounts each
protected path read-only for the command; without one it records them before the command and
puts back afterwards whatever changed (file contents, modes, links, new and removed entries),
with a report. In both cases a protected path the command *created* (`git init`, a new
`.agents/skills/`) is removed afterwards: creating one needs the person's approval.

Git's object store (`.git/objects`) is not copied: objects are named by their hash, never
change and never run, and the store can be gigabytes. Instead each object file is hard-linked
into a mirror in mca's own state (same file system only; nothing is copied), so a command that
deletes or moves `.git` loses no commit: the links are put back. Other files over MAX_KEPT_BYTES
are compared by size and time only and reported, not restored.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_KEPT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    """One recorded file system entry."""

    mode: int
    size: int
    mtime_ns: int
    data: bytes | None  # a file's bytes (None: too large, or not a file)
    link: str | None  # a symlink's target


@dataclass
class Record:
    """The protected paths as they were before a command."""

    existed: dict[Path, bool] = field(default_factory=dict)
    entries: dict[Path, Entry] = field(default_factory=dict)  # empty when mounts protect them
    objects: dict[Path, Path] = field(default_factory=dict)  # object file -> its mirror link


def _entry(path: Path, keep: bool = True) -> Entry | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    data = link = None
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            link = os.readlink(path)
    elif keep and stat.S_ISREG(st.st_mode) and st.st_size <= MAX_KEPT_BYTES:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return Entry(st.st_mode, st.st_size, st.st_mtime_ns, None, None)
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_KEPT_BYTES + 1)
    return Entry(st.st_mode, st.st_size, st.st_mtime_ns, data, link)


def _walk(root: Path) -> dict[Path, Entry]:
    """Every entry below `root`, not following links; git's object files without their bytes
    (the mirror keeps them)."""
    out: dict[Path, Entry] = {}
    first = _entry(root)
    if first is None:
        return out
    out[root] = first
    if not stat.S_ISDIR(first.mode):
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = root.name != ".git" or here.relative_to(root).parts[:1] != ("objects",)
        for name in (*dirnames, *filenames):
            e = _entry(here / name, keep)
            if e is not None:
                out[here / name] = e
    return out


def record(protected: tuple[Path, ...], *, contents: bool, mirror: Path | None = None) -> Record:
    """What exists now; with `contents`, every entry's bytes too (no mount protects them), and
    git's objects linked into `mirror`."""
    rec = Record()
    for p in protected:
        rec.existed[p] = os.path.lexists(p)
        if contents and rec.existed[p]:
            rec.entries.update(_walk(p))
            if p.name == ".git" and mirror is not None:
                rec.objects.update(_mirror_objects(p / "objects", mirror))
    return rec


def _mirror_objects(objects: Path, mirror: Path) -> dict[Path, Path]:
    """Hard links to every object file (made once each; a different device: none)."""
    out: dict[Path, Path] = {}
    try:
        if os.lstat(objects).st_dev != os.stat(mirror).st_dev:
            return out
    except OSError:
        return out
    for dirpath, _, filenames in os.walk(objects, followlinks=False):
        here = Path(dirpath)
        for name in filenames:
            src = here / name
            dst = mirror / src.relative_to(objects.parent.parent)
            if not os.path.lexists(dst):
                try:
                    dst.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    os.link(src, dst, follow_symlinks=False)
                except OSError:
                    continue
            out[src] = dst
    return out


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _put_back(path: Path, e: Entry) -> bool:
    """Restore one entry; False when it cannot be (too large to have been kept)."""
    if stat.S_ISDIR(e.mode):
        if not os.path.isdir(path) or os.path.islink(path):
            _remove(path)
            os.mkdir(path)
        os.chmod(path, stat.S_IMODE(e.mode))
        return True
    if e.link is not None:
        _remove(path)
        os.symlink(e.link, path)
        return True
    if e.data is None:
        return False
    _remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(e.data)
    os.chmod(path, stat.S_IMODE(e.mode))
    os.utime(path, ns=(e.mtime_ns, e.mtime_ns), follow_symlinks=False)
    return True


def _same(a: Entry, b: Entry) -> bool:
    if stat.S_ISDIR(a.mode) and stat.S_ISDIR(b.mode):
        return a.mode == b.mode  # what is inside is compared entry by entry
    if a.data is not None or b.data is not None:
        return (a.mode, a.data, a.link) == (b.mode, b.data, b.link)
    return (a.mode, a.size, a.mtime_ns, a.link) == (b.mode, b.size, b.mtime_ns, b.link)


def restore(rec: Record, workspace: Path) -> list[str]:
    """Put the protected paths back as recorded; one line per protected path it had to mend."""
    undone: dict[Path, list[str]] = {}
    for p, existed in rec.existed.items():
        if not existed and os.path.lexists(p):
            _remove(p)
            undone.setdefault(p, []).append("created it")
    roots = [p for p, existed in rec.existed.items() if existed]
    if rec.entries:
        now: dict[Path, Entry] = {}
        for p in roots:
            now.update(_walk(p))
        for p in sorted(set(now) - set(rec.entries), key=lambda q: len(q.parts), reverse=True):
            _remove(p)
            undone.setdefault(_root_of(p, roots), []).append(f"created {p.name}")
        for p in sorted(rec.entries, key=lambda q: len(q.parts)):
            if p in rec.objects or (p in now and _same(now[p], rec.entries[p])):
                continue
            what = "changed" if p in now else "removed"
            try:
                ok = _put_back(p, rec.entries[p])
            except OSError as err:
                ok, what = False, f"{what} (not restored: {err.strerror or err})"
            note = f"{what} {p.name}" + ("" if ok else " (too large to restore)")
            undone.setdefault(_root_of(p, roots), []).append(note)
        lost = _relink(rec.objects)
        if lost:
            git = next(r for r in roots if r.name == ".git")
            undone.setdefault(git, []).append(f"removed {lost} object file{'s' * (lost != 1)}")
    return [_note(root, what, workspace) for root, what in undone.items()]


def _root_of(path: Path, roots: list[Path]) -> Path:
    return next((r for r in roots if path == r or path.is_relative_to(r)), path)


def _note(root: Path, what: list[str], workspace: Path) -> str:
    shown = str(root.relative_to(workspace)) if root.is_relative_to(workspace) else str(root)
    if what == ["created it"]:
        return f"the sandbox removed {shown}/, which the command created (a protected path)"
    listed = ", ".join(what[:3]) + (f" and {len(what) - 3} more" if len(what) > 3 else "")
    return f"the sandbox put {shown}/ back as it was (the command {listed})"


def _relink(objects: dict[Path, Path]) -> int:
    """Put back object files that are gone or replaced, from their mirror links."""
    n = 0
    for src, dst in objects.items():
        try:
            if os.path.samefile(src, dst) and not os.path.islink(src):
                continue
        except OSError:
            pass
        try:
            _remove(src)
            src.parent.mkdir(parents=True, exist_ok=True)
            os.link(dst, src, follow_symlinks=False)
            n += 1
        except OSError:
            continue
    return n
