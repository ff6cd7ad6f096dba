"""Does this sentence call for a skill its author described? A small logistic model over
relevance features (mca.skills.relevance), for skills that declare no `triggers` or `paths`.

The weights are learned on the development split of fixtures/trigger-evals only (`python -m
bench.train_judge --write` writes them to mca/data/judgment.json; it never reads the holdout
split or any external evals). They, the margin, the background (mca.skills.background) and the
competitors (mca.skills.rivals) are one value, a Model, passed to the functions that judge:
`default_model()` is the shipped one, read from the package's data files on first use.

Deterministic: the same skills and sentence always give the same answer, on every supported
Python. Every float total here is `math.fsum`, which is exactly rounded: it does not depend on
the order of its terms (sets iterate in a different order each run) nor on the interpreter
(since 3.12, `sum()` of floats is compensated, so it and a plain loop disagree in the last
bit). A logit is always the fsum of all its weighted features, never a sum of partial sums, so
the decision thresholds compare bit-identical values wherever they are computed.

At most one skill fires on its description per sentence: the most confident one, and only when
it is confident by a margin over the next (two skills that fit equally well are a coin flip,
and a wrong skill costs more than none: the catalog still lists every skill).

Competitors (mca.skills.rivals) enter as evidence against a skill: a near-miss usually asks
for what some other skill does, so terms of the sentence that another public skill has and
this one lacks, above all that skill's name ("openai" against a Claude API skill), lower it.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mca.skills import background, rivals
from mca.skills.denial import denied
from mca.skills.relevance import Background, Doc, Index, Match
from mca.skills.rivals import same_skill
from mca.skills.terms import glossed, links, surface, terms
from mca.skills.words import Links

# The model's inputs, in the order `features` computes them. Their weights and the margin are
# learned by bench/train_judge.py on the dev split (see its docstring for the recipe), each
# weight kept to the side its evidence points (a zero: the data gave it nothing on that side),
# and written with the training data's hash and the dev figures to mca/data/judgment.json,
# which default_model() reads (tests/skills/test_judgment_data.py fails when they drift).
FEATURES = (
    "bias",
    "score",  # log(1 + BM25F)
    "mass",  # IDF of the matched terms / 5
    "rarest",  # the highest IDF matched / 5
    "cover_query",  # matched share of the sentence's IDF
    "cover_skill",  # matched share of the skill's IDF
    "name",  # share of the name's terms matched
    "negative",  # share of matched IDF in not-for clauses
    "count",  # matched words (pieces of one CJK word count once), at most 6
    "cover_known",  # matched share of the known terms' IDF
    "unspaced",  # share of CJK terms in the sentence, times the matched IDF share it wrote
    "when",  # share of matched IDF in 'use when'
    "body",  # IDF matched only in the body's 'when to use' sections, at most mass, / 5
    "denied",  # share of matched IDF the sentence rules out ("不需要视频", mca.skills.denial)
    "rival",  # IDF a competitor matches beyond the skill, less the reverse, / 5
    "rival_name",  # IDF of a competitor's name terms the skill lacks / 5
)
RIVAL_FEATURES = 2  # the last features: competitors' evidence (never for a skill)
SHIPPED = Path(__file__).resolve().parent.parent / "data" / "judgment.json"


def load_weights(path: Path) -> tuple[tuple[float, ...], float]:
    """(weights in FEATURES order, margin) from a data file written by bench.train_judge."""
    data = json.loads(path.read_text(encoding="utf-8"))
    weights = data["weights"]
    if set(weights) != set(FEATURES):
        raise ValueError(f"{path}: weights for {sorted(weights)}, not {sorted(FEATURES)}")
    return tuple(float(weights[name]) for name in FEATURES), float(data["margin"])


@dataclass(frozen=True)
class Model:
    """All the judgment knows besides the installed skills. An Index built by `index` holds the
    background and the competitors; the functions that judge take the weights and the margin
    from the model they are given (bench.train_judge passes others, changing nothing else)."""

    weights: tuple[float, ...]  # in FEATURES order
    margin: float  # logits between the best skill and the next for a description hit
    background: Background
    rivals: tuple[Doc, ...]

    def index(self, docs: Sequence[Doc]) -> Index:
        """The installed skills' index, with this model's background and competitors."""
        return Index(docs, self.rivals, self.background)


@functools.cache
def default_model() -> Model:
    """The model mca ships (mca/data: judgment.json, background.txt, common-words.txt,
    rivals.tsv), read on first use."""
    weights, margin = load_weights(SHIPPED)
    return Model(weights, margin, background.shipped(), rivals.profiles())


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
    translated: frozenset[str]  # terms only the glossary gave (no word of the sentence)
    denied: frozenset[str]  # terms written only where the sentence rules them out
    tied: Links  # terms that are pieces of one written word (terms.links)
    found: list[tuple[Match, ...]] = field(default_factory=list)  # competitors, once asked

    def rivals(self, index: Index) -> tuple[Match, ...]:
        """The competitors sharing its terms (mca.skills.rivals), found on first use."""
        if not self.found:
            self.found.append(tuple(index.match_rivals(self.terms)))
        return self.found[0]


def query(index: Index, sentence: str) -> Query:
    words = terms(sentence)
    distinct = dict.fromkeys(words)
    share = index.background.share
    idf = {t: index.idf(t) for t in distinct}
    mass = math.fsum(idf.values())
    known = math.fsum(x for t, x in idf.items() if t in share or t in index.postings)
    unspaced = sum(not t.isascii() for t in distinct) / len(distinct) if distinct else 0.0
    translated = (
        frozenset(glossed(sentence)) - frozenset(surface(sentence)) if unspaced else frozenset()
    )
    return Query(words, mass, known, unspaced, translated, denied(sentence), links(sentence))


def _rival_evidence(m: Match, index: Index, q: Query) -> tuple[float, float]:
    """How much better some competitor explains the sentence than skill m: the IDF of the
    terms it matches that m does not, less the reverse; and of its name's terms m lacks."""
    mine = set(m.matched)
    gap = name = 0.0
    for r in q.rivals(index):
        theirs = set(r.matched)
        if not theirs - mine or index.same(m.skill, r.skill, same_skill):
            continue
        extra = sorted(theirs - mine)  # a CJK word's pieces count once (Index.words_mass)
        lack = index.words_mass(sorted(mine - theirs), q.tied)
        gap = max(gap, index.words_mass(extra, q.tied) - lack)
        names = index.docs[r.skill].fields.get("name", {})
        name = max(name, index.words_mass([t for t in extra if t in names], q.tied))
    return gap / 5.0, name / 5.0


