"""How optimistic are the judgment's in-sample figures? Cross-validated on the dev split only.

    python -m bench.cv_judge [K]

The dev split's single-skill files are cut into K folds (5 unless told) by a hash of their
skill's name, so a skill's queries never sit on both sides (a skill with two files, such as its
own upstream evals beside written ones, stays in one fold). For each fold, train_judge's recipe
fits weights on the other folds; the fold is then scored with those weights, the bias moved by
each offset of a grid. Beside it, the weights fitted on all of dev, scored on dev (in-sample).
Each line: recall / false activations overall and per script family, out of fold and in
sample, at one offset from the fitted bias. Where the two agree, fitting the weights is not
optimistic. This measures the weights' fit only: the features, the glossary, the margin and the
bias's target were also chosen on dev, and a gap to other sets (holdout, external) may come from
those choices or from how other authors write; dev alone cannot tell. ~2 minutes; holdout and
external are never read.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence

from bench import families, judge_data
from bench.train_judge import fit, judged, samples
from bench.triggers import Case, run_single
from mca.skills import script
from mca.skills.evals import Score

OFFSETS = tuple(round(-1.5 + 0.1 * i, 1) for i in range(21))  # -1.5 .. +0.5
Scores = dict[float, dict[str, Score]]


def fold_of(case: Case, k: int) -> int:
    return int(hashlib.sha256(case.skills[0].name.encode()).hexdigest(), 16) % k


def score_into(out: Scores, cases: Sequence[Case], w: Sequence[float]) -> None:
    """Add the cases' figures, for every offset of the bias, to `out`."""
    for offset in OFFSETS:
        judge = judged((w[0] + offset, *w[1:]))
        for name in script.FAMILIES:
            out[offset][name].add(run_single(families.of_family(cases, name), judge))


def line(by_family: dict[str, Score]) -> str:
    total = Score()
    parts = []
    for name, part in by_family.items():
        total.add(part)
        parts.append(f"{name} {_pair(part)}")
    return "  ".join([f"all {_pair(total)}", *parts])


def _pair(s: Score) -> str:
    j = s.to_json()
    if j["recall"] is None or j["false_activations"] is None:
        return "-"
    return f"{j['recall']:.3f}/{j['false_activations']:.3f}"


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    dev = [c for c in judge_data.dev_cases() if not c.multi]

    def empty() -> Scores:
        return {o: {name: Score() for name in script.FAMILIES} for o in OFFSETS}

    out_of_fold, in_sample = empty(), empty()
    for fold in range(k):
        held = [c for c in dev if fold_of(c, k) == fold]
        score_into(out_of_fold, held, fit(samples([c for c in dev if fold_of(c, k) != fold])))
    whole = fit(samples(dev))
    score_into(in_sample, dev, whole)
    print(f"{k} folds over {len(dev)} dev files; fitted bias {whole[0]:.3f}; recall/FA")
    for offset in OFFSETS:
        print(f"{offset:+.1f}  out of fold  {line(out_of_fold[offset])}")
        print(f"      in sample    {line(in_sample[offset])}")


if __name__ == "__main__":
    main()
