"""How text becomes terms, the same way for skills and sentences: NFKC, lower case, light
English stemming ("creating", "creates", "created" -> "creat"), function words dropped, and runs
of Chinese, Japanese or Korean script cut into overlapping character pairs (those scripts write
no spaces between words, so pairs are the unit that matches), plus the English words a small
glossary gives for them (mca.skills.glossary: "日历" also says "calendar", so a sentence in
Chinese can match a skill described in English); which terms are pieces of one written word
(`links`); and a description's "do not use for ..." clauses, read apart. Pure functions.
"""

from __future__ import annotations

import collections
import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence

from mca.skills.glossary import english, spans, table
from mca.skills.lexicon import stop_words
from mca.skills.words import Links

__all__ = [
    "MAX_TERM",
    "MAX_TEXT",
    "counts",
    "glossed",
    "links",
    "links_among",
    "negative_text",
    "stem",
    "surface",
    "terms",
    "without_negatives",
]

MAX_TERM = 40  # longer "words" (hashes, base64) are not terms
MAX_TEXT = 8192  # characters of a field that are indexed

_RUN = re.compile(r"[^\W_]+")
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)")
# A clause that tells when NOT to use the skill, up to the end of its sentence.
_NEG = re.compile(
    r"(?:\bnot\s+(?:for|to\s+be\s+used|intended|suitable|meant|when|use|trigger)\b"
    r"|\b(?:do\s+not|don'?t|never|avoid)\s+(?:use|trigger|invoke|load|activate)\b"
    r"|\bshould\s+not\b|\binstead\s+(?:use|of)\b|\bnot\s+(?:a|an|the)\b)"
    r"[^.;\n]*"
)
# The same in Chinese, Japanese and Korean descriptions ("不要用于 WebXR 交互", "不适用于普通网页"):
# Chinese writes the cue first, and the clause runs to the end of its sentence or an "unless"
# (除非); Japanese and Korean write it last ("…には使わない", "…에는 사용하지 마세요"), and the
# clause is the whole sentence that ends with it.
_CUE_FIRST = re.compile(
    r"不(?:要|应|應|可)?(?:用于|用於|适用于|適用於|适用|適用|适合|適合|触发|觸發)|请勿用于|請勿用於"
)
_CUE_LAST = re.compile(
    r"使わない|使用しない|使いません|使用しません|対象外|向きません"
    r"|사용하지\s*(?:마|않)|적합하지\s*않|대상이\s*아닙"
)
_SENTENCE = re.compile(r"[^。；;!?！？\n]*?(?:[。；;!?！？\n]|\.(?!\w)|$)")  # "three.js" goes on
_SUFFIXES = (("ization", "iz"), ("isation", "iz"), ("ation", "at"), ("ing", ""), ("ed", ""))


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light English stemming; anything not plain ASCII letters is left as it is."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + repl
            if repl == "" and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running -> run
            break
    if word.endswith("er") and len(word) >= 6:
        word = word[:-2]
    if word.endswith("e") and len(word) >= 4:
        word = word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The text's terms, in order (stems, and character pairs for unspaced scripts)."""
    low = unicodedata.normalize("NFKC", text[:MAX_TEXT]).lower()
    stops = stop_words()
    if _CJK.search(low) is None:  # the common case, and a quarter of the time
        return [
            stem(w)
            for w in _RUN.findall(low)
            if w not in stops and 2 <= len(w) <= MAX_TERM and not w.isdigit()
        ]
    out: list[str] = []
    for run in _RUN.findall(low):
        for i, part in enumerate(_CJK.split(run)):
            if not part:
                continue
            if i % 2:  # an unspaced script: overlapping pairs (a lone character stands alone)
                out += [part] if len(part) == 1 else [part[j : j + 2] for j in range(len(part) - 1)]
                out += [stem(w) for w in english(part)]  # and the English it says
            elif part not in stops and 2 <= len(part) <= MAX_TERM and not part.isdigit():
                out.append(stem(part))
    return out


