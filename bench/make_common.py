"""Derive mca/data/common-words.txt, the everyday words of mca.skills.lexicon, from the DEV
split of fixtures/trigger-evals only (issue 35, item 3).

    python -m bench.make_common            # print it
    python -m bench.make_common --write    # write it (tests/skills/test_common_words.py
                                           # fails when the shipped file differs)

The eval queries were written around each skill's own words (a pdf skill's should-not queries
say "pdf"), so counting every word a skill's queries use makes its keywords "everyday". A word
counts for a dev skill only where that skill's queries use it INCIDENTALLY: a word of a query
that is not in the skill's name or description. A word's spread is the number of dev
single-skill files that use it so; spread >= 20 is band 1, >= 10 band 2, >= 5 band 3.

Measured (dev single-skill recall / false activations / all-installed right-or-none, the
weights retrained on each list): the hand-written list it replaces 0.524 / 0.067 / 0.734;
spread 10/5/3: 0.495 / 0.067 / 0.737; 20/10/5: 0.512 / 0.067 / 0.735; 6/3/2: 0.505 / 0.063 /
0.733 (each with the rule of the day that a one-word name not in a band, written bare, names
its skill; since then no one-word name does, see mca.skills.trigger.mentioned). 20/10/5 is
the best on dev, and keeps "slack" (3 files) and "pdf" (4) out of the bands.

Holdout files are never read: tests/skills/test_common_words.py derives the list again from a
copy of the split without them and gets the same file.
"""

from __future__ import annotations

import collections
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.judge_data import dev_cases
from bench.triggers import DEV_SET, Case
from mca.skills import lexicon

SPREAD = (20, 10, 5)  # least spread of band 1, 2, 3
_WORD = re.compile(r"[a-z][a-z0-9]*")
HEADER = """\
# Everyday words for mca/skills/lexicon.py, written by `python -m bench.make_common --write`
# from the dev split of fixtures/trigger-evals ({n} single-skill files); do not edit by hand.
# A word's spread: the dev files whose queries use it where it is not one of that skill's own
# words (its name or description). "band 1": spread >= {s[0]}, "band 2": >= {s[1]}, "band 3":
# >= {s[2]}.
"""


def words(text: str) -> set[str]:
    """The distinct plain words of a text (ASCII, 2+ characters, no stop words)."""
    stops = lexicon.stop_words()
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 2 and w not in stops}


def spread(cases: Sequence[Case]) -> tuple[collections.Counter[str], int]:
    """word -> the number of single-skill files whose queries use it incidentally; and that
    number."""
    out: collections.Counter[str] = collections.Counter()
    files = 0
    for c in cases:
        if c.multi:
            continue
        files += 1
        skill = c.skills[0]
        own = words(skill.name.replace("-", " ")) | words(skill.description)
        used: set[str] = set()
        for item in c.items:
            used |= words(item.query)
        out.update(used - own)
    return out, files


def derive(root: Path = DEV_SET) -> str:
    """The file's text."""
    cases = dev_cases(root)
    counts, n = spread(cases)
    found: list[list[str]] = [[], [], []]
    for word, k in counts.items():
        for band, least in enumerate(SPREAD):
            if k >= least:
                found[band].append(word)
                break
    parts = [HEADER.format(n=n, s=SPREAD)]
    for band, group in enumerate(found, 1):
        parts.append(f"band {band}\n" + _wrap(sorted(group)))
    return "".join(parts)


def _wrap(group: list[str], width: int = 96) -> str:
    lines, line = [], ""
    for w in group:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    return "".join(f"{x}\n" for x in [*lines, line] if x)


def main() -> None:
    text = derive()
    if "--write" in sys.argv[1:]:
        lexicon.COMMON_FILE.write_text(text, encoding="utf-8")
        print(f"written to {lexicon.COMMON_FILE}")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
