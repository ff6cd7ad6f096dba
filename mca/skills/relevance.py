"""Description relevance: a BM25F index over skills' names, descriptions and body headings.

Pure data, no I/O. Texts become terms the same way for skills and sentences: NFKC, lower case,
light English stemming ("creating", "creates", "created" -> "creat"), function words dropped,
and runs of Chinese, Japanese or Korean script cut into overlapping character pairs (those
scripts write no spaces between words, so pairs are the unit that matches). The inverse
document frequency mixes the installed skills with a background of everyday English
(mca.skills.lexicon), so it means something with one skill installed as with thousands.

A description's own "do not use for ..." clauses are indexed apart: a sentence whose words are
found only there is evidence against the skill, not for it.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from mca.skills import background
from mca.skills.lexicon import common_words, stop_words

FIELDS = ("name", "desc", "head", "neg")
WEIGHTS = {"name": 3.0, "desc": 1.0, "head": 0.4}  # BM25F field weights (neg is not scored)
K1, B = 1.2, 0.5
BACKGROUND_DOCS = 200.0  # documents the background stands for
MAX_TERM = 40  # longer "words" (hashes, base64) are not terms
MAX_HEADINGS = 40
MAX_TEXT = 8192  # characters of a field that are indexed

_RUN = re.compile(r"[^\W_]+")
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)")
_HEADING = re.compile(r"^#{1,4}\s+(.+)$", re.M)
# A clause that tells when NOT to use the skill, up to the end of its sentence.
_NEG = re.compile(
    r"(?:\bnot\s+(?:for|to\s+be\s+used|intended|suitable|meant|when|use|trigger)\b"
    r"|\b(?:do\s+not|don'?t|never|avoid)\s+(?:use|trigger|invoke|load|activate)\b"
    r"|\bshould\s+not\b|\binstead\s+(?:use|of)\b|\bnot\s+(?:a|an|the)\b)"
    r"[^.;\n]*"
)
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
    out: list[str] = []
    for run in _RUN.findall(low):
        for i, part in enumerate(_CJK.split(run)):
            if not part:
                continue
            if i % 2:  # an unspaced script: overlapping pairs (a lone character stands alone)
                out += [part] if len(part) == 1 else [part[j : j + 2] for j in range(len(part) - 1)]
            elif part not in stops and 2 <= len(part) <= MAX_TERM and not part.isdigit():
                out.append(stem(part))
    return out


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
    out: dict[str, int] = {}
    for t in items:
        out[t] = out.get(t, 0) + 1
    return out


def negative_text(description: str) -> str:
    """The description's "not for / do not use for" clauses, joined."""
    return " ".join(m.group(0) for m in _NEG.finditer(description.lower()))


def headings(body: str) -> str:
    return "\n".join(m.group(1) for m in _HEADING.finditer(body[: MAX_TEXT * 4]))[:MAX_TEXT]


@functools.cache
def background_share() -> dict[str, float]:
    """term -> the share of background documents it is assumed in: its document frequency in
    public skills (mca.skills.background), or its band in the hand-written lexicon if higher."""
    out: dict[str, float] = {}
    for pair in background.TERMS.split():
        term, _, df = pair.rpartition(":")
        out[term] = int(df) / background.N_DOCS
    for word, share in common_words().items():
        t = stem(word)
        out[t] = max(out.get(t, 0.0), share)
    return out


@dataclass(frozen=True)
class Doc:
    """One skill's terms by field (term -> count); `neg` holds the not-for clauses."""

    fields: dict[str, dict[str, int]]
    pairs: frozenset[str] = frozenset()  # "a b": adjacent terms in the name or description

    @property
    def length(self) -> dict[str, int]:
        return {f: sum(self.fields.get(f, {}).values()) for f in FIELDS}


def make_doc(name: str, description: str, body: str) -> Doc:
    """Index one skill: the description minus its not-for clauses is `desc`."""
    neg = negative_text(description)
    positive = _NEG.sub(" ", description.lower()) if neg else description
    texts = {
        "name": name.replace("-", " ").replace("_", " "),
        "desc": positive,
        "head": headings(body),
        "neg": neg,
    }
    seqs = {f: terms(t) for f, t in texts.items()}
    pairs = frozenset(f"{a} {b}" for f in ("name", "desc") for a, b in itertools.pairwise(seqs[f]))
    return Doc({f: counts(seq) for f, seq in seqs.items()}, pairs)


@dataclass
class Match:
    """How one skill matched one sentence."""

    skill: int
    score: float = 0.0  # BM25F
    matched: list[str] = field(default_factory=list)  # sentence terms found, by weight
    mass: float = 0.0  # IDF of the sentence's terms found in the skill
    name_terms: int = 0  # sentence terms that are in the skill's name
    negative: float = 0.0  # IDF of sentence terms found only in not-for clauses
    pairs: int = 0  # adjacent sentence terms that are adjacent in the description too


class Index:
    """Postings over every skill's fields, and the statistics BM25F needs."""

    def __init__(self, docs: Sequence[Doc]) -> None:
        self.docs = list(docs)
        self.postings: dict[str, list[int]] = {}
        self.df: dict[str, int] = {}
        total = {f: 0 for f in FIELDS}
        for i, d in enumerate(self.docs):
            seen: set[str] = set()
            for f, tf in d.fields.items():
                total[f] += sum(tf.values())
                seen.update(tf)
            for t in seen:
                self.postings.setdefault(t, []).append(i)
                self.df[t] = self.df.get(t, 0) + 1
        n = max(len(self.docs), 1)
        self.avg = {f: max(total[f] / n, 1.0) for f in FIELDS}
        self.self_mass = [self._mass(d) for d in self.docs]

    def idf(self, term: str) -> float:
        """BM25's IDF over the installed skills plus the background's documents."""
        n = len(self.docs) + BACKGROUND_DOCS
        df = self.df.get(term, 0) + BACKGROUND_DOCS * background_share().get(term, 0.0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _mass(self, d: Doc) -> float:
        seen = set(d.fields.get("name", {})) | set(d.fields.get("desc", {}))
        return sum(self.idf(t) for t in seen) or 1.0

    def match(self, sentence_terms: Sequence[str]) -> list[Match]:
        """Every skill that shares a term with the sentence, scored."""
        wanted = dict.fromkeys(sentence_terms)
        found: dict[int, Match] = {}
        for t in wanted:
            idf = self.idf(t)
            for i in self.postings.get(t, ()):
                m = found.get(i)
                if m is None:
                    m = found[i] = Match(i)
                self._add(m, self.docs[i], t, idf)
        pairs = list(itertools.pairwise(sentence_terms))
        for m in found.values():
            doc_pairs = self.docs[m.skill].pairs
            m.pairs = sum(f"{a} {b}" in doc_pairs for a, b in pairs)
        return list(found.values())

    def _add(self, m: Match, d: Doc, t: str, idf: float) -> None:
        tf = 0.0
        for f, w in WEIGHTS.items():
            c = d.fields.get(f, {}).get(t, 0)
            if c:
                norm = 1 - B + B * sum(d.fields[f].values()) / self.avg[f]
                tf += w * c / norm
        if tf == 0.0:  # only in a not-for clause
            m.negative += idf
            return
        m.score += idf * tf / (K1 + tf)
        m.mass += idf
        m.matched.append(t)
        m.name_terms += t in d.fields.get("name", {})
