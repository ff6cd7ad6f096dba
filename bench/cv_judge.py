"""The judgment's operating point, chosen out of fold, with folds by author (issue 48).

    python -m bench.cv_judge

The training set's single-skill files (the dev split and the external pool's train half,
bench.judge_data.training_cases) are grouped by their skill's source repository
(bench.authors) into FOLDS folds by a hash of the repository: a repository is never divided,
so a fold's queries are scored by weights fitted on other authors' skills only, as a skill
nobody here has seen would be. For each fold, train_judge's recipe fits weights on the other
folds; every query of the fold gets its skill's description logit under those weights (out of
fold). The bias is then moved by one
offset for all folds: the shipped operating point is the highest offset whose out-of-fold false
activations are at most TARGET_FA overall and within each script family (Latin, CJK, other),
in all the queries and within each group of authors (GROUPS: dev's collections, and the pool's
one-skill authors, whose skills are the ones nobody here has seen; pooled, the collections'
queries outnumber theirs ten to one, and the pooled rate had hidden theirs at 9.5%), and the
margin the one in MARGINS with the best out-of-fold right-or-none, each fold's skills
installed together. The weights shipped are fitted on all of dev; only the bias and margin
come from here.

Moving the bias needs no new run of the stage: with one skill installed, it fires when a
reason other than its description does (mentions, files, paths, keywords: independent of the
weights, found once with the description switched off) or when its description logit plus the
offset is above zero (`fires`). Holdout and the pool's measure half are never read.
"""

from __future__ import annotations

import collections
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bench import judge_data
from bench.train_judge import fit, judged, samples
from bench.triggers import Case, run_all_installed, scored
from mca.skills import judgment, script
from mca.skills.evals import Score

TARGET_FA = 0.08
FOLDS = 7  # folds of whole repositories (21 authors: dev's ten, the pool's train half)
OFFSETS = tuple(round(-3.0 + 0.02 * i, 2) for i in range(201))  # -3.0 .. +1.0
MARGINS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)  # 0 would let a tie (a coin flip) fire
# Whose skills: dev's collections (many skills each, written to one house style) and the
# pool's one-skill authors, who write as a skill nobody here has seen is written. Pooled, the
# collections' queries outnumber the others' ten to one and set the rate alone.
GROUPS = ("dev", "pool")
OFF = -1e9  # a bias no description logit passes: what fires without the description


@dataclass(frozen=True)
class Row:
    """One query of a single-skill file: does it fire without the description, its skill's
    description logit (-inf: none), its label and script family."""

    other: bool
    logit: float
    label: bool
    family: str
    group: str = "dev"  # whose skill: "dev" (the collections) or "pool" (one-skill authors)

    def fires(self, offset: float) -> bool:
        return self.other or self.logit + offset > 0


def fold_of(author: str, k: int = FOLDS) -> int:
    """An author's fold: a fixed hash of the source repository (bench.authors)."""
    return int(hashlib.sha256(author.encode()).hexdigest()[:8], 16) % k


def by_author(cases: Sequence[Case], k: int = FOLDS) -> dict[str, list[Case]]:
    """The single-skill cases in k folds by source repository (a repository is never divided),
    each fold named by its authors."""
    groups: dict[int, list[Case]] = collections.defaultdict(list)
    for c in cases:
        if not c.multi:
            groups[fold_of(c.source, k)].append(c)
    return {
        ", ".join(sorted({c.source for c in cs}, key=str.lower)): cs
        for _, cs in sorted(groups.items())
    }


def rows(cases: Sequence[Case], w: Sequence[float], other: dict[str, list[bool]]) -> list[Row]:
    """The cases' queries under weights w (`other`: case name -> fires without description)."""
    model = replace(judgment.default_model(), weights=tuple(w))
    out = []
    for c, found in zip(cases, scored(cases, model), strict=True):
        for item, base, (z, y) in zip(c.items, other[c.name], found, strict=True):
            group = "pool" if c.split == "external-train" else "dev"
            out.append(Row(base, z, y, script.family(item.query), group))
    return out


def without_description(cases: Sequence[Case], w: Sequence[float]) -> dict[str, list[bool]]:
    """case name -> whether each query fires its skill with the description switched off."""
    chooser = judged((OFF, *w[1:]))
    out = {}
    for c in cases:
        judge, name = chooser(c.skills), c.skills[0].name
        out[c.name] = [name in judge(i.query) for i in c.items]
    return out


