"""The judgment's background knowledge of English.

STOP: function words, dropped from every text (written by hand: they say nothing of any skill).
COMMON: words frequent in requests to a coding agent, in three bands (most frequent first),
derived from the dev split of the trigger evals by `python -m bench.make_common --write` into
mca/data/common-words.txt (never from holdout). They stand for a background of requests that
no installed set provides when only one skill is installed, so a word every request uses
("file", "code", "fix") weighs little and a word only one skill uses ("xlsx", "playwright")
weighs much.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["BANDS", "COMMON_FILE", "common_words", "parse_groups", "stop_words"]

STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing don down during each else etc
ever every few for from further get gets got had has have having he her here hers him his how
i if in into is it its itself just let lets like may me might mine more most much must my
myself no nor not now of off on once one only or other our ours out over own per please pls
same shall she should so some such than that the their theirs them then there these they
this those through thus to too u under until up upon us very via was we were what whatever
when where whether which while who whom whose why will with within without would ya yet you
your yours yourself yeah ok okay hey hi hello thanks thank sure really actually basically
just maybe kinda sorta gonna wanna im ive id youre thats dont doesnt cant isnt whats lets
re ll ve doesn didn isn wasn aren won shouldn couldn wouldn haven hasn weren
"""

COMMON_FILE = Path(__file__).resolve().parent.parent / "data" / "common-words.txt"
BANDS = (0.3, 0.1, 0.03)  # share of background documents a word of each band is assumed in


@functools.cache
def stop_words() -> frozenset[str]:
    return frozenset(STOP_TEXT.split())


@functools.cache
def _groups() -> dict[str, frozenset[str]]:
    """The data file's groups ("band 1", "band 2", "band 3") -> their words."""
    return parse_groups(COMMON_FILE.read_text(encoding="utf-8"), str(COMMON_FILE))


def parse_groups(text: str, where: str) -> dict[str, frozenset[str]]:
    """A common-words file's bands -> their words; ValueError when a band is missing or a
    word stands before the first band (a truncated or hand-mangled file would otherwise
    silently leave the judgment without everyday words)."""
    out: dict[str, set[str]] = {}
    group: set[str] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("band "):
            group = out.setdefault(line.strip(), set())
        elif group is None:
            raise ValueError(f"{where}:{n}: words before the first 'band' line")
        else:
            group.update(line.split())
    if missing := [f"band {b}" for b in range(1, len(BANDS) + 1) if not out.get(f"band {b}")]:
        raise ValueError(f"{where}: no words for {', '.join(missing)} (bench.make_common)")
    return {k: frozenset(v) for k, v in out.items()}


@functools.cache
def common_words() -> dict[str, float]:
    """word -> its assumed background document share (highest band wins)."""
    out: dict[str, float] = {}
    for band, share in enumerate(BANDS, 1):
        for w in _groups().get(f"band {band}", frozenset()):
            out.setdefault(w, share)
    return out
