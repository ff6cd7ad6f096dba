"""Judgment: which skills this sentence needs, scored by trust. Deterministic, offline."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mca.skills.model import Skill
from mca.tools.files import glob_match

MENTION_POINTS = 100
PATH_POINTS = 10
KEYWORD_POINTS = 3

# Something that looks like a path: has a slash, or a dotted extension.
_PATH_RX = re.compile(
    r"(?<![\w@$/.\-])(?:\./)?((?:[\w.\-]+/)*[\w\-]+(?:\.[A-Za-z0-9]{1,8})+|(?:[\w.\-]+/)+[\w.\-]*)"
)
_REF_RX = re.compile(r"(?:^|(?<=\s))@([^\s]+)")


@dataclass(frozen=True)
class Reason:
    """One reason a skill matched, with its points."""

    kind: str  # mention / path / keyword
    detail: str
    points: int

    def __str__(self) -> str:
        return f"{self.kind} {self.detail} ({self.points})"


@dataclass
class Hit:
    """A skill the sentence matched, and why."""

    skill: Skill
    reasons: list[Reason] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(r.points for r in self.reasons)

    def line(self) -> str:
        """'calc-conventions  score 13  path src/calc.js (10) + keyword "divide" (3)'."""
        return f"{self.skill.name}  score {self.score}  " + " + ".join(map(str, self.reasons))


def has_word(text: str, word: str) -> bool:
    """Whole-word, case-insensitive match for ASCII; substring for non-ASCII (no word spaces)."""
    target = word.strip()
    if not target:
        return False
    haystack, needle = text.lower(), target.lower()
    if not target.isascii():
        return needle in haystack
    # A boundary means "neither side is a letter or digit", so `node --test` still matches.
    pattern = rf"(?:^|[^a-z0-9]){re.escape(needle)}(?:$|[^a-z0-9])"
    return re.search(pattern, haystack) is not None


def mentioned(sentence: str, name: str) -> str:
    """How the user named the skill explicitly ($name, /name, or the name as a word), or ''."""
    low = sentence.lower()
    for form in (f"${name}", f"/{name}"):
        if re.search(rf"(?:^|\s){re.escape(form)}(?:$|[^\w-])", low):
            return form
    # As a word, but not inside a path or file name (calc in src/calc.js is not a mention).
    word = rf"(?<![\w./\-]){re.escape(name.lower())}(?![\w/\-]|\.\w)"
    return name if re.search(word, low) else ""


def sentence_paths(sentence: str) -> list[str]:
    """Paths written in the sentence and @references, normalised (no leading ./)."""
    found: list[str] = []
    for m in _REF_RX.finditer(sentence):
        found.append(m.group(1).rstrip(".,;:!?)'\"`"))
    for m in _PATH_RX.finditer(sentence):
        found.append(m.group(1).rstrip(".,;:!?)'\"`"))
    out: list[str] = []
    for p in found:
        p = p.removeprefix("./")
        if p and p not in out:
            out.append(p)
    return out


def judge(skills: Iterable[Skill], sentence: str, paths: Sequence[tuple[str, str]]) -> list[Hit]:
    """Score every skill; hits sorted by score, then priority, then name.

    `paths` is (path, where it came from) for the sentence, @references and last turn's files.
    Priority never decides whether a skill matched: it only orders equal scores.
    """
    hits: list[Hit] = []
    for skill in skills:
        hit = Hit(skill)
        if form := mentioned(sentence, skill.name):
            hit.reasons.append(Reason("mention", form, MENTION_POINTS))
        for pattern in skill.paths:
            match = next(((p, src) for p, src in paths if glob_match(pattern, p)), None)
            if match is not None:
                where = f", {match[1]}" if match[1] != "sentence" else ""
                hit.reasons.append(Reason("path", f"{match[0]}{where}", PATH_POINTS))
        for trigger in skill.triggers:
            if has_word(sentence, trigger):
                hit.reasons.append(Reason("keyword", f'"{trigger}"', KEYWORD_POINTS))
        if hit.reasons:
            hits.append(hit)
    hits.sort(key=lambda h: (-h.score, -h.skill.priority, h.skill.name))
    return hits
