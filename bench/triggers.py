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

from bench.result import Result
from mca.skills.evals import (
    EvalItem,
    Score,
    load_evals,
    score_multi,
    score_single,
    triggered,
)
from mca.skills.model import Skill
from mca.skills.scan import load_candidate
from mca.skills.stage import evaluate
from mca.skills.trigger import SkillSet

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus" / "skills"
DEV_SET = Path(os.environ.get("MCA_TRIGGER_EVALS", REPO / "fixtures" / "trigger-evals"))
EXTERNAL = Path(os.environ.get("MCA_TRIGGER_EVALS_EXTERNAL", REPO.parent / "external-evals"))


@dataclass
class Case:
    """One eval file with the skills it is run against."""

    name: str
    split: str  # dev / holdout / external
    skills: list[Skill]  # single: [the skill]; multi: every skill installed
    items: tuple[EvalItem, ...]
    multi: bool = False


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


def load_dev_set(root: Path = DEV_SET) -> EvalSet:
    """fixtures/trigger-evals: MANIFEST.tsv rows, single and multi files, skills resolved."""
    out = EvalSet()
    for row in manifest_rows(root):
        path = root / row["file"]
        refs = [row["skill"]]
        if row["skill"] == "*":
            side = path.with_suffix(".skills.txt")
            refs = [ln.strip() for ln in side.read_text().splitlines() if ln.strip()]
        skills = [load_skill(resolve_ref(r)) for r in refs]
        if any(s is None for s in skills):
            out.missing.append(row["file"])
            continue
        items = load_evals(path).items
        multi = row["skill"] == "*"
        ok = [s for s in skills if s is not None]
        out.cases.append(Case(row["file"], row["split"], ok, items, multi))
    return out


def load_external(root: Path = EXTERNAL) -> EvalSet:
    """/work/external-evals: slug/SKILL.md and slug/evals.json per MANIFEST.tsv row."""
    out = EvalSet()
    for row in manifest_rows(root):
        d = root / row["slug"]
        skill = load_skill(d)
        if skill is None or not (d / "evals.json").is_file():
            out.missing.append(row["slug"])
            continue
        items = load_evals(d / "evals.json").items
        out.cases.append(Case(row["slug"], "external", [skill], items))
    return out


Chooser = Callable[[Sequence[Skill]], Callable[[str], list[str]]]


def mca_judge(skills: Sequence[Skill]) -> Callable[[str], list[str]]:
    """The real stage: the skills it triggers (mca.skills.evals.triggered)."""
    pool = SkillSet(skills)

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
    judge = chooser(_unique([c.skills[0] for c in singles]))
    total = Score()
    for c in singles:
        name = c.skills[0].name
        items = [EvalItem(i.query, name if i.label else None) for i in c.items]
        total.add(score_multi(items, judge))
    for c in cases:
        if c.multi:
            total.add(score_multi(c.items, chooser(c.skills)))
    return total


