"""Which family of scripts a sentence is written in: Latin, CJK (Chinese, Japanese, Korean) or
other (Cyrillic, Greek, Arabic, Devanagari, Thai, ...). Pure data, no I/O.

The judgment's false activations are measured and bounded per family (issue 35), because its
CJK matching (character pairs and a glossary) errs differently from its English matching.

A sentence's family is the one most of its words are in. Spaced scripts count a word per run
of letters; unspaced ones (Chinese and Japanese characters, kana, Hangul syllables) a word per
character, since a Han character is nearer an English word than a letter is: "帮我用
deep-review-loop 检查这份长文档" is a Chinese sentence naming a skill (10 to 3), though it
has more Latin letters. A tie goes to the family that is not Latin (a user who writes half
in their own language writes in it); a sentence with no letters at all is "other".
"""

from __future__ import annotations

import unicodedata

LATIN, CJK, OTHER = "latin", "cjk", "other"
FAMILIES = (LATIN, CJK, OTHER)
# Prefixes of Unicode character names (unicodedata.name) of the CJK family's letters.
_CJK_NAMES = ("CJK ", "HIRAGANA", "KATAKANA", "HANGUL", "HALFWIDTH KATAKANA", "HALFWIDTH HANGUL")


def letter_family(ch: str) -> str | None:
    """The family of one character, or None if it is not a letter."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    name = unicodedata.name(ch, "")
    if name.startswith("LATIN ") or name.startswith("FULLWIDTH LATIN "):
        return LATIN
    if name.startswith(_CJK_NAMES):
        return CJK
    return OTHER


def family(text: str) -> str:
    """The script family most of the text's words are in (LATIN, CJK or OTHER)."""
    words = dict.fromkeys(FAMILIES, 0)
    previous: str | None = None  # the family of the letter before, if the last was a letter
    for ch in text:
        f = letter_family(ch)
        if f == CJK or (f is not None and f != previous):
            words[f] += 1  # an unspaced character, or a run of spaced letters starting
        previous = f
    if not any(words.values()):
        return OTHER
    return max((CJK, OTHER, LATIN), key=lambda f: words[f])  # ties: the first, not Latin
