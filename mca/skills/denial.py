"""Which words a sentence says it does not want: "不需要视频" (no video needed), "gws 말고"
(not gws), "ファイル編集は不要" (no file editing), "without a chart". A skill matched on them is
matched on what the person ruled out, so the judgment weighs them against it (the `denied`
feature of mca.skills.judgment), the way a description's "do not use for" clauses count
against it (mca.skills.terms.negative_text).

A cue rules out the rest of its clause (Chinese and English write the cue first) or the clause
up to it (Japanese and Korean write it after what it rules out), cut at punctuation and at most
MAX_SCOPE characters from the cue. Written from how the languages say "no", never from an eval
set's sentences. Pure functions.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from mca.skills.terms import MAX_TEXT, terms

MAX_SCOPE = 24  # characters a cue rules out, at most: about one clause's object
_CLAUSE = re.compile(r"[,.;:!?()\[\]\n，。；：！？、（）「」【】]")
# Cue first, what it rules out after it: Chinese, and English.
_BEFORE = re.compile(
    r"(?:不需要|不需|无需|無需|不用|不要|并非|並非|而不是|别用|別用|不涉及)"
    r"|\b(?:without|no\s+need\s+(?:for|to)|(?:do\s+not|don'?t|doesn'?t)\s+(?:need|want|use)"
    r"|instead\s+of|rather\s+than|not\s+using|other\s+than)\b"
)
# What it rules out first, the cue after it: Japanese, and Korean.
_AFTER = re.compile(
    r"(?:は不要|も不要|なしで|無しで|せずに|しないで|ではなく|じゃなくて"
    r"|말고|없이|아니라|아니고|빼고|필요\s*없|하지\s*말)"
)


def _clause_end(text: str, start: int) -> int:
    m = _CLAUSE.search(text, start)
    return min(m.start() if m else len(text), start + MAX_SCOPE)


def _clause_start(text: str, end: int) -> int:
    cut = [m.end() for m in _CLAUSE.finditer(text, 0, end)]
    return max(cut[-1] if cut else 0, end - MAX_SCOPE)


def _low(sentence: str) -> str:
    return unicodedata.normalize("NFKC", sentence[:MAX_TEXT]).lower()


def scopes(sentence: str) -> list[str]:
    """The parts of the sentence its cues rule out, in order."""
    return _scopes(_low(sentence))


def _scopes(low: str) -> list[str]:
    out = [low[m.end() : _clause_end(low, m.end())] for m in _BEFORE.finditer(low)]
    out += [low[_clause_start(low, m.start()) : m.start()] for m in _AFTER.finditer(low)]
    return [s for s in out if s.strip()]


@functools.lru_cache(maxsize=4096)
def denied(sentence: str) -> frozenset[str]:
    """The sentence's terms (mca.skills.terms) written only where it rules them out."""
    low = _low(sentence)
    parts = _scopes(low)
    if not parts:
        return frozenset()
    for part in parts:
        low = low.replace(part, " ")
    return frozenset(t for p in parts for t in terms(p)) - frozenset(terms(low))
