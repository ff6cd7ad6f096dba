"""An everyday-word list (the bands of mca.skills.lexicon's COMMON) derived from the DEV split
only: a candidate to replace the hand-written list, NOT used by the runtime yet.

    python -m bench.make_common > words.txt

A word's spread is the number of dev skills (fixtures/trigger-evals single files, each skill's
description from fixtures/judgment/dev-skills.jsonl or the lab's packs) whose queries or
description use it: spread >= 10 is band 1, >= 5 band 2, >= 3 band 3. A dev skill's name that
at least NAMED of its own should-not-trigger queries write as a bare word ("scan the receipt",
"the qa team") is band 3 too, so a bare mention of it does not name the skill. Holdout files
are never read (deleting them changes nothing).

Why it is not wired in (issue 35, item 3; measured with the weights retrained on each list, dev
single-skill recall / false activations / all-installed right-or-none; holdout looked at once):
- the hand-written list: dev 0.557 / 0.068 / 0.741; holdout 0.701 / 0.067 / 0.776.
- spread 10/5/3 without the names rule: dev 0.431 / 0.065 / 0.710; 20/10/5: 0.411; 30/15/8:
  0.402 (fewer everyday names: near-misses that write "scan" or "qa" name those skills).
- spread 10/5/3 with the names rule (565 words): dev 0.550 / 0.070 / 0.743, but holdout
  0.701 / 0.129 / 0.747: false activations on holdout nearly double, past the 10% target.
  And the eval queries were written around each skill's keywords, so keywords become
  "everyday": "pdf", "xlsx" and "implement" (holdout skill names) are in the list, so
  "fill in this pdf form" no longer names the pdf skill, and "make me a slack gif of a
  dancing cat" no longer fires slack-gif-creator beside xlsx (tests/skills/test_relevance.py).
A list from dev data needs a source of requests not written around the skills' own words.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

from bench.judge_data import dev_cases
from bench.triggers import DEV_SET
from mca.skills import lexicon

SPREAD = (10, 5, 3)  # least spread of band 1, 2, 3
NAMED = 2  # own should-not queries writing a skill's name as a bare word
_WORD = re.compile(r"[a-z][a-z0-9]*")
HEADER = """\
# Everyday words (a candidate for mca/skills/lexicon.py's COMMON), printed by
# `python -m bench.make_common` from the dev split of fixtures/trigger-evals only. One band
# a line group: "band N" then its words (N=1 most widespread). A word's spread is the number
# of dev skills whose requests or description use it ({n} skills; band 1: spread >= {s[0]},
# band 2: >= {s[1]}, band 3: >= {s[2]}, and dev skills' names that {named} or more of their
# own should-not queries write as a bare word).
"""


def words(text: str) -> set[str]:
    """The distinct plain words of a text (ASCII, 2+ characters, no stop words)."""
    stops = lexicon.stop_words()
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 2 and w not in stops}


def spread(root: Path = DEV_SET) -> tuple[collections.Counter[str], int]:
    """word -> the number of dev skills whose queries or description use it; and that number."""
    out: collections.Counter[str] = collections.Counter()
    skills = 0
    for c in dev_cases(root):
        if c.multi:
            continue
        skills += 1
        used = (
            words(c.skills[0].description) if "terms only" not in c.skills[0].description else set()
        )
        for item in c.items:
            used |= words(item.query)
        out.update(used)
    return out, skills


def everyday_names(root: Path = DEV_SET) -> set[str]:
    """Dev skills' names written as bare words in at least NAMED of their own should-not
    queries (not as $name, /name or part of a longer name)."""
    out = set()
    for c in dev_cases(root):
        if c.multi:
            continue
        name = c.skills[0].name.lower()
        rx = re.compile(r"(?<![\w$/-])" + re.escape(name) + r"(?![\w-])")
        if sum(1 for i in c.items if not i.label and rx.search(i.query.lower())) >= NAMED:
            out.add(name)
    return out


def bands(root: Path = DEV_SET) -> list[list[str]]:
    """The words of band 1, 2 and 3, each sorted."""
    counts, _ = spread(root)
    found: list[list[str]] = [[], [], []]
    for word, k in counts.items():
        for band, least in enumerate(SPREAD):
            if k >= least:
                found[band].append(word)
                break
    found[2] += sorted(everyday_names(root) - {w for b in found for w in b})
    return [sorted(b) for b in found]


def main() -> None:
    _, n = spread()
    found = bands()
    lines = [HEADER.format(n=n, s=SPREAD, named=NAMED)]
    for band, words_ in enumerate(found, 1):
        lines.append(f"band {band}\n" + "\n".join(words_) + "\n")
    print("".join(lines), end="")


if __name__ == "__main__":
    main()
