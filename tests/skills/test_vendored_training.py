"""Training data from the repository (issue 35, item 3): the dev split's public skills are
vendored in fixtures/judgment/dev-skills.jsonl (bench.vendor_training), only what the judgment
reads, with licence and provenance; never a holdout skill, never a refused licence."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import vendor_training, vendored
from bench.triggers import load_dev_set, mca_judge, run_all_installed, run_single
from bench.vendored import held_out
from mca.skills.relevance import make_doc
from mca.skills.scan import load_candidate
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not here ({CORPUS}); it exists only in CI"
)


def _records() -> list[dict[str, Any]]:
    lines = vendored.VENDORED.read_text(encoding="utf-8").splitlines()
    return [json.loads(ln) for ln in lines if ln.strip()]


def test_vendored_skills_are_dev_and_only_redistributable_text_is_copied() -> None:
    records = _records()
    refs = {str(r["ref"]) for r in records}
    assert refs and not any(held_out(ref) for ref in refs)  # the split's own hash rule
    assert refs == set(vendor_training.dev_refs())
    for r in records:
        assert "@" in str(r["source"]) and str(r["source"]).endswith("/SKILL.md")
        if r["licence"] in vendor_training.REDISTRIBUTABLE:
            assert set(r) == {"ref", "name", "fields", "sections", "licence", "source"}
            assert set(r["fields"]) <= {"name", "description", *vendored.STAGE_FIELDS}
        else:  # its terms (stemmed words with counts), none of its text
            assert set(r) == {"ref", "name", "terms", "licence", "source"}, r["ref"]
    refused = {r["name"] for r in records if "terms" in r}
    assert refused == {"docx", "pptx"}  # proprietary (their LICENSE.txt)


def test_the_readme_names_the_refused_skills() -> None:
    text = (ROOT / "fixtures" / "judgment" / "README.md").read_text(encoding="utf-8")
    for row in vendor_training._tsv(vendor_training.LICENCES):
        if row["licence"] not in vendor_training.REDISTRIBUTABLE:
            assert row["path"] in text, row


@needs_corpus
def test_each_record_indexes_as_its_whole_skill_file_and_is_no_copy_of_it() -> None:
    for r in _records():
        whole = load_candidate(CORPUS / str(r["ref"]).partition(":")[2] / "SKILL.md", None).skill
        again = vendored.to_skill(r)
        assert whole is not None and again is not None and again.name == whole.name
        doc = vendored.docs([again])[0].fields
        assert doc == make_doc(whole.name, whole.description, whole.body).fields, r["ref"]
        if "terms" in r:  # nothing of its text: not its description, not a line of its body
            assert whole.description not in vendored.VENDORED.read_text(encoding="utf-8")
            assert again.description != whole.description and not again.body
            continue
        assert len(str(r["sections"])) < len(whole.body) or not whole.body.strip()
        assert again.description == whole.description


@pytest.mark.slow
@needs_corpus
def test_the_dev_split_judged_from_vendored_data_is_judged_as_from_the_corpus() -> None:
    from_corpus = load_dev_set().split("dev")
    from_repo = load_dev_set(vendored=True).split("dev")
    assert [c.name for c in from_repo] == [c.name for c in from_corpus]
    pairs = zip(from_repo, from_corpus, strict=True)
    assert sum(c.skills[0].path != d.skills[0].path for c, d in pairs) > 60  # really vendored
    for run in (run_single, run_all_installed):
        assert run(from_repo, mca_judge).to_json() == run(from_corpus, mca_judge).to_json()


@pytest.mark.slow
def test_a_clone_without_the_corpus_loads_the_dev_split(tmp_path: Path) -> None:
    clone = tmp_path / "clone" / "mca"  # no ../shared beside it
    for part in ("bench", "mca", "fixtures", "skills"):
        shutil.copytree(ROOT / part, clone / part)
    code = (
        "from bench.triggers import load_dev_set\n"
        "s = load_dev_set()\n"
        "dev = s.split('dev')\n"
        "held = [c.name for c in s.split('holdout') if 'packs' not in c.name]\n"
        "print(len(dev), sum(len(c.items) for c in dev), len(held))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=clone,
        env={"PYTHONPATH": str(clone)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    cases, queries, holdout = map(int, out)
    assert holdout == 0  # no public holdout skill is vendored (the lab's packs are in the repo)
    assert (cases, queries) == (76, 1541)  # every dev file
