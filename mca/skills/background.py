"""The judgment's background: how common a term is beyond the installed skills, so an IDF means
something with one skill installed as with thousands (mca.skills.relevance.Index).

Two sources, both data files of the package: document frequencies of terms in public skills'
names and descriptions (mca/data/background.txt, written by `python -m bench.make_background`
from the repository's fixtures/judgment/public-descriptions.jsonl), and everyday English words
by band (mca.skills.lexicon, mca/data/common-words.txt). A term's share is the higher of the
two. Read when first needed (`shipped`), never at import.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

from mca.skills.lexicon import common_words
from mca.skills.relevance import Background
from mca.skills.terms import stem

FILE = Path(__file__).resolve().parent.parent / "data" / "background.txt"


def parse_background(text: str, where: str) -> tuple[int, dict[str, int]]:
    """A background file's document count and term -> document frequency; ValueError naming
    the file when it is empty or malformed (bench.make_background writes it)."""
    lines = [x for x in text.splitlines() if x[:1] != "#"]
    pairs = [pair.rpartition(":") for pair in " ".join(lines[1:]).split()]
    bad = next((f"{t}{c}{df}" for t, c, df in pairs if not (t and df.isdigit())), None)
    if not lines or not lines[0].strip().isdigit() or not pairs or bad is not None:
        why = f"bad pair {bad!r}" if bad else "no document count and term:df pairs"
        raise ValueError(f"{where}: {why} (bench.make_background writes it)")
    return int(lines[0]), {term: int(df) for term, _, df in pairs}


def frequencies(path: Path = FILE) -> tuple[int, dict[str, int]]:
    """The number of documents of a background file, and term -> document frequency."""
    return parse_background(path.read_text(encoding="utf-8"), str(path))


def make(n_docs: int, df: Mapping[str, int], common: Mapping[str, float]) -> Background:
    """term -> the share of background documents it is assumed in: its document frequency in
    public skills, or its band among everyday words (`common`, unstemmed) if higher."""
    out = {term: k / n_docs for term, k in df.items()}
    for word, share in common.items():
        t = stem(word)
        out[t] = max(out.get(t, 0.0), share)
    return Background(out)


@functools.cache
def shipped() -> Background:
    """The background mca ships (mca/data/background.txt and common-words.txt), read once."""
    return make(*frequencies(), common_words())
