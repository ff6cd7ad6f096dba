"""Trigger evals for `make bench`: mca's judgment against a plain BM25, on the dev and holdout
splits of fixtures/trigger-evals and on an external set (never tuned on).

Single-skill mode installs one skill at a time and runs its skill-creator file: recall on
should-trigger, false activations on should-not, accuracy. All-installed mode installs every
skill of the split together: a should-trigger query is right when exactly its skill fires, a
should-not one when none does, and a multi file's query when exactly its expected skill (or
none) fires: the right-or-none rate.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.authors import author_of
from bench.vendored import docs as vendored_docs
from bench.vendored import vendored_skill
from mca.skills.evals import (
    EvalItem,
    Score,
    load_evals,
    score_multi,
    score_single,
    triggered,
)
from mca.skills.judgment import Model
from mca.skills.model import Skill
from mca.skills.scan import load_candidate
from mca.skills.stage import evaluate
from mca.skills.trigger import DocSource, SkillSet

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus" / "skills"
DEV_SET = Path(os.environ.get("MCA_TRIGGER_EVALS", REPO / "fixtures" / "trigger-evals"))
POOL = REPO / "fixtures" / "external-pool"  # public evals by other authors (bench.vendor_external)
EXTERNAL = Path(os.environ.get("MCA_TRIGGER_EVALS_EXTERNAL", POOL))


@dataclass
class Case:
    """One eval file with the skills it is run against."""

    name: str
    split: str  # dev / holdout / external
    skills: list[Skill]  # single: [the skill]; multi: every skill installed
    items: tuple[EvalItem, ...]
    multi: bool = False
    source: str = ""  # the skill's source repository (bench.authors); "" for a multi file


@dataclass
class EvalSet:
    cases: list[Case] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[Case]:
        return [c for c in self.cases if c.split == name]


def load_skill(path: Path) -> Skill | None:
    c = load_candidate(path / "SKILL.md" if path.is_dir() else path, None)
    return c.skill


def resolve_ref(ref: str) -> Path:
    kind, _, rest = ref.partition(":")
    return CORPUS / rest if kind == "corpus" else REPO / rest


def manifest_rows(root: Path) -> list[dict[str, str]]:
    """The rows of root/MANIFEST.tsv (none when the set is absent)."""
    manifest = root / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with manifest.open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def dev_skill(ref: str, vendored: bool) -> Skill | None:
    """A dev-split skill: from the corpus, or from fixtures/judgment/dev-skills.jsonl
    (bench.vendored) when `vendored` or when the corpus is absent (a clone)."""
    if ref.startswith("corpus:") and (vendored or not CORPUS.is_dir()):
        return vendored_skill(ref)
    return load_skill(resolve_ref(ref))


def load_dev_set(root: Path = DEV_SET, vendored: bool = False) -> EvalSet:
    """fixtures/trigger-evals: MANIFEST.tsv rows, single and multi files, skills resolved
    (corpus skills from the vendored records when `vendored` or when the corpus is absent;
    holdout rows then find none, and are listed as missing)."""
    out = EvalSet()
    for row in manifest_rows(root):
        path = root / row["file"]
        refs = [row["skill"]]
        if row["skill"] == "*":
            side = path.with_suffix(".skills.txt")
            refs = [ln.strip() for ln in side.read_text().splitlines() if ln.strip()]
        skills = [dev_skill(r, vendored) for r in refs]
        if any(s is None for s in skills):
            out.missing.append(row["file"])
            continue
        items = load_evals(path).items
        multi = row["skill"] == "*"
        ok = [s for s in skills if s is not None]
        source = "" if multi else author_of(row["skill"])
        out.cases.append(Case(row["file"], row["split"], ok, items, multi, source))
    return out


def load_external(root: Path = EXTERNAL, half: str = "measure") -> EvalSet:
    """Other authors' skills with their own trigger evals: slug/SKILL.md and slug/evals.json
    per MANIFEST.tsv row. In the vendored pool (fixtures/external-pool) only the rows of
    `half` are read, from <half>/<slug>: "measure" (split "external", never trained on) or
    "train" (split "external-train", which joins dev for training); a set without a `half`
    column (MCA_TRIGGER_EVALS_EXTERNAL) is all "measure"."""
    out = EvalSet()
    for row in manifest_rows(root):
        if row.get("half", "measure") != half:
            continue
        d = root / row["half"] / row["slug"] if "half" in row else root / row["slug"]
        skill = load_skill(d)
        if skill is None or not (d / "evals.json").is_file():
            out.missing.append(row["slug"])
            continue
        items = load_evals(d / "evals.json").items
        split = "external" if half == "measure" else "external-train"
        out.cases.append(Case(row["slug"], split, [skill], items, source=row.get("repo", "")))
    return out


Chooser = Callable[[Sequence[Skill]], Callable[[str], list[str]]]


def mca_judge(
    skills: Sequence[Skill], model: Model | None = None, docs: DocSource = vendored_docs
) -> Callable[[str], list[str]]:
    """The real stage: the skills it triggers (mca.skills.evals.triggered), judged by this model
    (None: the shipped one) on the skills' documents from `docs`."""
    pool = SkillSet(skills, docs=docs, model=model)

    def judge(sentence: str) -> list[str]:
        return triggered(evaluate(pool, sentence, budget=12_000, root=REPO).decisions)

    return judge


