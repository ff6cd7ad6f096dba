"""Regenerate mca/data/background.txt: document frequencies of terms in public skills.

    python -m bench.make_background

Reads fixtures/judgment/public-descriptions.jsonl only (nothing of ../shared/corpus, so a clone
rebuilds the shipped file; tests/skills/test_judgment_inputs.py checks it does, byte for byte):
the names and descriptions of the SKILL.md files in ../shared/corpus/skills minus every skill
the trigger-eval split rule would put in holdout (bench.vendored.held_out), vendored by
`python -m bench.vendor_descriptions`, so nothing held out shapes the judgment. A skill whose
text is not vendored (its licence) counts with the terms its record holds, the same ones. External
evals are never read. Terms in fewer than MIN_DF documents are left out: to the judgment an
unknown term is a rare one, which is what they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.vendored import REPO, background_terms, public_records

OUT = REPO / "mca" / "data" / "background.txt"
MIN_DF = 3

HEADER = """\
# Document frequencies of terms in public skills' names and descriptions: the judgment's
# background, written by `python -m bench.make_background` from
# fixtures/judgment/public-descriptions.jsonl (../shared/corpus/skills minus the skills the
# trigger-eval split rule holds out, vendored by bench.vendor_descriptions); do not edit by hand.
# The first line is the number of documents; then "term:df" pairs, space-separated.
{n}
{body}
"""


def render(records: Sequence[dict[str, Any]]) -> tuple[str, int]:
    """The file's text for these vendored records, and the number of terms it keeps."""
    df: dict[str, int] = {}
    for r in records:
        for t in background_terms(r):
            df[t] = df.get(t, 0) + 1
    pairs = [f"{t}:{c}" for t, c in sorted(df.items()) if c >= MIN_DF and ":" not in t]
    lines, line = [], ""
    for p in pairs:
        if len(line) + len(p) + 1 > 96:
            lines.append(line)
            line = ""
        line = f"{line} {p}" if line else p
    lines.append(line)
    return HEADER.format(n=len(records), body="\n".join(lines)), len(pairs)


def main() -> None:
    records = public_records()
    text, kept = render(records)
    OUT.write_text(text, encoding="utf-8")
    print(f"{kept} terms from {len(records)} skills -> {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
