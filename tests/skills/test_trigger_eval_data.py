"""The trigger-eval development set (fixtures/trigger-evals) is well formed and split by rule.

The SKILL.md files it labels stay in ../shared/corpus; checks that need them skip without it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from mca.skills.parse import read_skill_file
from mca.skills.script import CJK, family
from tests.conftest import CORPUS, REPO

EVALS = REPO / "fixtures" / "trigger-evals"
COLUMNS = ["file", "skill", "split", "source", "license"]
# Licenses whose terms let the queries be copied with a notice (the README carries it).
PERMISSIVE = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "CC0-1.0"}
SOURCE = re.compile(r"^(written|[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+)$")
HOLDOUT_PERCENT = 30
SECRETS = re.compile(
    r"sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[\w-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY|AIza[0-9A-Za-z_-]{30,}|eyJ[\w-]{10,}\.eyJ[\w-]{10,}"
)
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not here ({CORPUS}); it exists only in CI"
)


def split_of(ref: str) -> str:
    """The split rule: a fixed hash of the skill reference, never a hand choice."""
    bucket = int(hashlib.sha256(ref.encode()).hexdigest()[:8], 16) % 100
    return "holdout" if bucket < HOLDOUT_PERCENT else "dev"


def skill_dir(ref: str) -> Path:
    kind, _, path = ref.partition(":")
    assert kind in ("corpus", "packs"), ref
    return (CORPUS if kind == "corpus" else REPO) / path


def manifest() -> list[dict[str, str]]:
    with (EVALS / "MANIFEST.tsv").open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        assert reader.fieldnames == COLUMNS
        return list(reader)


def load(row: dict[str, str]) -> list[dict[str, object]]:
    data = json.loads((EVALS / row["file"]).read_text(encoding="utf-8"))
    assert isinstance(data, list) and data, row["file"]
    return data


def installed(row: dict[str, str]) -> list[str]:
    sidecar = EVALS / row["file"].replace(".json", ".skills.txt")
    return sidecar.read_text(encoding="utf-8").split()


def single_rows() -> list[dict[str, str]]:
    return [r for r in manifest() if r["skill"] != "*"]


def multi_rows() -> list[dict[str, str]]:
    return [r for r in manifest() if r["skill"] == "*"]


def test_manifest_lists_every_file_once() -> None:
    listed = [r["file"] for r in manifest()]
    # Two listdirs, not glob("*/*.json"): Python 3.11's glob leaves a scandir iterator open.
    on_disk = sorted(f"{d}/{n}" for d in ("single", "multi") for n in os.listdir(EVALS / d))
    on_disk = [f for f in on_disk if f.endswith(".json")]
    assert sorted(listed) == on_disk and len(set(listed)) == len(listed)
    for row in manifest():
        assert SOURCE.match(row["source"]), row
        assert row["license"] in PERMISSIVE, row
        assert row["split"] in ("dev", "holdout"), row


def labels(rows: list[dict[str, str]], folder: str, key: str) -> list[object]:
    """Every item's label, after checking each item is {"query", key} with a real query."""
    found = []
    for row in rows:
        assert row["file"].startswith(f"{folder}/"), row
        for item in load(row):
            assert set(item) == {"query", key}, (row["file"], item)
            assert isinstance(item["query"], str) and item["query"].strip(), row["file"]
            found.append(item[key])
    return found


def test_single_files_are_skill_creator_format() -> None:
    assert all(isinstance(v, bool) for v in labels(single_rows(), "single", "should_trigger"))


def test_multi_files_name_one_skill_or_none() -> None:
    assert all(v is None or isinstance(v, str) for v in labels(multi_rows(), "multi", "expected"))


def test_no_query_carries_two_labels() -> None:
    labels: dict[tuple[str, str], object] = {}
    for row in manifest():
        for item in load(row):
            label = item.get("should_trigger", item.get("expected"))
            key = (row["skill"] if row["skill"] != "*" else row["file"], str(item["query"]))
            assert labels.setdefault(key, label) == label, key


def test_split_is_the_hash_rule() -> None:
    for row in single_rows():
        assert row["split"] == split_of(row["skill"]), row


# CJK should-not queries each split must hold to measure a CJK false-activation rate (issue
# 35): public evals are two-fifths CJK, and with 27 in dev and 3 in holdout neither split saw
# the judgment fire on a third of their near-misses.
MIN_CJK_SHOULD_NOT = {"dev": 150, "holdout": 50}


def test_each_split_holds_enough_cjk_near_misses_for_a_rate() -> None:
    count = dict.fromkeys(MIN_CJK_SHOULD_NOT, 0)
    for row in single_rows():
        count[row["split"]] += sum(
            1
            for item in load(row)
            if item["should_trigger"] is False and family(str(item["query"])) == CJK
        )
    for split, least in MIN_CJK_SHOULD_NOT.items():
        assert count[split] >= least, (split, count[split])


def test_packs_refs_exist() -> None:
    for row in single_rows():
        if row["skill"].startswith("packs:"):
            assert (skill_dir(row["skill"]) / "SKILL.md").is_file(), row


@needs_corpus
def test_corpus_refs_exist_and_multi_names_are_installed() -> None:
    for row in single_rows():
        assert (skill_dir(row["skill"]) / "SKILL.md").is_file(), row
    single = {
        (row["skill"], str(item["query"])): item["should_trigger"]
        for row in single_rows()
        for item in load(row)
    }
    for row in multi_rows():
        refs = installed(row)
        names = {ref: read_skill_file(skill_dir(ref) / "SKILL.md").fields["name"] for ref in refs}
        by_name = {str(v): k for k, v in names.items()}
        assert len(by_name) == len(refs), f"{row['file']}: two installed skills share a name"
        dirs = {skill_dir(ref).name for ref in refs}  # so they install side by side
        assert len(dirs) == len(refs), f"{row['file']}: two installed skills share a directory name"
        for item in load(row):
            expected = item["expected"]
            if expected is not None:
                ref = by_name.get(str(expected))
                assert ref is not None, (row["file"], expected)
                # Tuning never sees a held-out skill's queries, in any file.
                assert split_of(ref) == row["split"], (row["file"], expected)
            for ref in refs:  # a query both files label must get the same answer in both
                said = single.get((ref, str(item["query"])))
                assert said in (None, names[ref] == expected), (row["file"], ref, item)


def test_no_secret_looking_strings() -> None:
    for path in sorted(EVALS.rglob("*")):
        if path.is_file():
            found = SECRETS.search(path.read_text(encoding="utf-8"))
            assert found is None, f"{path}: {found.group(0)[:12]}..."
