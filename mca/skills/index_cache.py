"""A cache of the description index's documents in $MCA_HOME, so the judgment's index over
thousands of skills is built from what was indexed before: turning a skill's name and
description into terms is most of the cost, and it changes only when they do.

Entries are keyed by a SHA-256 of the skill's name, description and body length, so an edited
skill is indexed again. The body is not hashed: that would cost a pass over every body at
every start (~28 ms for 2,000 bodies of public skills' median size), so an edit that keeps a
body's length to the character is seen only by the checks below.

An entry holds the terms by field and where the body's "when to use" / "do not use" sections
start (mca.skills.sections), found when the skill was indexed. The file is mca's own state
read back as untrusted data: a damaged or foreign file is ignored and rewritten, and an entry
is used only when each of its offsets is such a heading in the body as it is now, and every
term in it is found in the text of the field it is filed under (the description, plus for
`when` and `neg` the sections at those offsets, read again: a short read, not a search) with a
count that text could give (a stem is the start of a word of that text, or an English word
the glossary gives for its Chinese, Japanese or Korean words). A poisoned entry can therefore
never make a skill match a word its author did not write; it is dropped, and the skill
indexed again.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mca.skills import sections
from mca.skills.cache import load_entries, store_entries
from mca.skills.model import Skill
from mca.skills.relevance import FIELDS, Doc, make_doc
from mca.skills.terms import MAX_TERM, MAX_TEXT, glossed

KEY = "docs5"  # the cache file's section: bump when Doc or terms() change
MAX_TERMS = 4096  # per field
FIELD_SET = frozenset(FIELDS)


def doc_key(skill: Skill) -> str:
    h = hashlib.sha256()
    for part in (skill.name, skill.description, str(len(skill.body))):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def to_json(doc: Doc) -> dict[str, Any]:
    return {"fields": doc.fields, "sections": list(doc.offsets)}


def _texts(skill: Skill, use: str, avoid: str) -> dict[str, str]:
    """The lowered text each field's terms must be found in (`use` and `avoid`: the body's
    sections)."""

    def low(text: str) -> str:
        return unicodedata.normalize("NFKC", text).lower()

    desc = low(skill.description[:MAX_TEXT])
    when = f"{desc}\n{low(use)}" if use else desc
    return {"name": low(skill.name), "desc": desc, "neg": f"{when}\n{low(avoid)}", "when": when}


def from_json(raw: Any, skill: Skill) -> Doc | None:
    """The cached document, or None when it is not one indexing this skill could give: its
    offsets the body's section headings, each term found in its field's text at least as
    often as counted (a stem is the start of a word; "study" may stand for "studies")."""
    if type(raw) is not dict or not raw.keys() <= {"fields", "sections"}:
        return None
    fields, offsets = raw.get("fields"), raw.get("sections", [])
    if type(fields) is not dict or not fields.keys() <= FIELD_SET or type(offsets) is not list:
        return None
    found = sections.read(skill.body, offsets)
    if found is None:
        return None
    texts = _texts(skill, *found)
    glossary: dict[str, dict[str, int]] = {}  # text -> the English its CJK words give
    for f, tf in fields.items():
        if type(tf) is not dict or len(tf) > MAX_TERMS:
            return None
        text = texts[f]
        for t, c in tf.items():
            if type(c) is not int or c < 1 or len(t) > MAX_TERM:
                return None
            if text.count(t) < c and not (t[-1:] == "y" and text.count(t[:-1]) >= c):
                if text not in glossary:
                    glossary[text] = glossed(text)
                if text.count(t) + glossary[text].get(t, 0) < c:
                    return None
    return Doc(fields, tuple(offsets))


class IndexCache:
    """A DocSource (mca.skills.trigger) backed by a file; saves what this run used."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.old: dict[str, Any] | None = None  # read on first use: most sessions start idle
        self.dropped = 0  # entries that were not what indexing the skill gives

    def __call__(self, skills: Sequence[Skill]) -> list[Doc]:
        if self.old is None:
            self.old = load_entries(self.path, KEY) if self.path is not None else {}
        docs: list[Doc] = []
        new: dict[str, Any] = {}
        dropped = 0
        for skill in skills:
            key = doc_key(skill)
            raw = self.old.get(key)
            doc = from_json(raw, skill) if raw is not None else None
            if doc is None:
                dropped += raw is not None
                doc = make_doc(skill.name, skill.description, skill.body)
                raw = to_json(doc)
            new[key] = raw
            docs.append(doc)
        self.dropped += dropped
        if set(new) != set(self.old) or dropped:
            self._save(new)
        return docs

    def _save(self, entries: dict[str, Any]) -> None:
        if self.path is not None:
            store_entries(self.path, KEY, entries)
            self.old = entries
