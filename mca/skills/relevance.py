"""Description relevance: a BM25F index over skills' names and descriptions.

Pure data, no I/O. Skills and sentences become terms the same way (mca.skills.terms: stems,
function words dropped, CJK script as character pairs plus the English the glossary gives for
it). The pieces of one written word (their pairs and their English, `links`) that a skill
matches count as one word in a Match (mca.skills.words), so a CJK sentence does not match a CJK
description term by term. The inverse document frequency mixes the installed skills with a
background (term frequencies in public skills' descriptions, mca/data/background.txt, and
everyday English, mca.skills.lexicon), so it means something with one skill installed as with
thousands (a Background value, made by mca.skills.background and passed in with the judgment's
model). The index can also hold
competitors (mca.skills.rivals) after the installed skills: they are scored, but they never
count in the IDF and are never judged.

A description's own "do not use for ..." clauses are indexed apart: a sentence whose words are
found only there is evidence against the skill, not for it.

The body's "when to use" sections (mca.skills.sections) join the `when` field and its "do not
use" sections the `neg` field. A term found only in those sections of a body never nominates a
skill and never counts as matched: it only adds to `Match.body`, which the judgment caps by the
description's own evidence, so a body that lists every common word under "When to use" cannot
make its skill fire on sentences its description does not already fit.

Tried and left out, because on the dev split they did not change recall at a given
false-activation rate: body headings as a third field (weight 0.4; reading them costs a pass
over every body), the body's sections' terms in BM25F's score too (weight 0.3 or 1), and
adjacent sentence terms found adjacent in the description (phrases).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mca.skills import sections
from mca.skills.terms import counts, links_among, negative_text, terms, without_negatives
from mca.skills.words import Links, shares

FIELDS = ("name", "desc", "neg", "when")
WEIGHTS = {"name": 3.0, "desc": 1.0}  # BM25F field weights (neg is not scored)
K1, B = 1.2, 0.5
BACKGROUND_DOCS = 200.0  # documents the background stands for

# Where a description says when to use the skill: the words after it are its trigger surface.
_WHEN = re.compile(
    r"\b(?:use\s+(?:this\s+skill\s+|it\s+)?(?:when|whenever|for|if|to)|triggers?\b|whenever"
    r"|when\s+(?:the\s+)?user|use\s+cases?|activate\s+when)",
    re.I,
)


@dataclass(frozen=True)
class Background:
    """What the IDF assumes beyond the installed skills: term -> the share of BACKGROUND_DOCS
    documents it is in (mca.skills.background makes the shipped one)."""

    share: Mapping[str, float]


@dataclass(frozen=True)
class Doc:
    """One skill's terms by field (term -> count); `neg` holds the not-for clauses, and
    `offsets` where the body's sections that fed `when` and `neg` start (mca.skills.sections)."""

    fields: dict[str, dict[str, int]]
    offsets: tuple[int, ...] = ()

    @property
    def length(self) -> dict[str, int]:
        return {f: sum(self.fields.get(f, {}).values()) for f in FIELDS}


def make_doc(name: str, description: str, body: str = "") -> Doc:
    """Index one skill: the description minus its not-for clauses is `desc`; its "use when"
    part and the body's "when to use" sections are `when`, the rest `neg`."""
    offsets = sections.find(body)
    found = sections.read(body, offsets) or ("", "")
    return Doc(
        {f: counts(terms(t)) for f, t in _field_texts(name, description, *found).items()}, offsets
    )


def _field_texts(name: str, description: str, use: str = "", avoid: str = "") -> dict[str, str]:
    """The text each field is indexed from; `use` and `avoid` are the body's sections."""
    neg = negative_text(description)
    positive = without_negatives(description) if neg else description
    use_neg = negative_text(use)  # a "when to use" list may also say what it is not for
    use_pos = without_negatives(use) if use_neg else use
    cue = _WHEN.search(positive)
    return {
        "name": name.replace("-", " ").replace("_", " "),
        "desc": positive,
        "neg": "\n".join(t for t in (neg, use_neg, avoid) if t),
        "when": "\n".join(t for t in (positive[cue.end() :] if cue else "", use_pos) if t),
    }


@dataclass
class Match:
    """How one skill matched one sentence."""

    skill: int
    score: float = 0.0  # BM25F
    matched: list[str] = field(default_factory=list)  # sentence terms found
    mass: float = 0.0  # IDF of the sentence's terms found in the skill
    rarest: float = 0.0  # the highest IDF among them
    name_terms: int = 0  # sentence terms that are in the skill's name
    negative: float = 0.0  # IDF of sentence terms found only in not-for clauses
    when: float = 0.0  # IDF of sentence terms found in the "use when ..." part
    body: float = 0.0  # IDF of sentence terms found only in the body's "when to use" sections
    words: float = 0.0  # matched words: terms linked as one written word count once (`shares`)
    share: dict[str, float] = field(default_factory=dict)  # term -> its share, where not 1


CANDIDATE_SHARE = 0.05  # a term in more of the skills than this only scores, never nominates
MAX_CANDIDATES = 64  # skills scored in full per sentence
MAX_RIVALS = 16  # competitors scored in full per sentence


def _postings(docs: Sequence[Doc], offset: int = 0) -> dict[str, list[int]]:
    """term -> the positions of the documents that have it, in order."""
    out: dict[str, list[int]] = {}
    for i, d in enumerate(docs, offset):
        for f, tf in d.fields.items():
            if f == "when":  # the description's part of it is in desc; the body's never nominates
                continue
            for t in tf:
                posting = out.setdefault(t, [])
                if not posting or posting[-1] != i:
                    posting.append(i)
    return out


