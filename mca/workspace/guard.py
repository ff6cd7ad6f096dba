"""The protected paths' guard: what a command did to `.git/`, `.mca/` and `.agents/skills/`,
and to every other git directory inside the workspace (mca/workspace/repos.py finds them).

Landlock cannot make part of a writable tree read-only. With a mount namespace mca mounts each
protected path read-only for the command; without one it records them before the command and
puts back afterwards whatever changed (file contents, modes, links, new and removed entries),
with a report. In both cases a protected path the command *created* (`git init`, a new
`.agents/skills/`) is removed afterwards: creating one needs the person's approval.

Git's object store (`objects/` of a git directory) is not copied: objects are named by their
hash, never change and never run, and the store can be gigabytes. Instead each object file is
hard-linked into a mirror in mca's own state (same file system only; nothing is copied), so a
command that deletes or moves `.git` loses no commit: the links are put back. Other files over
MAX_KEPT_BYTES are compared by size and time only and reported, not restored. A file whose
stamp (size, times, inode) is the one the previous record saw, and older than RACY_NS, is not
read again: its bytes are the previous record's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MAX_KEPT_BYTES = 16 * 1024 * 1024
RACY_NS = 100_000_000
_LINKED = "linked"  # a protected path now reached through a link the command made


@dataclass(frozen=True)
class Entry:
    """One recorded file system entry."""

    mode: int
    size: int
    mtime_ns: int
    data: bytes | None  # a file's bytes (None: too large, or not a file)
    link: str | None  # a symlink's target
    stamp: tuple[int, int] = (0, 0)  # ctime_ns, inode: with size and mtime, "unchanged"


@dataclass
class Record:
    """The protected paths as they were before a command."""

    existed: dict[Path, bool] = field(default_factory=dict)
    entries: dict[Path, Entry] = field(default_factory=dict)  # empty when mounts protect them
    objects: dict[Path, Path] = field(default_factory=dict)  # object file -> its mirror link
    # path -> (its folder's real path, the links on the way to it inside the workspace), then
    ways: dict[Path, tuple[str, frozenset[Path]]] = field(default_factory=dict)


def _entry(path: Path, keep: bool = True, before: Entry | None = None) -> Entry | None:
    """One entry now; a file's bytes are `before`'s when its stamp says it is unchanged."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    data = link = None
    stamp = (st.st_ctime_ns, st.st_ino)
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            link = os.readlink(path)
    elif keep and stat.S_ISREG(st.st_mode) and st.st_size <= MAX_KEPT_BYTES:
        if (
            before is not None
            and before.data is not None
            and (before.mode, before.size, before.mtime_ns, before.stamp)
            == (st.st_mode, st.st_size, st.st_mtime_ns, stamp)
            and time.time_ns() - st.st_mtime_ns > RACY_NS
        ):
            return before
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return Entry(st.st_mode, st.st_size, st.st_mtime_ns, None, None, stamp)
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_KEPT_BYTES + 1)
    return Entry(st.st_mode, st.st_size, st.st_mtime_ns, data, link, stamp)


def _is_git_dir(path: Path) -> bool:
    """A git directory (its objects/ is mirrored, not read): `.git`, or HEAD and objects/."""
    return path.name == ".git" or (
        os.path.isfile(path / "HEAD") and os.path.isdir(path / "objects")
    )


