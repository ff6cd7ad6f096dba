"""Vendor what the judgment's background and competitor table are made from: the names and
descriptions of the DEV-split public skills.

    python -m bench.vendor_descriptions

Writes fixtures/judgment/public-descriptions.jsonl, one JSON record a line per SKILL.md of
../shared/corpus/skills that loads and that the trigger-eval split rule puts in dev
(bench.vendored.held_out), in the order of its path: its reference, name, description (the
frontmatter's; never a line of the body), licence and source (repository, commit, path, from
../shared/corpus/skills/MANIFEST.tsv). Licences come from fixtures/judgment/licences.tsv, as
for bench.vendor_training: a skill whose licence does not allow redistribution (or is not
known) is refused and named in the output; none of its text is vendored, only its index terms
(`terms`: name, description and not-for terms with counts, what mca/data/rivals.tsv ships for
every dev skill). Held-out skills are never read.

bench.make_background and bench.make_rivals read this file and nothing of the corpus, so a
clone rebuilds mca/data/background.txt and mca/data/rivals.tsv. Each record is checked: it
gives the background's terms and the competitor profile its SKILL.md gives. Run this again only
when the corpus, its licences or the way texts become terms (mca.skills.terms) change.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from bench.triggers import CORPUS
from bench.vendor_training import REDISTRIBUTABLE, licence, provenance
from bench.vendored import (
    DESCRIPTIONS,
    PROFILE_FIELDS,
    REPO,
    background_terms,
    held_out,
    profile,
)
from mca.skills.model import Skill
from mca.skills.relevance import make_doc
from mca.skills.scan import load_candidate
from mca.skills.terms import terms


def dev_skills() -> Iterator[tuple[str, Skill]]:
    """(corpus directory, skill) for every corpus skill that loads and is not held out, in the
    order of its path (the order bench.make_background and bench.make_rivals always read)."""
    for path in sorted(CORPUS.rglob("SKILL.md")):
        where = str(path.parent.relative_to(CORPUS))
        if held_out("corpus:" + where):
            continue
        skill = load_candidate(path, None).skill
        if skill is not None:
            yield where, skill


def record(where: str, skill: Skill, source: dict[str, str]) -> dict[str, Any]:
    """One skill's record: its text where its licence allows, else its terms; checked."""
    name = licence(source["repo"], source["path"])[0]
    out: dict[str, Any] = {
        "ref": "corpus:" + where,
        "name": skill.name,
        "licence": name,
        "source": f"{source['repo']}@{source['commit']}:{source['path']}",
    }
    doc = make_doc(skill.name, skill.description).fields
    whole = {f: doc[f] for f in PROFILE_FIELDS}
    if name in REDISTRIBUTABLE:
        out["description"] = skill.description
    else:
        out["terms"] = whole
    again = profile(out).fields
    mine = set(terms(skill.name.replace("-", " ") + " " + skill.description))
    if {f: again[f] for f in PROFILE_FIELDS} != whole or background_terms(out) != mine:
        raise SystemExit(f"{where}: the record does not index as its SKILL.md")
    return out


def render() -> tuple[str, list[str]]:
    """The file's text, and the skills whose text was refused (a line each)."""
    sources = provenance()
    kept, refused = [], []
    for where, skill in dev_skills():
        r = record(where, skill, sources[where])
        if "terms" in r:
            refused.append(f"  refused {r['ref']}: licence {r['licence']}; its terms only")
        kept.append(json.dumps(r, ensure_ascii=False, sort_keys=True))
    return "\n".join(kept) + "\n", refused


def main() -> None:
    text, refused = render()
    DESCRIPTIONS.write_text(text, encoding="utf-8")
    print("\n".join(refused))
    size = DESCRIPTIONS.stat().st_size
    print(f"{text.count(chr(10))} skills ({size:,} bytes) -> {DESCRIPTIONS.relative_to(REPO)}")
    print(f"{len(refused)} refused: their licence does not allow redistribution of their text")


if __name__ == "__main__":
    main()
