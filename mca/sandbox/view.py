"""A child's view of the file system built from an allow-list: everything else is absent.

A policy with `read_only_from` (the lab's grader: student code) reads those paths and nothing
else. Landlock grants exactly them (mca/sandbox/rulesets.py); with a mount namespace the child
gets a new root, an empty tmpfs where only these paths are made again: each one bound read-only
from where it is, the directories that lead to it made empty, and the symbolic links on the
way made again (so /lib64/ld-linux-x86-64.so.2 and a virtual environment's bin/python still
lead where they did). The rest of the system is not there to stat, list or open.

`layout` is decided in mca, before the fork (pure, but for looking at the paths); the child
only makes what it lists (mca/sandbox/linux.py). `python_runtime` says what an interpreter
needs to start and import its standard library.
"""

from __future__ import annotations

import glob
import os
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path

from mca.sandbox.linux import KEEP_DIR as DIR
from mca.sandbox.linux import KEEP_FILE as FILE
from mca.sandbox.linux import KEEP_LINK as LINK
from mca.sandbox.linux import KEEP_TREE as TREE
from mca.sandbox.linux import SYS_PIVOT_ROOT
from mca.sandbox.linux import VIEW_MASK as MASK
from mca.sandbox.linux import VIEW_TMPFS as TMPFS
from mca.sandbox.linux import VIEW_WRITABLE as WRITABLE
from mca.sandbox.mounts import locked_flags
from mca.sandbox.probe import Mechanisms
from mca.sandbox.rules import inside

__all__ = [
    "DIR",
    "FILE",
    "LINK",
    "MASK",
    "TMPFS",
    "TREE",
    "WRITABLE",
    "allow_list_held",
    "layout",
    "not_runtime",
    "python_runtime",
]

# What one entry of the view is (the kinds mca/sandbox/linux.py makes): an empty directory on
# the way, a symbolic link made again, a file or a tree bound read-only from the same path
# outside, a tree bound writable, a path inside a bound tree covered.
Entry = tuple[int, bytes, bytes, int]  # (kind, path, link target, mount flags to keep)
MAX_LINKS = 40  # symbolic links followed for one path (as the kernel's own limit)
# Inside the standard library, never in the view: what pip installs there (a system Python
# keeps its site-packages under its stdlib directory).
NOT_STDLIB = ("site-packages", "dist-packages")
DEVICES = ("/dev/null", "/dev/urandom", "/dev/zero")


def layout(
    readable: Iterable[Path],
    writable: Iterable[Path] = (),
    hidden: Iterable[Path] = (),
    size: tuple[int, int] | None = None,
    rights: int = 0,
) -> tuple[Entry, ...]:
    """The entries that make the view: every readable path (as given: a link on the way is
    made again and followed) and every writable one, shallowest first; a path inside another
    bound one comes with it, but for what `hidden` names there (covered: a directory by an
    empty one nobody may open, a file by /dev/null). Paths that do not exist are left out.
    With a `size` (bytes, entries), each writable path is a tmpfs of that size instead, and
    the child grants it Landlock's `rights` (its flags: a new inode, which no rule names)."""
    kinds: dict[str, tuple[int, str]] = {}
    bound: list[str] = []

    def add(path: str, kind: int, links: int = 0) -> None:
        parts = [p for p in os.path.normpath(path).split("/") if p]
        current = ""
        for i, name in enumerate(parts):
            current += "/" + name
            last = i == len(parts) - 1
            if os.path.islink(current):
                if links >= MAX_LINKS:
                    return
                try:
                    target = os.readlink(current)
                except OSError:
                    return
                kinds.setdefault(current, (LINK, target))
                rest = os.path.join(os.path.dirname(current), target, *parts[i + 1 :])
                add(os.path.normpath(rest), kind, links + 1)
                return
            if not os.path.lexists(current):
                return
            if last:
                is_dir = os.path.isdir(current)
                bound_kind = kind if kind in (WRITABLE, TMPFS) else TREE if is_dir else FILE
                kinds[current] = (bound_kind, tmpfs_options(size) if kind == TMPFS else "")
                bound.append(current)
            else:
                kinds.setdefault(current, (DIR, ""))

    for p in readable:
        add(os.path.abspath(p), TREE)
    for p in writable:
        add(os.path.abspath(p), WRITABLE if size is None else TMPFS)
    out: list[Entry] = []
    for path in sorted(kinds, key=lambda p: (p.count("/"), p)):
        kind, target = kinds[path]
        if any(b != path and inside(path, b) for b in bound):
            continue  # it comes with the tree it is in
        flags = rights if kind == TMPFS else 0
        if kind in (FILE, TREE):
            try:
                flags = locked_flags(path)
            except OSError:
                continue
        out.append((kind, os.fsencode(path), os.fsencode(target), flags))
    for h in sorted({os.path.realpath(h) for h in hidden}, key=lambda p: (p.count("/"), p)):
        if os.path.exists(h) and any(b != h and inside(h, b) for b in bound):
            out.append((MASK, os.fsencode(h), b"d" if os.path.isdir(h) else b"", 0))
    return tuple(out)


