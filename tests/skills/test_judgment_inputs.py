"""Every data file the judgment reads is rebuilt from the repository alone (issue 44, item 5):
mca/data/background.txt and mca/data/rivals.tsv from fixtures/judgment/public-descriptions.jsonl
(bench.vendor_descriptions: names and descriptions, with licence and provenance), the pinned
dev decisions from fixtures/judgment/dev-skills.jsonl; each exactly as shipped."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import decisions, make_background, make_rivals, vendor_descriptions, vendor_training
from bench.vendored import DESCRIPTIONS, held_out, public_records
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not here ({CORPUS}); it exists only in CI"
)
REGENERATE = "meant? `python -m bench.make_background` / `python -m bench.make_rivals`"


def test_the_background_is_rebuilt_from_the_repository_exactly() -> None:
    text, _ = make_background.render(public_records())
    assert text == make_background.OUT.read_text(encoding="utf-8"), REGENERATE


def test_the_competitor_table_is_rebuilt_from_the_repository_exactly() -> None:
    text, _ = make_rivals.render(public_records())
    assert text == make_rivals.OUT.read_text(encoding="utf-8"), REGENERATE


def test_public_records_are_dev_and_only_redistributable_text_is_vendored() -> None:
    records = public_records()
    assert len(records) > 300 and not any(held_out(str(r["ref"])) for r in records)
    assert len({r["ref"] for r in records}) == len(records)
    for r in records:
        repo, _, rest = str(r["source"]).partition("@")
        commit, _, path = rest.partition(":")
        assert len(commit) == 40 and path.endswith("/SKILL.md"), r["ref"]
        assert r["licence"] == vendor_training.licence(repo, path)[0], r["ref"]
        if r["licence"] in vendor_training.REDISTRIBUTABLE:
            assert set(r) == {"ref", "name", "description", "licence", "source"}, r["ref"]
        else:  # its index terms (stemmed words with counts), none of its text
            assert set(r) == {"ref", "name", "terms", "licence", "source"}, r["ref"]
    refused = {str(r["ref"]).rsplit("/", 1)[1] for r in records if "terms" in r}
    assert {"docx", "pptx"} <= refused  # proprietary (their LICENSE.txt)


@needs_corpus
def test_vendoring_the_corpus_again_gives_the_vendored_file() -> None:
    text, _ = vendor_descriptions.render()
    assert text == DESCRIPTIONS.read_text(encoding="utf-8"), "`python -m bench.vendor_descriptions`"


@pytest.mark.slow
def test_a_clone_without_the_corpus_writes_every_judgment_data_file_as_shipped(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "clone" / "mca"  # no ../shared beside it
    for part in ("bench", "mca", "fixtures", "skills"):
        shutil.copytree(ROOT / part, clone / part)
    assert not (clone.parent / "shared").exists()
    for module in ("make_background", "make_rivals", "decisions"):
        subprocess.run(
            [sys.executable, "-m", f"bench.{module}"],
            cwd=clone,
            env={"PYTHONPATH": str(clone)},
            capture_output=True,
            check=True,
        )
    for path in (make_background.OUT, make_rivals.OUT):
        again = clone / path.relative_to(ROOT)
        assert again.read_bytes() == path.read_bytes(), path
    # the decisions' header names the Python that wrote them (written on 3.11.7)
    shipped = decisions.FIXTURE.read_text(encoding="utf-8")
    written = (clone / decisions.FIXTURE.relative_to(ROOT)).read_text(encoding="utf-8")
    pinned = shipped.split("on CPython ", 1)[1].split(" ", 1)[0]
    assert written.replace(f"CPython {platform.python_version()} ", f"CPython {pinned} ") == shipped