def _walk(root: Path, before: dict[Path, Entry] | None = None) -> dict[Path, Entry]:
    """Every entry below `root`, not following links; git's object files without their bytes
    (the mirror keeps them)."""
    out: dict[Path, Entry] = {}
    old = before or {}
    first = _entry(root)
    if first is None:
        return out
    out[root] = first
    if not stat.S_ISDIR(first.mode):
        return out
    git = _is_git_dir(root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = not git or here.relative_to(root).parts[:1] != ("objects",)
        for name in (*dirnames, *filenames):
            e = _entry(here / name, keep, old.get(here / name))
            if e is not None:
                out[here / name] = e
    return out


def record(
    protected: tuple[Path, ...],
    *,
    contents: bool,
    mirror: Path | None = None,
    base: Path | None = None,
    previous: Record | None = None,
) -> Record:
    """What exists now; with `contents`, every entry's bytes too (no mount protects them; a
    file unchanged since `previous` is not read again), and git's objects linked into
    `mirror`, at their place below `base` (the workspace)."""
    rec = Record()
    before = previous.entries if previous is not None else None
    for p in protected:
        rec.existed[p] = os.path.lexists(p)
        links = frozenset(a for a in _ancestors(p, base) if os.path.islink(a))
        rec.ways[p] = (os.path.realpath(p.parent), links)
        if contents and rec.existed[p]:
            rec.entries.update(_walk(p, before))
            if mirror is not None and _is_git_dir(p):
                top = base if base is not None and p.is_relative_to(base) else p.parent
                rec.objects.update(_mirror_objects(p / "objects", mirror, top))
    return rec


def _mirror_objects(objects: Path, mirror: Path, base: Path) -> dict[Path, Path]:
    """Hard links to every object file (made once each; a different device: none), kept in
    the mirror at their place below `base`."""
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
            dst = mirror / src.relative_to(base)
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


def _mover(aside: Path | None, workspace: Path) -> Callable[[Path], None]:
    """How what stands in the way goes: removed, or (`aside`) moved there, at its place below
    the workspace, so a put-back made long after the command loses nothing made since."""
    if aside is None:
        return _remove

    def move(path: Path) -> None:
        if not os.path.lexists(path):
            return
        rel = path.relative_to(workspace) if path.is_relative_to(workspace) else path.name
        dst = aside / rel
        try:
            dst.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.move(path, dst)  # a rename on one file system, else a copy
        except OSError:
            pass
        _remove(path)

    return move


def _put_back(path: Path, e: Entry, remove: Callable[[Path], None] = _remove) -> bool:
    """Restore one entry; False when it cannot be (too large to have been kept). A folder
    that held it and is gone is made again (a nested repository's, removed with it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if stat.S_ISDIR(e.mode):
        if not os.path.isdir(path) or os.path.islink(path):
            remove(path)
            os.mkdir(path)
        os.chmod(path, stat.S_IMODE(e.mode))
        return True
    if e.link is not None:
        remove(path)
        os.symlink(e.link, path)
        return True
    if e.data is None:
        return False
    remove(path)
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


def _ancestors(path: Path, base: Path | None) -> list[Path]:
    """The folders from `base` (not included) down to `path`'s own."""
    if base is None or not path.parent.is_relative_to(base):
        return []
    out, here = [], base
    for part in path.parent.relative_to(base).parts:
        here = here / part
        out.append(here)
    return out


def _mend_way(path: Path, rec: Record, workspace: Path) -> tuple[bool, list[str]]:
    """Whether `path` is reached as it was when recorded (the same real folder). A link the
    command made on the way, inside the workspace, is removed first (never followed): what
    is below it is then put back at its place, or no longer there to load."""
    real, links = rec.ways.get(path, (os.path.realpath(path.parent), frozenset()))
    if os.path.realpath(path.parent) == real:
        return True, []
    said = []
    for folder in _ancestors(path, workspace):
        if os.path.islink(folder) and folder not in links:
            with contextlib.suppress(OSError):
                os.unlink(folder)
                said.append(
                    f"made {folder.relative_to(workspace)} a link, which the sandbox removed"
                )
            break
        if not os.path.isdir(folder):
            break
    return os.path.realpath(path.parent) == real, said


def restore(rec: Record, workspace: Path, aside: Path | None = None) -> list[str]:
    """Put the protected paths back as recorded; one line per protected path it had to mend.
    Nothing is done through a link the command made: one on the way to a protected path is
    removed first; where the way still leads elsewhere, that path is said and left alone.
    With `aside`, what a put-back replaces or removes is moved there instead (mca/workspace/
    pending.py: a record put back by the next mca, after changes made since)."""
    remove = _mover(aside, workspace)
    undone: dict[Path, list[str]] = {}
    moved = set()
    for p in rec.existed:
        same, said = _mend_way(p, rec, workspace)
        if said:
            undone.setdefault(p, []).extend(said)
        if not same:
            moved.add(p)
            undone.setdefault(p, []).append(_LINKED)
    for p, existed in rec.existed.items():
        if not existed and p not in moved and os.path.lexists(p):
            remove(p)
            undone.setdefault(p, []).append("created it")
    roots = [p for p, existed in rec.existed.items() if existed and p not in moved]
    if rec.entries:
        now: dict[Path, Entry] = {}
        for p in roots:
            now.update(_walk(p))
        for p in sorted(set(now) - set(rec.entries), key=lambda q: len(q.parts), reverse=True):
            remove(p)
            undone.setdefault(_root_of(p, roots), []).append(f"created {p.name}")
        for p in sorted(rec.entries, key=lambda q: len(q.parts)):
            if p in rec.objects or (p in now and _same(now[p], rec.entries[p])):
                continue
            if _root_of(p, roots) not in roots:
                continue  # below a path whose folder became a link
            what = "changed" if p in now else "removed"
            try:
                ok = _put_back(p, rec.entries[p], remove)
            except OSError as err:
                ok, what = False, f"{what} (not restored: {err.strerror or err})"
            note = f"{what} {p.name}" + ("" if ok else " (too large to restore)")
            undone.setdefault(_root_of(p, roots), []).append(note)
        for git, lost in _relink(rec.objects, roots, remove).items():
            undone.setdefault(git, []).append(f"removed {lost} object file{'s' * (lost != 1)}")
    return [_note(root, what, workspace) for root, what in undone.items()]


def _root_of(path: Path, roots: list[Path]) -> Path:
    return next((r for r in roots if path == r or path.is_relative_to(r)), path)


def _note(root: Path, what: list[str], workspace: Path) -> str:
    shown = str(root.relative_to(workspace)) if root.is_relative_to(workspace) else str(root)
    if what == ["created it"]:
        return f"the sandbox removed {shown}/, which the command created (a protected path)"
    if _LINKED in what:
        return (
            f"the command changed a folder on the way to {shown}/ (a link now): the sandbox"
            " followed nothing through it and left it as it is; look at it before you use it"
        )
    listed = ", ".join(what[:3]) + (f" and {len(what) - 3} more" if len(what) > 3 else "")
    return f"the sandbox put {shown}/ back as it was (the command {listed})"


def _relink(
    objects: dict[Path, Path], roots: list[Path], remove: Callable[[Path], None]
) -> dict[Path, int]:
    """Put back object files that are gone or replaced, from their mirror links: how many,
    for each git directory."""
    n: dict[Path, int] = {}
    for src, dst in objects.items():
        if _root_of(src, roots) not in roots:
            continue
        try:
            if os.path.samefile(src, dst) and not os.path.islink(src):
                continue
        except OSError:
            pass
        try:
            remove(src)
            src.parent.mkdir(parents=True, exist_ok=True)
            os.link(dst, src, follow_symlinks=False)
            git = _root_of(src, roots)
            n[git] = n.get(git, 0) + 1
        except OSError:
            continue
    return n
