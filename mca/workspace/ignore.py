""".gitignore rules, as find_files and search_text honour them (like ripgrep does).

Rules come from the workspace's `.gitignore` files (each applies below its own directory) and
`.git/info/exclude`; later and deeper rules win, `!` re-includes, a trailing `/` matches only
directories, a pattern with a `/` is anchored to its file's directory, `**` spans directories.
As in git, nothing below an ignored directory is re-included. The files are untrusted input:
read as regular files only, capped, and a line that is not a valid pattern is skipped.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from mca.fs.careful import read_regular
from mca.fs.globs import UnclosedClass, translate

__all__ = ["MAX_IGNORE_BYTES", "Ignore", "Rule", "parse_rules"]

MAX_IGNORE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Rule:
    """One pattern line: where it applies and what it matches."""

    base: str  # directory of the .gitignore, relative to the root ('' for the root)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


@functools.lru_cache(maxsize=4096)
def _regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    # strict: as in git, a pattern with an unclosed [ matches nothing (the line is skipped)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + translate(pattern, strict=True) + r"(?:/.*)?\Z")


def parse_rules(text: str, base: str) -> list[Rule]:
    """The rules of one ignore file whose directory is `base`."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        negate = line.startswith("!")
        line = line[1:] if negate else line.removeprefix("\\")
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        try:
            rules.append(Rule(base, _regex(line.lstrip("/"), anchored), negate, dir_only))
        except UnclosedClass:
            continue  # git ignores such a line too
    return rules


def _read(path: Path, root: Path) -> str:
    try:
        return read_regular(path, root, cap=MAX_IGNORE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


class Ignore:
    """The ignore rules met so far on a walk from the root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rules = parse_rules(_read(root / ".git" / "info" / "exclude", root), "")

    def enter(self, rel_dir: str) -> None:
        """Read the .gitignore of a directory the walk has entered ('' for the root)."""
        path = self.root / rel_dir / ".gitignore" if rel_dir else self.root / ".gitignore"
        self.rules += parse_rules(_read(path, self.root), rel_dir)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Is this root-relative path ignored? (The last matching rule decides.)"""
        verdict = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not rel.startswith(rule.base + "/"):
                    continue
                sub = rel[len(rule.base) + 1 :]
            else:
                sub = rel
            if rule.regex.match(sub):
                verdict = not rule.negate
        return verdict