def _unique(skills: Sequence[Skill]) -> list[Skill]:
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
        return sum(
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


def best_bm25(cases: Sequence[Case]) -> tuple[PlainBM25, float]:
    """The baseline at the threshold with the best balanced accuracy, single-skill mode."""
    bm = PlainBM25(_unique([s for c in cases for s in c.skills]))
    pairs = [
        (bm.score(c.skills[0].name, i.query), bool(i.label))
        for c in cases
        if not c.multi
        for i in c.items
    ]
    pos = sum(y for _, y in pairs) or 1
    neg = (len(pairs) - sum(y for _, y in pairs)) or 1
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


# -- rows for `make bench` --------------------------------------------------------------------
def _pct(x: float | None) -> float:
    return 100.0 * (x or 0.0)


# (row name, key in the single-skill figures, target shown, bound, True: at least)
SINGLE_ROWS: list[tuple[str, str, str, float | None, bool]] = [
    ("recall, 1 installed", "recall", ">= 70%", 0.70, True),
    ("false activations, 1 installed", "false_activations", "<= 10%", 0.10, False),
    ("accuracy, 1 installed", "accuracy", "report", None, True),
]


def split_rows(label: str, m: dict[str, Any]) -> list[Result]:
    """Recall, false activations and accuracy (one skill installed), right-or-none (all
    installed): mca, with the plain BM25 at its best threshold as the baseline."""
    mca, bm = m["mca"], m["bm25"]
    single, base = mca["single"], bm["single"]
    n = f"{single['should_trigger']} should / {single['should_not_trigger']} should-not queries"
    base_name = f"plain BM25 (threshold {bm['threshold']})"
    out = []
    for name, key, target, bound, at_least in SINGLE_ROWS:
        value = single[key] or 0.0
        passed = None if bound is None else (value >= bound if at_least else value <= bound)
        note = n if key == "recall" else ""
        row = Result(
            f"{label}: {name}",
            _pct(value),
            "%",
            _pct(base[key]),
            base_name,
            None,
            target,
            passed,
            note,
        )
        out.append(row)
    together = mca["all_installed"]["right_or_none"] or 0.0
    out.append(
        Result(
            f"{label}: right-or-none, all installed",
            _pct(together),
            "%",
            _pct(bm["all_installed"]["right_or_none"]),
            "plain BM25",
            None,
            ">= 80%",
            together >= 0.80,
            f"{mca['all_installed']['queries']} queries",
        )
    )
    return out


def bench_trigger_evals(results: list[Result]) -> dict[str, Any]:
    """Dev and holdout splits of fixtures/trigger-evals, and the external set if present."""
    dev = load_dev_set()
    external = load_external()
    out: dict[str, Any] = {}
    splits = (
        ("dev", dev.split("dev")),
        ("holdout", dev.split("holdout")),
        ("external", external.cases),
    )
    for label, cases in splits:
        if not cases:
            where = EXTERNAL if label == "external" else DEV_SET
            results.append(
                Result(
                    f"trigger evals, {label}",
                    0,
                    "%",
                    None,
                    "plain BM25",
                    None,
                    "report",
                    None,
                    f"absent ({where})",
                )
            )
            continue
        out[label] = measure(cases)
        results.extend(split_rows(f"triggers {label}", out[label]))
    return out


SENTENCES = [
    "fix the error response status code in src/api-errors/handler.py",
    "the alembic migration for the orders table fails on a schema change, help",
    "make me a slack gif of a dancing cat",
    "what does this project do?",
    "write an analysis of the api data with a python script and a chart for the report",
    "review the security of our authentication workflow and document the architecture",
]


def bench_judgment(results: list[Result]) -> dict[str, float]:
    """The pre-turn stage over 1,000 and 10,000 skills judged by description (generated packs
    without triggers), the index built once as in a session; medians over four sentences,
    against the reference loop measured in alternation."""
    import tempfile
    import time

    from bench.packs import write_packs
    from bench.run import alternate, reference_ms
    from mca.skills.catalog import Budget
    from mca.skills.discover import char_fits, discover
    from mca.skills.model import Root

    scaling: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n, bound in ((1000, 1.0), (10_000, 5.0)):
            root = Path(tmp) / f"d{n}"
            write_packs(root, n, described=True)
            pool = discover([Root(root, "x", 1)], Budget(10**9, "chars", "b"), char_fits).skill_set
            for s in SENTENCES:  # builds the index, as the first turn of a session does
                evaluate(pool, s, budget=12_000, root=Path(tmp))

            def staged(pool: SkillSet = pool) -> float:
                start = time.perf_counter()
                for s in SENTENCES:
                    evaluate(pool, s, budget=12_000, root=Path(tmp))
                return (time.perf_counter() - start) * 1000 / len(SENTENCES)

            ms, ref = alternate(staged, reference_ms, 15 if n <= 1000 else 5)
            scaling[str(n)] = ms
            target = "<= 1x (~2 ms)" if bound == 1.0 else "<= 5x (~10 ms)"
            results.append(
                Result(
                    f"judgment by description, {n:,} skills",
                    ms,
                    "ms",
                    ref,
                    "reference loop",
                    ms / ref,
                    target,
                    ms / ref <= bound,
                    "the whole pre-turn stage per sentence, index built",
                )
            )
    return scaling


def bench_judgment_corpus(results: list[Result]) -> None:
    """The same stage over 10,000 skills made of the public corpus's descriptions repeated
    (long, overlapping descriptions: a harder case than generated packs); dev sentences."""
    import dataclasses
    import statistics
    import time

    if not CORPUS.is_dir():
        return
    found = [load_candidate(p, None).skill for p in sorted(CORPUS.rglob("SKILL.md"))]
    own = [s for s in found if s is not None and not s.triggers and not s.paths]
    pool = SkillSet(
        dataclasses.replace(own[i % len(own)], name=f"{own[i % len(own)].name}-{i}")
        for i in range(10_000)
    )
    sentences = [i.query for c in load_dev_set().split("dev") for i in c.items][:300] or SENTENCES
    evaluate(pool, SENTENCES[0], budget=12_000, root=REPO)  # the index, built once
    times = []
    for s in sentences:
        start = time.perf_counter()
        evaluate(pool, s, budget=12_000, root=REPO)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p90 = times[int(0.9 * len(times))]
    results.append(
        Result(
            "judgment, 10,000 repeated public skills",
            statistics.median(times),
            "ms",
            None,
            "-",
            None,
            "report",
            None,
            f"{len(times)} sentences: p90 {p90:.2f} ms, max {times[-1]:.2f} ms",
        )
    )


def bench_index_cache(results: list[Result]) -> None:
    """The first judgment over 2,000 described skills: the index built from the skills' texts,
    against the same index read from its cache in $MCA_HOME (checked entry by entry)."""
    import statistics
    import tempfile
    import time

    from bench.packs import write_packs
    from mca.skills.catalog import Budget
    from mca.skills.discover import char_fits, discover
    from mca.skills.index_cache import IndexCache
    from mca.skills.model import Root

    with tempfile.TemporaryDirectory() as tmp:
        write_packs(Path(tmp) / "s", 2000, described=True)
        found = discover([Root(Path(tmp) / "s", "x", 1)], Budget(10**9, "chars", "b"), char_fits)
        skills = [found.skills[k] for k in sorted(found.skills)]
        cache = Path(tmp) / "index.json"
        IndexCache(cache)(skills)

        def first(cached: bool) -> float:
            pool = SkillSet(skills, IndexCache(cache) if cached else None)
            start = time.perf_counter()
            evaluate(pool, SENTENCES[2], budget=12_000, root=Path(tmp))
            return (time.perf_counter() - start) * 1000

        built = statistics.median(first(False) for _ in range(5))
        read = statistics.median(first(True) for _ in range(5))
    results.append(
        Result(
            "first judgment, 2,000 described skills",
            read,
            "ms",
            built,
            "the index built afresh",
            read / built,
            "report",
            None,
            "index read from $MCA_HOME/cache (checked) vs built from the skills' texts",
        )
    )
