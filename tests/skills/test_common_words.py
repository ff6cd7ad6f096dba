"""The everyday-word list (mca/data/common-words.txt) is derived from the dev split only, by
`python -m bench.make_common --write`, and has not drifted from it (issue 35, item 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench import make_common
from bench.triggers import DEV_SET, Case
from mca.skills import background, lexicon
from mca.skills.evals import EvalItem
from mca.skills.model import Skill

WRITE = "`python -m bench.make_common --write`, then `python -m bench.train_judge --write`"


def test_the_shipped_list_is_the_one_the_dev_split_gives() -> None:
    shipped = lexicon.COMMON_FILE.read_text(encoding="utf-8")
    assert make_common.derive() == shipped, f"the list drifted from the dev split: {WRITE}"


def test_the_holdout_split_shapes_nothing(tmp_path: Path) -> None:
    copy = tmp_path / "trigger-evals"
    shutil.copytree(DEV_SET, copy)
    rows = (copy / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    kept = [rows[0]]
    for row in rows[1:]:
        file, _, split, *_ = row.split("\t")
        if split == "holdout":
            (copy / file).unlink()
        else:
            kept.append(row)
    assert len(kept) < len(rows)  # there was holdout to drop
    (copy / "MANIFEST.tsv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert make_common.derive(copy) == make_common.derive()


def test_the_derivation_reads_the_split_it_is_given(tmp_path: Path) -> None:
    # The check above is only as good as this: the holdout files labelled dev change the list
    copy = tmp_path / "trigger-evals"
    shutil.copytree(DEV_SET, copy)
    manifest = copy / "MANIFEST.tsv"
    rows = manifest.read_text(encoding="utf-8").splitlines()
    relabelled = [rows[0]] + [row.replace("\tholdout\t", "\tdev\t") for row in rows[1:]]
    assert relabelled != rows
    manifest.write_text("\n".join(relabelled) + "\n", encoding="utf-8")
    assert make_common.derive(copy) != make_common.derive()


def _case(name: str, description: str, *queries: tuple[str, bool]) -> Case:
    skill = Skill(name, description, Path(f"/skills/{name}/SKILL.md"), "")
    return Case(name, "dev", [skill], tuple(EvalItem(q, y) for q, y in queries))


def test_a_word_counts_where_a_skill_uses_it_incidentally_and_not_as_its_own() -> None:
    cases = [
        _case("zyxo-tool", "Edits zyxo files.", ("open the zyxo file", True)),
        _case("chart", "Draws charts from zyxo data.", ("a zyxo chart", True)),
        _case("mail", "Sends mail.", ("mail the zyxo report", True), ("scan it", False)),
        _case("scan", "Scans receipts.", ("scan the receipt later", False), ("scan this", False)),
    ]
    counts, files = make_common.spread(cases)
    assert files == 4
    assert counts["zyxo"] == 1  # the mail skill's only: the other two name or describe it
    assert counts["file"] == 1 and counts["scan"] == 1  # the scan skill's own word: not there


def test_format_and_tool_names_are_rare_and_request_words_everyday() -> None:
    common = lexicon.common_words()
    assert "pdf" not in common and "xlsx" not in common and "slack" not in common
    assert common["make"] == lexicon.BANDS[0] and "file" in common and "implement" in common


def test_a_truncated_or_mangled_list_is_refused_naming_the_file() -> None:
    good = "# head\nband 1\nfile code\nband 2\nfix\nband 3\nrepo\n"
    assert lexicon.parse_groups(good, "x.txt")["band 2"] == frozenset({"fix"})
    for text in ("", "# only a header\n", "band 1\nfile\nband 2\nfix\n", "file code\n" + good):
        with pytest.raises(ValueError, match=r"^x\.txt"):
            lexicon.parse_groups(text, "x.txt")


def test_a_truncated_or_mangled_background_is_refused_naming_the_file() -> None:
    assert background.parse_background("# h\n3\nfoo:2 bar:1\n", "b.txt") == (
        3,
        {"foo": 2, "bar": 1},
    )
    for text in ("", "# h\n", "# h\n3\n", "# h\n3\nfoo:2 bar:", "# h\nabc\nfoo:2", "3\nfoo"):
        with pytest.raises(ValueError, match=r"^b\.txt"):
            background.parse_background(text, "b.txt")