def links(text: str) -> Links:
    """Which of the text's terms are pieces of one written word: the overlapping character
    pairs of a CJK run that follow each other (数据 and 据库 of 数据库), and a glossary word's
    English with the pairs inside it (冲突 and "conflict"). Latin words link to nothing."""
    out: Links = {}
    for part in _cjk_parts(text):
        pairs = [part[j : j + 2] for j in range(len(part) - 1)]
        ties = list(itertools.pairwise(pairs))
        ties += [(stem(eng), p) for i, j, eng in spans(part) for p in pairs[i : j - 1]]
        for a, b in ties:
            if a != b:
                out.setdefault(a, set()).add(b)
                out.setdefault(b, set()).add(a)
    return out


def links_among(found: Sequence[str]) -> Links:
    """`links` where only a text's terms are known (an indexed skill's): character pairs that
    overlap (数据, 据库) are taken as pieces of one word, and a glossary word's English goes
    with its pairs where all of them are there. A skill's CJK words then count once in its
    own mass, as a sentence's do where it matches them (mca.skills.words)."""
    have = set(found)
    pairs = sorted(t for t in have if len(t) == 2 and not t.isascii())
    starting: dict[str, list[str]] = {}
    for p in pairs:
        starting.setdefault(p[0], []).append(p)
    ties = [(a, b) for a in pairs for b in starting.get(a[1], ()) if a != b]
    for p in pairs:
        for word, eng in table().get(p[0], ()):
            inside = [word[j : j + 2] for j in range(len(word) - 1)]
            if eng and stem(eng) in have and word.startswith(p) and have.issuperset(inside):
                ties += [(stem(eng), q) for q in inside]
    out: Links = {}
    for a, b in ties:
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return out


def glossed(text: str) -> dict[str, int]:
    """The terms the glossary adds to a text (mca.skills.glossary), with their counts."""
    return counts([stem(w) for part in _cjk_parts(text) for w in english(part)])


def _cjk_parts(text: str) -> list[str]:
    """The text's runs of CJK script, normalised as `terms` reads them."""
    low = unicodedata.normalize("NFKC", text[:MAX_TEXT]).lower()
    return [p for run in _RUN.findall(low) for p in _CJK.split(run)[1::2]]


def surface(text: str) -> dict[str, str]:
    """term -> the first word of the text it came from (what `why` shows a person)."""
    low = unicodedata.normalize("NFKC", text[:MAX_TEXT]).lower()
    out: dict[str, str] = {}
    for run in _RUN.findall(low):
        for word in _CJK.split(run)[::2]:
            if word:
                out.setdefault(stem(word), word)
    return out


def counts(items: Sequence[str]) -> dict[str, int]:
    return dict(collections.Counter(items))


def _cjk_negatives(text: str) -> list[tuple[int, int]]:
    """(start, end) of the not-for clauses of a text in Chinese, Japanese or Korean."""
    if _CJK.search(text) is None:
        return []
    out = []
    for m in _SENTENCE.finditer(text):
        if _CUE_LAST.search(m.group(0)):
            out.append(m.span())
        elif cue := _CUE_FIRST.search(m.group(0)):
            unless = m.group(0).find("除非", cue.end())
            out.append((m.start() + cue.start(), m.end() if unless < 0 else m.start() + unless))
    return out


def negative_text(description: str) -> str:
    """The description's "not for / do not use for" clauses, joined (English ones, then
    Chinese, Japanese and Korean ones)."""
    low = description.lower()
    rest = _NEG.sub(" ", low)
    found = [m.group(0) for m in _NEG.finditer(low)]
    return " ".join(found + [rest[i:j] for i, j in _cjk_negatives(rest)])


def without_negatives(text: str) -> str:
    """The text, lower case, with its "not for / do not use for" clauses blanked."""
    rest = _NEG.sub(" ", text.lower())
    for i, j in reversed(_cjk_negatives(rest)):
        rest = rest[:i] + " " + rest[j:]
    return rest