class Index:
    """Postings from terms to skills, and per skill (computed when it is first a candidate)
    each term's field-weighted, length-normalised frequency: BM25F's inputs."""

    def __init__(self, docs: Sequence[Doc], rivals: Sequence[Doc], background: Background) -> None:
        self.installed = len(docs)  # docs[installed:] are competitors (mca.skills.rivals)
        self.background = background
        self.docs = [*docs, *rivals]
        self.postings = _postings(self.docs[: self.installed])
        self.rival_postings = _postings(self.docs[self.installed :], self.installed)
        self.body_terms = {t for d in docs for t in d.fields.get("when", {})}
        total = dict.fromkeys(FIELDS, 0)
        for d in self.docs[: self.installed]:
            for f, tf in d.fields.items():
                total[f] += sum(tf.values())
        n = max(self.installed, 1)
        self.avg = {f: max(total[f] / n, 1.0) for f in FIELDS}
        self.nominate = max(5, int(CANDIDATE_SHARE * self.installed))
        self._idf: dict[str, float] = {}
        self._weights: dict[int, dict[str, float]] = {}
        self._mass: dict[int, float] = {}
        self._same: dict[tuple[int, int], bool] = {}

    def same(self, i: int, j: int, test: Callable[[Doc, Doc], bool]) -> bool:
        """test(docs[i], docs[j]), remembered (it is asked again for every sentence)."""
        known = self._same.get((i, j))
        if known is None:
            known = self._same[(i, j)] = test(self.docs[i], self.docs[j])
        return known

    def idf(self, term: str) -> float:
        """BM25's IDF over the installed skills plus the background's documents."""
        known = self._idf.get(term)
        if known is None:
            n = self.installed + BACKGROUND_DOCS
            share = self.background.share.get(term, 0.0)
            df = len(self.postings.get(term, ())) + BACKGROUND_DOCS * share
            known = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            # remembered for the index's terms only: a bounded set, where sentences' are not
            if term in self.postings or term in self.rival_postings or term in self.body_terms:
                self._idf[term] = known
        return known

    def weights(self, i: int) -> dict[str, float]:
        """term -> weighted, normalised frequency in skill i (0.0: only in a not-for clause)."""
        tw = self._weights.get(i)
        if tw is None:
            d = self.docs[i]
            tw = dict.fromkeys(d.fields.get("neg", {}), 0.0)  # "when" is inside "desc"
            for f, w in WEIGHTS.items():
                tf = d.fields.get(f, {})
                norm = w / (1 - B + B * sum(tf.values()) / self.avg[f])
                for t, c in tf.items():
                    tw[t] = tw.get(t, 0.0) + c * norm
            self._weights[i] = tw
        return tw

    def self_mass(self, i: int) -> float:
        """The IDF of every term of skill i's name and description, the pieces of one CJK
        word counting once (`words_mass`), as a sentence's do where it matches them."""
        mass = self._mass.get(i)
        if mass is None:
            d = self.docs[i]
            seen = sorted(set(d.fields.get("name", {})) | set(d.fields.get("desc", {})))
            mass = self._mass[i] = self.words_mass(seen, links_among(seen)) or 1.0
        return mass

    def words_mass(self, found: Sequence[str], tied: Links | None) -> float:
        """The IDF of the terms, those `tied` as pieces of one written word sharing one word's
        weight (mca.skills.words)."""
        part = shares(found, tied) if tied else {}
        return math.fsum(self.idf(t) * part.get(t, 1.0) for t in found)

    def match(self, sentence_terms: Sequence[str], tied: Links | None = None) -> list[Match]:
        """The installed skills sharing the most distinctive terms with the sentence (at most
        MAX_CANDIDATES, by the IDF of the distinctive terms they share), scored; terms `tied`
        as pieces of one written word (`links`) share one word's weight among them."""
        return self._scored(sentence_terms, self.postings, self.nominate, MAX_CANDIDATES, tied)

    def match_rivals(self, sentence_terms: Sequence[str]) -> list[Match]:
        """The same for the competitors (their positions follow the installed skills')."""
        share = max(5, int(CANDIDATE_SHARE * (len(self.docs) - self.installed)))
        return self._scored(sentence_terms, self.rival_postings, share, MAX_RIVALS)

    def _scored(
        self,
        sentence_terms: Sequence[str],
        postings: dict[str, list[int]],
        cap: int,
        top: int,
        tied: Links | None = None,
    ) -> list[Match]:
        body = self.body_terms
        wanted = {t: self.idf(t) for t in sentence_terms if t in postings or t in body}
        nominated: dict[int, float] = {}
        for t, idf in wanted.items():
            posting = postings.get(t)
            if posting is not None and len(posting) <= cap:
                for i in posting:
                    nominated[i] = nominated.get(i, 0.0) + idf
        if len(nominated) > top:  # only the best two can decide anything
            kept = heapq.nlargest(top, nominated.items(), key=lambda x: (x[1], -x[0]))
            nominated = dict(kept)
        out = []
        for i in sorted(nominated):
            m = Match(i)
            fields = self.docs[i].fields
            tw, name, when = self.weights(i), fields.get("name", {}), fields.get("when", {})
            if tied:
                found = shares([t for t in wanted if t in tw or t in when], tied)
                m.share = {t: s for t, s in found.items() if s != 1.0}
            for t, raw in wanted.items():
                tf, part = tw.get(t), m.share.get(t, 1.0)
                idf = raw * part
                if tf is None:
                    m.body += idf if t in when else 0.0  # only in the body's sections
                    continue
                if tf == 0.0:
                    m.negative += idf
                    continue
                m.score += idf * tf / (K1 + tf)
                m.mass += idf
                m.rarest = max(m.rarest, raw)
                m.matched.append(t)
                m.words += part
                m.name_terms += t in name
                m.when += idf if t in when else 0.0
            out.append(m)
        return out