def run_single(cases: Sequence[Case], chooser: Chooser) -> Score:
    total = Score()
    for c in cases:
        if not c.multi:
            total.add(score_single(c.items, c.skills[0].name, chooser(c.skills)))
    return total


def run_all_installed(cases: Sequence[Case], chooser: Chooser) -> Score:
    """Every single-file skill of these cases installed together, plus the multi files."""
    singles = [c for c in cases if not c.multi]
    judge = chooser(unique([c.skills[0] for c in singles]))
    total = Score()
    for c in singles:
        name = c.skills[0].name
        items = [EvalItem(i.query, name if i.label else None) for i in c.items]
        total.add(score_multi(items, judge))
    for c in cases:
        if c.multi:
            total.add(score_multi(c.items, chooser(c.skills)))
    return total


def unique(skills: Sequence[Skill]) -> list[Skill]:
    seen: dict[str, Skill] = {}
    for s in skills:
        seen.setdefault(s.name, s)
    return list(seen.values())


# -- the baseline: plain BM25 over name + description, at its best threshold ------------------
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class PlainBM25:
    """Okapi BM25 (k1 1.2, b 0.75), IDF over every skill in the eval set (one installed skill
    has no IDF of its own), no stemming, no field weights, no stop words."""

    def __init__(self, skills: Sequence[Skill]) -> None:
        docs = {s.name: _words(s.name.replace("-", " ") + " " + s.description) for s in skills}
        self.docs = docs
        self.avg = sum(map(len, docs.values())) / max(len(docs), 1)
        df: dict[str, int] = {}
        for words in docs.values():
            for w in set(words):
                df[w] = df.get(w, 0) + 1
        n = len(docs)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def score(self, name: str, sentence: str) -> float:
        doc = self.docs[name]
        tf: dict[str, int] = {}
        for w in doc:
            tf[w] = tf.get(w, 0) + 1
        norm = 1.2 * (0.25 + 0.75 * len(doc) / self.avg)
        return math.fsum(  # exactly rounded: the same in any set order, on any Python
            self.idf.get(w, 0.0) * tf[w] * 2.2 / (tf[w] + norm)
            for w in set(_words(sentence))
            if w in tf
        )


def bm25_chooser(bm: PlainBM25, threshold: float) -> Chooser:
    def chooser(skills: Sequence[Skill]) -> Callable[[str], list[str]]:
        def judge(sentence: str) -> list[str]:
            best = max(((bm.score(s.name, sentence), s.name) for s in skills), default=(0.0, ""))
            return [best[1]] if best[0] > threshold else []

        return judge

    return chooser


def bm25_pairs(bm: PlainBM25, cases: Sequence[Case]) -> tuple[list[tuple[float, bool]], int, int]:
    """Each single-skill query's BM25 score for its skill and its label; the numbers of
    should and should-not queries (at least 1 each, to divide by)."""
    pairs = [
        (bm.score(c.skills[0].name, i.query), bool(i.label))
        for c in cases
        if not c.multi
        for i in c.items
    ]
    pos = sum(y for _, y in pairs)
    return pairs, pos or 1, (len(pairs) - pos) or 1


