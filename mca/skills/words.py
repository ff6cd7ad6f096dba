"""Which matched terms are pieces of one written word, so that a word counts once.

Chinese, Japanese and Korean are indexed as overlapping character pairs (mca.skills.terms),
plus the English the glossary gives for their words: 数据库 is 数据, 据库 and "database". A
sentence and a description both in those scripts share every piece of a word they share, so
without this a near-miss in the skill's own domain matched like a request for it (issue 35).
Pure data, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

Links = dict[str, set[str]]  # term -> the terms written as part of the same word


def shares(found: Sequence[str], tied: Links) -> dict[str, float]:
    """term -> its share of a word: the found terms linked to each other (directly or through
    other found terms) are pieces of the written words they stand for (`written`), which count
    once each in all."""
    out: dict[str, float] = {}
    keep = set(found)
    for t in found:
        if t in out:
            continue
        word, todo = {t}, [t]
        while todo:
            for u in tied.get(todo.pop(), ()):
                if u in keep and u not in word:
                    word.add(u)
                    todo.append(u)
        out.update(dict.fromkeys(word, written(word) / len(word)))
    return out


def written(word: set[str]) -> float:
    """How many written words a linked set of found terms stands for: one, or, for a run of k
    overlapping character pairs (k + 1 characters), k / 2, since words of these scripts are two
    or three characters long: 数据库 (two pairs) is one word, 数据库迁移脚本 (six) about three,
    not one. The glossary's English for them adds none."""
    pairs = sum(1 for t in word if not t.isascii())
    return max(1.0, pairs / 2)