def features(m: Match, index: Index, q: Query) -> tuple[float, ...]:
    """The model's inputs for one (sentence, skill) pair; names in FEATURES."""
    return (*_own(m, index, q), *_rival_evidence(m, index, q))


def _share_of(m: Match, index: Index, some: frozenset[str]) -> float:
    """The share of m's matched IDF from these terms (a CJK word's pieces weighing their
    share of it, as in Match.mass)."""
    if not some or not m.mass:
        return 0.0
    return math.fsum(index.idf(t) * m.share.get(t, 1.0) for t in m.matched if t in some) / m.mass


def _written(m: Match, index: Index, q: Query) -> float:
    """The share of the matched IDF from words the sentence wrote, not from the glossary's
    translations of its CJK words (提交 is "submit" as well as "commit", 冲突 a merge's or
    people's): a CJK sentence's written words ("Notion", "PostgreSQL") are what a skill's
    English description can match for sure."""
    return 1.0 - _share_of(m, index, q.translated)


def _own(m: Match, index: Index, q: Query) -> tuple[float, ...]:
    """The features that look at the skill alone (all but the last RIVAL_FEATURES)."""
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
        float(min(m.words, 6)),
        m.mass / q.known if q.known else 0.0,
        q.unspaced * _written(m, index, q),
        m.when / m.mass if m.mass else 0.0,
        min(m.body, m.mass) / 5.0,  # a body can confirm a description, never stand for one
        _share_of(m, index, q.denied),
    )


def logit(x: Sequence[float], weights: Sequence[float]) -> float:
    """The weighted sum of features, exactly rounded (the same on every interpreter)."""
    return math.fsum(w * v for w, v in zip(weights, x, strict=True))


def _verdict(m: Match, index: Index, z: float) -> Verdict:
    return Verdict(m.skill, z, tuple(sorted(m.matched, key=lambda t: -index.idf(t))))


def verdicts(index: Index, sentence: str, model: Model | None = None) -> list[Verdict]:
    """Every installed skill sharing a term with the sentence, most confident first (by the
    model's weights; None: the shipped model)."""
    w = (model or default_model()).weights
    q = query(index, sentence)
    found = [
        _verdict(m, index, logit(features(m, index, q), w)) for m in index.match(q.terms, q.tied)
    ]
    found.sort(key=lambda v: (-v.logit, v.skill))
    return found


def choose(index: Index, sentence: str, model: Model | None = None) -> Verdict | None:
    """The description hit for a sentence, if any: `pick` over its verdicts (by the model's
    weights and margin; None: the shipped model).

    Only the best two verdicts decide, and competitors' evidence can only lower a logit (its
    weights are never positive), so it is computed for a skill only while the skill's logit
    without it could still place it among the best two (the answer is the same as over every
    verdict, at a fraction of the cost with thousands of skills). The bound is exact: each
    competitor term w*x is <= 0, and fsum rounds the exact total, so adding them can only
    lower the rounded logit or leave it; and the logit is the fsum of every feature, as in
    `verdicts`, never the bound plus the rest (two roundings, a last bit apart)."""
    model = model or default_model()
    w = model.weights
    own = len(w) - RIVAL_FEATURES
    if any(x > 0 for x in w[own:]):
        return pick(verdicts(index, sentence, model), model.margin)
    q = query(index, sentence)
    staged = []
    for m in index.match(q.terms, q.tied):
        x = _own(m, index, q)
        staged.append((logit(x, w[:own]), x, m))
    staged.sort(key=lambda s: (-s[0], s[2].skill))
    if not staged or staged[0][0] <= 0:  # no skill can be confident
        return None
    best: list[Verdict] = []
    for upper, x, m in staged:
        if len(best) >= 2 and upper < best[1].logit:  # a tie is decided by position, below
            break
        best.append(_verdict(m, index, logit((*x, *_rival_evidence(m, index, q)), w)))
        best.sort(key=lambda v: (-v.logit, v.skill))
    return pick(best, model.margin)


def pick(found: Sequence[Verdict], margin: float | None = None) -> Verdict | None:
    """The description hit, if any: confident, and by a margin over the runner-up (None: the
    shipped model's)."""
    margin = default_model().margin if margin is None else margin
    if not found or found[0].logit <= 0:
        return None
    if len(found) > 1 and found[0].logit - found[1].logit < margin:
        return None
    return found[0]