def tmpfs_options(size: tuple[int, int] | None) -> str:
    """A sized tmpfs's mount options: its bytes, and its entries (its own root is one)."""
    total, entries = size or (1, 1)  # never 0: a tmpfs of size 0 has no limit at all
    return f"size={max(total, 1)},nr_inodes={max(entries, 1) + 1},mode=700"


def python_runtime() -> tuple[Path, ...]:
    """What this interpreter reads to start and to import its standard library (but what
    `not_runtime` names): the executable as named and as it is, a virtual environment's pyvenv.cfg,
    the stdlib and its lib-dynload, libpython, the system's shared libraries and the loader
    (/usr/lib, /lib64 ...), the loader's cache, and the devices a program writes to."""
    exe = sys.executable
    out = [exe, os.path.realpath(exe)]
    for d in (os.path.dirname(exe), os.path.dirname(os.path.dirname(exe))):
        cfg = os.path.join(d, "pyvenv.cfg")
        if os.path.isfile(cfg):
            out.append(cfg)
    for d in _stdlib_dirs():
        out.append(d)
        dynload = os.path.join(d, "lib-dynload")
        if os.path.isdir(dynload):
            out.append(dynload)
    libdir = sysconfig.get_config_var("LIBDIR")
    for where in {str(libdir or ""), os.path.join(sys.base_prefix, "lib")} - {""}:
        out += sorted(glob.glob(os.path.join(glob.escape(where), "libpython*")))
    out += _shared_libraries()
    out += ["/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32"]
    out += ["/etc/ld.so.cache", *DEVICES]
    return tuple(Path(p) for p in dict.fromkeys(out) if os.path.lexists(p))


def _shared_libraries() -> list[str]:
    """The shared libraries this interpreter has loaded, wherever they are (a conda or
    Homebrew Python's libz and libffi live beside it): /proc/self/maps names them. Not what
    pip installed (a package's own libraries)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = {line.split(None, 5)[5] for line in lines if len(line.split(None, 5)) == 6}
    return sorted(
        p
        for p in found
        if p.startswith("/")
        and (p.endswith(".so") or ".so." in os.path.basename(p))
        and not any(part in NOT_STDLIB for part in p.split("/"))
    )


def _stdlib_dirs() -> list[str]:
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    dirs = {os.path.dirname(os.__file__)}
    dirs |= {sysconfig.get_path(key, vars=base) for key in ("stdlib", "platstdlib")}
    return sorted(d for d in dirs if os.path.isdir(d))


def not_runtime() -> tuple[Path, ...]:
    """What pip installs inside the standard library's directory (a system Python keeps its
    site-packages there): left out of `python_runtime`'s trees (the child reads none of it)."""
    return tuple(
        Path(d, name) for d in _stdlib_dirs() for name in NOT_STDLIB if os.path.isdir(Path(d, name))
    )


def allow_list_held(mech: Mechanisms, pivot_root: int = SYS_PIVOT_ROOT) -> bool:
    """Whether these mechanisms hold a policy's `read_only_from` (Landlock grants only it, or
    namespaces pivot into a view of it: `pivot_root`, the system call's number here, -1 for
    none); without either it would be a deny list."""
    return mech.landlock_abi >= 1 or (mech.user_namespaces and pivot_root >= 0)
