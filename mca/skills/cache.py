"""A cache of parsed SKILL.md files in $MCA_HOME, so start-up with thousands of skills costs a
walk and a stat per file, not a read and a parse per file.

An entry is used only while the file's (inode, size, mtime, ctime) are unchanged, and ctime
cannot be set back by any ordinary process, so an edited or replaced file is always parsed
again. Only the production parser's results are kept (the lab's starter parsers bypass it),
and only clean ones (a file with diagnostics is parsed every time).

The cache is mca's own state, read back as untrusted data: a damaged or foreign file is ignored
and rewritten, and an entry is used only when it is what parsing the file gives: the file is
read (a read and a hash, not a parse), its SHA-256 must be the entry's, and every text in the
fields must stand in the file's frontmatter. The body is never cached: it is cut from the file
just read, exactly as a parse cuts it. A poisoned entry is dropped and the file parsed again.

`FitsMemo` remembers whether a catalog fits its token budget, so start-up needs no tokenizer.
An answer the text could not give (a "fits" for more than MAX_CHARS_PER_TOKEN characters a
token, a "does not fit" for fewer bytes than the limit) is dropped at once and asked again.
Every other answer read from the file is audited exactly once the tokenizer is loaded, before
the catalog is first sent (`audit`); a wrong one is dropped and the catalog rebuilt.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mca.fs.careful import atomic_write, private_dir, read_regular, read_regular_stat, sha256
from mca.skills.parse import FrontmatterError, ParsedSkill, split_frontmatter

__all__ = [
    "MAX_CACHE_BYTES",
    "MAX_CHARS_PER_TOKEN",
    "MAX_ENTRY_CHARS",
    "MAX_FITS",
    "VERSION",
    "FitsMemo",
    "Key",
    "ParseCache",
    "derived_from",
    "load_entries",
    "plausible",
    "stat_key",
    "store_entries",
]

VERSION = 4  # 1: entries without the file's hash; 2: with the body; 3: with diagnostics
MAX_ENTRY_CHARS = 32 * 1024  # a larger SKILL.md is parsed every time
MAX_CACHE_BYTES = 16 * 1024 * 1024
MAX_CHARS_PER_TOKEN = 6  # a catalog averages about 4.5 characters a token
Key = list[int]


def stat_key(st: os.stat_result) -> Key:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _to_json(p: ParsedSkill) -> dict[str, Any]:
    return {"fields": p.fields, "lines": p.key_lines}  # only clean parses are kept


def _from_json(raw: Any, body: str) -> ParsedSkill:
    if type(raw) is not dict or raw.keys() != {"fields", "lines"}:
        raise ValueError("not an entry this version writes")
    fields, lines = raw["fields"], raw["lines"]
    if type(fields) is not dict or type(lines) is not dict:
        raise ValueError("not an entry this version writes")
    return ParsedSkill(fields, body, [], lines)


def _unfound(value: Any, head: str) -> list[str] | None:
    """Every text in a parsed value (keys too) that `head` does not hold as it is, or None for
    a value YAML never gives (one pass, exact types: thousands of entries at start-up)."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        kind = type(v)
        if kind is str:
            if v not in head:
                out.append(v)
        elif kind is list:
            stack += v
        elif kind is dict:
            for k in v:
                if type(k) is not str:
                    return None
                if k not in head:
                    out.append(k)
            stack += v.values()
        else:
            return None
    return out


def _words(text: str) -> str:
    return " ".join(text.split())


def _fields_from(parsed: ParsedSkill, head: str) -> bool:
    """Every field's text within the frontmatter (folded lines compared word by word), no
    diagnostics, sane line numbers."""
    if parsed.diagnostics:
        return False
    lines = head.count("\n") + 2
    if not all(type(n) is int and 1 <= n <= lines for n in parsed.key_lines.values()):
        return False
    # A text found as it is is found word by word too (a piece of the frontmatter folds to a
    # piece of the folded frontmatter), so only the rest are folded: folded or escaped values
    folded = _unfound(parsed.fields, head)
    if folded is None:
        return False
    if folded:
        words = _words(head)
        return all(_words(t) in words for t in folded)
    return True


def derived_from(parsed: ParsedSkill, text: str) -> bool:
    """Could parsing `text` have given `parsed`? The body exactly, and the fields as
    `_fields_from` checks them."""
    try:
        head, body, _ = split_frontmatter(text)
    except FrontmatterError:
        return False
    return parsed.body == body and _fields_from(parsed, head)


def load_entries(path: Path, key: str) -> dict[str, Any]:
    """The entries under `key` of a cache file of this version, or {} (a damaged or foreign
    file is ignored, and rewritten by the next save)."""
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(read_regular(path, cap=MAX_CACHE_BYTES))
        if isinstance(data, dict) and data.get("version") == VERSION:
            entries = data.get(key)
            return entries if isinstance(entries, dict) else {}
    return {}


