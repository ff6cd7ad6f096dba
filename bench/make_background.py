"""Regenerate mca/data/background.txt: document frequencies of terms in public skills.

    python -m bench.make_background

The documents are the names and descriptions of the SKILL.md files in ../shared/corpus/skills,
minus every skill the trigger-eval split rule would put in holdout (fixtures/trigger-evals
README: the first 8 hex digits of sha256("corpus:<dir>") mod 100 below 30), so nothing held out
shapes the judgment. External evals are never read. Terms in fewer than MIN_DF documents are
left out: to the judgment an unknown term is a rare one, which is what they are.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from mca.skills.relevance import terms
from mca.skills.scan import load_candidate

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus" / "skills"
OUT = REPO / "mca" / "data" / "background.txt"
MIN_DF = 3

HEADER = """\
# Document frequencies of terms in public skills' names and descriptions: the judgment's
# background, written by `python -m bench.make_background` from ../shared/corpus/skills minus
# the skills the trigger-eval split rule holds out; do not edit by hand.
# The first line is the number of documents; then "term:df" pairs, space-separated.
{n}
{body}
"""


def held_out(ref: str) -> bool:
    return int(hashlib.sha256(ref.encode()).hexdigest()[:8], 16) % 100 < 30


def main() -> None:
    df: dict[str, int] = {}
    n = 0
    for path in sorted(CORPUS.rglob("SKILL.md")):
        ref = "corpus:" + str(path.parent.relative_to(CORPUS))
        skill = load_candidate(path, None).skill
        if skill is None or held_out(ref):
            continue
        n += 1
        for t in set(terms(skill.name.replace("-", " ") + " " + skill.description)):
            df[t] = df.get(t, 0) + 1
    pairs = [f"{t}:{c}" for t, c in sorted(df.items()) if c >= MIN_DF and ":" not in t]
    lines, line = [], ""
    for p in pairs:
        if len(line) + len(p) + 1 > 96:
            lines.append(line)
            line = ""
        line = f"{line} {p}" if line else p
    lines.append(line)
    OUT.write_text(HEADER.format(n=n, body="\n".join(lines)), encoding="utf-8")
    print(f"{len(pairs)} terms from {n} skills -> {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