def score(found: Sequence[Row], offset: float) -> dict[str, Score]:
    """Recall and false activations at this offset: "all" and each script family."""
    out = {name: Score() for name in ("all", *script.FAMILIES)}
    for r in found:
        hit = r.fires(offset)
        for name in ("all", r.family):
            s = out[name]
            if r.label:
                s.tp, s.fn = s.tp + hit, s.fn + (not hit)
            else:
                s.fp, s.tn = s.fp + hit, s.tn + (not hit)
    return out


def worst_fa(by_family: dict[str, Score]) -> float:
    return max((s.to_json()["false_activations"] or 0.0) for s in by_family.values())


def choose_offset(found: Sequence[Row], target: float = TARGET_FA) -> float:
    """The highest offset with false activations at most `target` overall and per family, in
    all and within each group of authors (GROUPS)."""
    groups = [[r for r in found if r.group == g] for g in GROUPS]
    ok = [
        o for o in OFFSETS if all(worst_fa(score(rs, o)) <= target for rs in (found, *groups) if rs)
    ]
    return max(ok) if ok else OFFSETS[0]


@dataclass
class Folds:
    """Out-of-fold figures: each author's weights, and every dev query's rows in and out."""

    authors: dict[str, list[Case]]
    weights: dict[str, list[float]]
    whole: list[float]
    out_of_fold: list[Row]
    in_sample: list[Row]


def cross_validate(dev: Sequence[Case]) -> Folds:
    """Fit on all authors but one, score that one; and fit on all (train_judge's recipe)."""
    authors = by_author(dev)
    per_case = {c.name: samples([c]) for cs in authors.values() for c in cs}
    whole = fit([x for xs in per_case.values() for x in xs])
    other = without_description([c for cs in authors.values() for c in cs], whole)
    weights, oof, ins = {}, [], []
    for author, held in authors.items():
        rest = [x for a, cs in authors.items() if a != author for c in cs for x in per_case[c.name]]
        weights[author] = fit(rest)
        oof += rows(held, weights[author], other)
        ins += rows(held, whole, other)
    return Folds(authors, weights, whole, oof, ins)


def choose_margin(folds: Folds, offset: float) -> tuple[float, float]:
    """(margin, out-of-fold right-or-none): each author's skills installed together, judged
    by that author's out-of-fold weights with the bias moved by `offset`."""
    best = (-1.0, 0.0)
    for margin in MARGINS:
        total = Score()
        for author, held in folds.authors.items():
            w = folds.weights[author]
            total.add(run_all_installed(held, judged((w[0] + offset, *w[1:]), margin)))
        best = max(best, ((total.to_json()["accuracy"] or 0.0), -margin))
    return -best[1], best[0]


def figures(found: Sequence[Row], offset: float) -> dict[str, dict[str, float | None]]:
    """Recall and false activations per family, as judgment.json records them."""
    return {
        name: {k: s.to_json()[k] for k in ("recall", "false_activations")}
        for name, s in score(found, offset).items()
    }


def line(by_family: dict[str, Score]) -> str:
    return "  ".join(f"{name} {_pair(s)}" for name, s in by_family.items())


def _pair(s: Score) -> str:
    j = s.to_json()
    if j["recall"] is None or j["false_activations"] is None:
        return "-"
    return f"{j['recall']:.3f}/{j['false_activations']:.3f}"


def main() -> None:
    folds = cross_validate(judge_data.training_cases())
    offset = choose_offset(folds.out_of_fold)
    margin, right = choose_margin(folds, offset)
    n = sum(len(cs) for cs in folds.authors.values())
    print(
        f"{len(folds.authors)} folds by author over {n} dev files; fitted bias {folds.whole[0]:.3f}"
    )
    for author, w in folds.weights.items():
        print(f"  without {author}: bias {w[0]:.3f}")
    print(f"operating point: offset {offset:+.2f} (bias {folds.whole[0] + offset:.3f}), margin")
    print(f"  {margin} (out-of-fold right-or-none {right:.3f}); recall/FA at offsets:")
    for o in sorted({offset, *(x for x in OFFSETS if math.isclose(x * 4, round(x * 4)))}):
        mark = "  <- shipped" if o == offset else ""
        print(f"{o:+.2f}  out of fold  {line(score(folds.out_of_fold, o))}{mark}")
        print(f"       in sample    {line(score(folds.in_sample, o))}")


if __name__ == "__main__":
    main()
