"""Competitors: profiles of public skills a sentence may be asking for instead.

A near-miss usually asks for what some other skill does ("call the OpenAI API" shares words
with a Claude API skill). The judgment scores a sentence against these profiles as well as the
installed skills, and a skill fires on its description only when it beats the best competitor
(mca.skills.judgment.pick). The profiles are stemmed terms from the names and descriptions of
the dev-split public skills (mca/data/rivals.tsv, made by `python -m bench.make_rivals` from the
repository's fixtures/judgment/public-descriptions.jsonl). They are part of the judgment's
Model (mca.skills.judgment.default_model reads them through `profiles`).

A profile too close to an installed skill (the same name's terms, or term vectors with a
cosine over CLOSE) is no competitor of it: installing `pdf` must not make the `pdf` profile
compete with itself. The table is data read back from the package: a damaged line is skipped,
and a missing or unreadable table means no competitors, never a failed start.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from importlib import resources

from mca.skills.relevance import Doc
from mca.skills.terms import MAX_TERM

TABLE = "rivals.tsv"
CLOSE = 0.5  # cosine of term vectors above which a profile is the same skill (dev grid)
MAX_LINE = 16_384  # characters; a longer line is damage, not a profile


def _terms(column: str) -> dict[str, int] | None:
    out: dict[str, int] = {}
    for item in column.split():
        term, _, count = item.partition(":")
        if (
            not term
            or len(term) > MAX_TERM
            or (count and not (count.isdigit() and 0 < int(count) < 10**4))
        ):
            return None
        out[term] = int(count) if count else 1
    return out


def _column(tf: dict[str, int]) -> str:
    return " ".join(t if c == 1 else f"{t}:{c}" for t, c in sorted(tf.items()))


def dump_line(name: str, doc: Doc, source: str) -> str:
    """One profile as a table line (the inverse of parse_line)."""
    f = doc.fields
    cols = [name, *(_column(f.get(k, {})) for k in ("name", "desc", "neg")), source]
    return "\t".join(c.replace("\t", " ").replace("\n", " ") for c in cols)


def parse_line(line: str) -> tuple[str, Doc] | None:
    """(name, profile) from a table line, or None for a comment or a damaged line."""
    cols = line.rstrip("\n").split("\t")
    if line.startswith("#") or len(cols) != 5 or len(line) > MAX_LINE or not cols[0]:
        return None
    fields = [_terms(c) for c in cols[1:4]]
    if any(f is None for f in fields):
        return None
    name, desc, neg = (f or {} for f in fields)
    return cols[0], Doc({"name": name, "desc": desc, "neg": neg})


def parse_table(text: str) -> list[tuple[str, Doc]]:
    """Every good profile of a table's text, in order."""
    return [p for line in text.splitlines() if (p := parse_line(line)) is not None]


def load(read: Callable[[], str]) -> tuple[Doc, ...]:
    """The profiles of the table `read` returns (none when it cannot be read)."""
    try:
        text = read()
    except (OSError, UnicodeError):
        return ()
    return tuple(doc for _, doc in parse_table(text))


def _shipped() -> str:
    return resources.files("mca.data").joinpath(TABLE).read_text(encoding="utf-8")


@functools.cache
def profiles() -> tuple[Doc, ...]:
    """The competitor profiles mca ships (mca/data/rivals.tsv)."""
    return load(_shipped)


def _vector(doc: Doc) -> dict[str, int]:
    out = dict(doc.fields.get("desc", {}))
    for t, c in doc.fields.get("name", {}).items():
        out[t] = out.get(t, 0) + c
    return out


def cosine(a: Doc, b: Doc) -> float:
    """Cosine of two documents' term-count vectors (name and description)."""
    va, vb = _vector(a), _vector(b)
    dot = sum(c * vb.get(t, 0) for t, c in va.items())
    norm = math.sqrt(sum(c * c for c in va.values()) * sum(c * c for c in vb.values()))
    return dot / norm if norm else 0.0


def same_skill(skill: Doc, rival: Doc, close: float | None = None) -> bool:
    """Whether a profile stands for this skill, so it is no competitor of it."""
    name = skill.fields.get("name", {})
    if name and name == rival.fields.get("name"):
        return True
    return cosine(skill, rival) > (CLOSE if close is None else close)