def store_entries(path: Path, key: str, entries: dict[str, Any]) -> None:
    """Write a cache file, 0600 (best effort: a cache that cannot be written is just slower)."""
    data = json.dumps({"version": VERSION, key: entries}, separators=(",", ":"))
    if len(data) > MAX_CACHE_BYTES:
        return
    with contextlib.suppress(OSError):
        private_dir(path.parent)
        atomic_write(path, data.encode("utf-8", "backslashreplace"), 0o600)


class ParseCache:
    """Parsed skills by path; `save` writes back what this run used (and nothing else)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.new: dict[str, Any] = {}
        self.changed = False
        self.dropped = 0  # entries that were not what their file gives

    @functools.cached_property
    def old(self) -> dict[str, Any]:
        """The entries on disk, read on first use: inside the scan, where collection is paused
        (thousands of entries, every one kept until the scan ends)."""
        return {} if self.path is None else load_entries(self.path, "entries")

    def get(self, path: Path) -> ParsedSkill | None:
        """The cached parse of a SKILL.md, when its entry is what the file gives (the file is
        read, never followed through a symlink: its fstat is the entry's key)."""
        entry = self.old.get(str(path))
        if not isinstance(entry, list) or len(entry) != 3:
            return None
        try:
            data, st = read_regular_stat(path, cap=MAX_ENTRY_CHARS)
            if entry[0] != stat_key(st):
                return None
            head, body, _ = split_frontmatter(data.decode("utf-8", "replace"))
            parsed = _from_json(entry[2], body)
        except (OSError, FrontmatterError, KeyError, TypeError, ValueError):
            return None
        if entry[1] != sha256(data) or not _fields_from(parsed, head):
            self.dropped += 1  # poisoned, or damaged: parsed again, and the entry replaced
            return None
        self.new[str(path)] = entry
        return parsed

    def put(self, path: Path, st: os.stat_result, parsed: ParsedSkill) -> None:
        if st.st_size > MAX_ENTRY_CHARS or parsed.diagnostics:
            return
        try:
            data = read_regular(path, cap=MAX_ENTRY_CHARS)
        except OSError:
            return
        if derived_from(parsed, data.decode("utf-8", "replace")):  # not changed meanwhile
            self.new[str(path)] = [stat_key(st), sha256(data), _to_json(parsed)]
            self.changed = True

    def save(self) -> None:
        """Write the entries this run used, when anything changed (best effort)."""
        if self.path is None or not (self.changed or set(self.old) != set(self.new)):
            return
        store_entries(self.path, "entries", self.new)


MAX_FITS = 512  # answers kept: a few dozen per catalog fitted


def plausible(text: str, limit: int, fits: bool) -> bool:
    """Could a tokenizer have said this? A token is at least one byte, and a catalog's text is
    never MAX_CHARS_PER_TOKEN characters a token on average."""
    if fits:
        return len(text) <= limit * MAX_CHARS_PER_TOKEN
    return len(text.encode("utf-8", "surrogatepass")) > limit


class FitsMemo:
    """Whether a text fits a token limit, remembered across runs: fitting the same catalog again
    (the same skills, the same budget) needs no tokenizer, which costs ~0.35 s to load.

    Keys are the encoding, the limit and a SHA-256 of the text, so an answer is only reused for
    exactly the question it answered. Damaged or foreign files are ignored and rewritten."""

    def __init__(
        self,
        path: Path | None,
        encoding: str,
        fits: Callable[[str, int], bool],
        trust: bool = True,
    ) -> None:
        """trust=False: the file proved wrong; every answer is asked again, the file rewritten."""
        self.path, self.encoding, self.fits = path, encoding, fits
        self.known: dict[str, bool] = {}
        self.unchecked: dict[str, tuple[str, int]] = {}  # answers taken on the file's word
        self.changed = not trust
        if path is not None and trust:
            answers = load_entries(path, "answers")
            self.known = {k: v for k, v in answers.items() if isinstance(v, bool)}

    def __call__(self, text: str, limit: int) -> bool:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        key = f"{self.encoding}:{limit}:{digest}"
        answer = self.known.pop(key, None)
        if answer is not None and not plausible(text, limit, answer):
            answer = None  # poisoned: asked again, and the answer replaced
        if answer is None:
            answer, self.changed = self.fits(text, limit), True
            self.unchecked.pop(key, None)
        else:
            self.unchecked[key] = (text, limit)
        self.known[key] = answer  # most recently used last
        return answer

    @property
    def pending(self) -> bool:
        """Whether answers read from the file were used and not yet checked."""
        return bool(self.unchecked)

    def audit(self) -> int:
        """Ask the tokenizer every answer that was taken from the file; a wrong one is replaced
        and saved. Returns how many were wrong (a catalog built on them must be rebuilt)."""
        wrong = 0
        for key, (text, limit) in self.unchecked.items():
            answer = self.fits(text, limit)
            if self.known.get(key) is not answer:
                self.known[key], self.changed, wrong = answer, True, wrong + 1
        self.unchecked.clear()
        self.save()
        return wrong

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        store_entries(self.path, "answers", dict(list(self.known.items())[-MAX_FITS:]))
