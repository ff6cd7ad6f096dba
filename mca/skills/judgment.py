"""Does this sentence call for a skill its author described? A small logistic model over
relevance features (mca.skills.relevance), for skills that declare no `triggers` or `paths`.

The weights are constants learned on the development split of fixtures/trigger-evals only
(`python -m bench.train_judge` prints them; it never reads the holdout split or any external
evals). Deterministic: the same skills and sentence always give the same answer.

At most one skill fires on its description per sentence: the most confident one, and only when
it is confident by a margin over the next (two skills that fit equally well are a coin flip,
and a wrong skill costs more than none: the catalog still lists every skill).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mca.skills.relevance import Index, Match, background_share, surface, terms

# Learned by bench/train_judge.py on the dev split (see its docstring for the recipe), each
# weight kept to the side its evidence points (a zero: the data gave it nothing on that side).
# On dev, one skill installed: recall 0.51 at 0.06 false activations; all installed,
# right-or-none 0.70.
MODEL: tuple[tuple[str, float], ...] = (
    ("bias", -3.420),
    ("score", 0.065),  # log(1 + BM25F)
    ("mass", 0.627),  # IDF of the matched terms / 5
    ("rarest", 0.412),  # the highest IDF matched / 5
    ("cover_query", 0.000),  # matched share of the sentence's IDF
    ("cover_skill", 0.407),  # matched share of the skill's IDF
    ("name", 0.000),  # share of the name's terms matched
    ("negative", -0.107),  # share of matched IDF in not-for clauses
    ("count", 0.855),  # matched terms, at most 6
    ("cover_known", 0.000),  # matched share of the known terms' IDF
    ("unspaced", 1.452),  # share of CJK terms in the sentence
    ("when", 0.000),  # share of matched IDF in 'use when'
)
FEATURES = tuple(name for name, _ in MODEL)
WEIGHTS = tuple(weight for _, weight in MODEL)
MARGIN = 0.25  # logits between the best skill and the next for a description hit (dev grid)
MAX_SHOWN = 6  # matched terms named in the reason


@dataclass(frozen=True)
class Verdict:
    """One skill's confidence for one sentence."""

    skill: int
    logit: float
    matched: tuple[str, ...]  # terms, most distinctive first

    def words(self, sentence: str) -> list[str]:
        """The matched terms as the sentence wrote them (at most MAX_SHOWN)."""
        seen = surface(sentence)
        return list(dict.fromkeys(seen.get(t, t) for t in self.matched))[:MAX_SHOWN]

    @property
    def probability(self) -> float:
        return 1.0 / (1.0 + math.exp(-self.logit))


@dataclass(frozen=True)
class Query:
    """A sentence's terms and what they weigh against this index."""

    terms: list[str]
    mass: float  # IDF of all its distinct terms
    known: float  # IDF of those the index or the background knows
    unspaced: float  # share of its terms from scripts without spaces


def query(index: Index, sentence: str) -> Query:
    words = terms(sentence)
    distinct = dict.fromkeys(words)
    share = background_share()
    mass = known = 0.0
    for t in distinct:
        idf = index.idf(t)
        mass += idf
        known += idf if t in share or t in index.postings else 0.0
    unspaced = sum(not t.isascii() for t in distinct) / len(distinct) if distinct else 0.0
    return Query(words, mass, known, unspaced)


def features(m: Match, index: Index, q: Query) -> tuple[float, ...]:
    """The model's inputs for one (sentence, skill) pair; names in FEATURES."""
    query_mass = q.mass
    return (
        1.0,
        math.log1p(m.score),
        m.mass / 5.0,
        m.rarest / 5.0,
        m.mass / query_mass if query_mass else 0.0,
        m.mass / index.self_mass(m.skill),
        m.name_terms / max(len(index.docs[m.skill].fields.get("name", {})), 1),
        m.negative / (m.mass + m.negative) if m.negative else 0.0,
        float(min(len(m.matched), 6)),
        m.mass / q.known if q.known else 0.0,
        q.unspaced,
        m.when / m.mass if m.mass else 0.0,
    )


def logit(x: Sequence[float], weights: Sequence[float] | None = None) -> float:
    return sum(w * v for w, v in zip(weights or WEIGHTS, x, strict=True))


def verdicts(index: Index, sentence: str, weights: Sequence[float] | None = None) -> list[Verdict]:
    """Every skill sharing a term with the sentence, most confident first."""
    q = query(index, sentence)
    out = []
    for m in index.match(q.terms):
        z = logit(features(m, index, q), weights)
        out.append(Verdict(m.skill, z, tuple(sorted(m.matched, key=lambda t: -index.idf(t)))))
    out.sort(key=lambda v: (-v.logit, v.skill))
    return out


def pick(found: Sequence[Verdict], margin: float | None = None) -> Verdict | None:
    """The description hit, if any: confident, and by a margin over the runner-up."""
    margin = MARGIN if margin is None else margin
    if not found or found[0].logit <= 0:
        return None
    if len(found) > 1 and found[0].logit - found[1].logit < margin:
        return None
    return found[0]