def best_bm25(cases: Sequence[Case]) -> tuple[PlainBM25, float]:
    """The baseline at the threshold with the best balanced accuracy, single-skill mode."""
    bm = PlainBM25(unique([s for c in cases for s in c.skills]))
    pairs, pos, neg = bm25_pairs(bm, cases)
    best, best_t = -1.0, 0.0
    for t in sorted({round(s, 2) for s, _ in pairs}):
        tpr = sum(s > t and y for s, y in pairs) / pos
        tnr = sum(s <= t and not y for s, y in pairs) / neg
        if (tpr + tnr) / 2 > best:
            best, best_t = (tpr + tnr) / 2, t
    return bm, best_t


def measure(cases: Sequence[Case]) -> dict[str, Any]:
    """mca and the BM25 baseline on one split: both modes."""
    bm, t = best_bm25(cases)
    rows: dict[str, Any] = {}
    for label, chooser in (("mca", mca_judge), ("bm25", bm25_chooser(bm, t))):
        single = run_single(cases, chooser).to_json()
        together = run_all_installed(cases, chooser).to_json()
        rows[label] = {
            "single": {k: v for k, v in single.items() if k != "misses"},
            "all_installed": {
                "queries": together["queries"],
                "right_or_none": together["accuracy"],
            },
        }
    rows["bm25"]["threshold"] = t
    return rows


# -- how far thresholds alone could go ----------------------------------------------------------
MAX_FA = 0.10


def scored(cases: Sequence[Case], model: Model | None = None) -> list[list[tuple[float, bool]]]:
    """Per single-skill case, each query's description logit with that skill installed alone
    (-inf when it shares no term) and its label (by this model; None: the shipped)."""
    from mca.skills.judgment import verdicts

    out = []
    for c in cases:
        if c.multi:
            continue
        pool = SkillSet([c.skills[0]], docs=vendored_docs, model=model)
        index = pool.relevance[0]
        row = []
        for item in c.items:
            mine = [v.logit for v in verdicts(index, item.query, pool.judgment) if v.skill == 0]
            row.append((mine[0] if mine else -math.inf, bool(item.label)))
        out.append(row)
    return out


def _pooled(
    scored: Sequence[Sequence[tuple[float, bool]]], ts: Sequence[float]
) -> tuple[float, float]:
    tp = fp = pos = neg = 0
    for row, t in zip(scored, ts, strict=True):
        for z, y in row:
            pos, neg = pos + y, neg + (not y)
            tp, fp = tp + (y and z > t), fp + (not y and z > t)
    return tp / max(pos, 1), fp / max(neg, 1)


def ceiling(cases: Sequence[Case]) -> dict[str, float]:
    """The best recall at false activations <= MAX_FA that the description logit allows: with
    one threshold for every skill, and with a threshold per skill chosen knowing the answers
    (a bound no calibration reaches, not a result). Far apart, they say the logit orders each
    skill's own queries well and what is missing is knowing where each skill's line is."""
    rows = scored(cases)
    best_global = 0.0
    for t in sorted({z for row in rows for z, _ in row}):
        recall, fa = _pooled(rows, [t] * len(rows))
        if fa <= MAX_FA:
            best_global = max(best_global, recall)
    best_each = 0.0
    for cost in (x / 10 for x in range(1, 80)):  # a false activation costs `cost` hits
        recall, fa = _pooled(rows, [_best_line(row, cost) for row in rows])
        if fa <= MAX_FA:
            best_each = max(best_each, recall)
    return {"one_threshold": best_global, "threshold_per_skill_known_answers": best_each}


def _best_line(row: Sequence[tuple[float, bool]], cost: float) -> float:
    """The threshold with the most hits less `cost` per false activation, answers known."""

    def gain(t: float) -> float:
        return sum(z > t and y for z, y in row) - cost * sum(z > t and not y for z, y in row)

    return max(sorted({-math.inf, *(z for z, _ in row)}), key=gain)
