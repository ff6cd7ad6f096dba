"""Vendor what training the judgment needs from the DEV split's public skills.

    python -m bench.vendor_training

Writes fixtures/judgment/dev-skills.jsonl, one JSON record a line per corpus skill that the dev
split of fixtures/trigger-evals references (its single files and multi/*-dev.skills.txt):
its reference, name, description, the frontmatter fields the stage reads, the body's "when to
use" / "do not use" sections (bench.vendored.sections_only; never the whole SKILL.md), its
licence and where it came from (repository, commit, path, from ../shared/corpus/skills/
MANIFEST.tsv). Licences come from fixtures/judgment/licences.tsv; a skill whose licence does
not allow redistribution (or is not known) is refused and named in the output: none of its
text is vendored, only its index terms (stemmed words with counts, as mca/data/rivals.tsv
ships for every dev skill), so that training from the repository needs nothing else. Holdout skills
are never read. Each record is checked: make_doc must index it exactly as the whole file.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.triggers import CORPUS, DEV_SET, manifest_rows
from bench.vendored import REPO, STAGE_FIELDS, VENDORED, sections_only, to_skill
from mca.skills.relevance import make_doc
from mca.skills.scan import load_candidate

LICENCES = REPO / "fixtures" / "judgment" / "licences.tsv"
REDISTRIBUTABLE = frozenset({"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC"})


def dev_refs(root: Path = DEV_SET) -> list[str]:
    """Every corpus reference the dev split uses, sorted (holdout rows are skipped unread)."""
    refs: set[str] = set()
    for row in manifest_rows(root):
        if row["split"] != "dev":
            continue
        if row["skill"] == "*":
            side = (root / row["file"]).with_suffix(".skills.txt")
            refs.update(ln.strip() for ln in side.read_text().splitlines() if ln.strip())
        else:
            refs.add(row["skill"])
    return sorted(r for r in refs if r.startswith("corpus:"))


def _tsv(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        yield from csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t")


def provenance() -> dict[str, dict[str, str]]:
    """corpus directory -> {repo, commit, path} of its SKILL.md."""
    out = {}
    for row in _tsv(CORPUS / "MANIFEST.tsv"):
        where = row["repo"].replace("/", "__") + "/" + row["path"].removesuffix("/SKILL.md")
        out[where] = {k: row[k] for k in ("repo", "commit", "path")}
    return out


def licence(repo: str, path: str) -> tuple[str, str]:
    """(licence, evidence) for a skill's SKILL.md path in a repository ("unknown" if none)."""
    found = ("unknown", "no row in fixtures/judgment/licences.tsv")
    for row in _tsv(LICENCES):
        if row["repo"] == repo and row["path"] == path.removesuffix("/SKILL.md"):
            return row["licence"], row["evidence"]
        if row["repo"] == repo and row["path"] == "*":
            found = (row["licence"], row["evidence"])
    return found


def record(ref: str, source: dict[str, str]) -> dict[str, Any]:
    """The vendored record of one corpus skill, checked to index as the whole file does."""
    skill = load_candidate(CORPUS / ref.partition(":")[2] / "SKILL.md", None).skill
    if skill is None:
        raise SystemExit(f"{ref}: does not load")
    keep = ("name", "description", *STAGE_FIELDS)
    out = {
        "ref": ref,
        "name": skill.name,
        "fields": {k: v for k, v in skill.fields.items() if k in keep},
        "sections": sections_only(skill.body),
        "licence": licence(source["repo"], source["path"])[0],
        "source": f"{source['repo']}@{source['commit']}:{source['path']}",
    }
    again = to_skill(out)
    whole = make_doc(skill.name, skill.description, skill.body).fields
    if again is None or make_doc(again.name, again.description, again.body).fields != whole:
        raise SystemExit(f"{ref}: the vendored record does not index as the whole file")
    return out


def terms_only(ref: str, source: dict[str, str]) -> dict[str, Any]:
    """The record of a skill whose text may not be copied: its index terms, no text."""
    skill = load_candidate(CORPUS / ref.partition(":")[2] / "SKILL.md", None).skill
    if skill is None:
        raise SystemExit(f"{ref}: does not load")
    return {
        "ref": ref,
        "name": skill.name,
        "terms": make_doc(skill.name, skill.description, skill.body).fields,
        "licence": licence(source["repo"], source["path"])[0],
        "source": f"{source['repo']}@{source['commit']}:{source['path']}",
    }


def main() -> None:
    sources = provenance()
    kept, refused = [], []
    for ref in dev_refs():
        source = sources[ref.partition(":")[2]]
        name, evidence = licence(source["repo"], source["path"])
        if name not in REDISTRIBUTABLE:
            refused.append(f"  refused {ref}: licence {name} ({evidence}); its terms only")
            kept.append(json.dumps(terms_only(ref, source), ensure_ascii=False))
            continue
        kept.append(json.dumps(record(ref, source), ensure_ascii=False, sort_keys=True))
    VENDORED.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print("\n".join(refused))
    size = VENDORED.stat().st_size
    print(f"{len(kept)} skills vendored ({size:,} bytes) -> {VENDORED.relative_to(REPO)}")
    print(f"{len(refused)} refused: their licence does not allow redistribution of their text")


if __name__ == "__main__":
    main()
