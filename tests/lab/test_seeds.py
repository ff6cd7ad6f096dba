"""Seeds no pattern survives: what a seeded variant renames shares no shape across seeds, and a
hand-in that special-cases everything seeds 0-99 produce scores its honest code on other seeds.
The oracle is the self-test's points for the file (the grader's scale, tests/lab/test_scale.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mca.cli.selftest import parser, run
from mca.lab.coined import SHIPPED
from mca.lab.defaults import FIRST_SEED_FLOOR
from mca.lab.grade import Plan
from mca.lab.variant import Names, names_for
from tests.conftest import REPO
from tests.lab.answers import honest, seed_table

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
SEEN = [names_for(s) for s in range(100)]  # what seed_table() answers from
UNSEEN = [names_for(s) for s in range(1000, 1100)]


def _common_prefix(words: list[str]) -> str:
    out = ""
    for chars in zip(*words, strict=False):
        if len(set(chars)) > 1:
            break
        out += chars[0]
    return out


def _common_suffix(words: list[str]) -> str:
    return _common_prefix([w[::-1] for w in words])[::-1]


def test_no_shape_is_shared_by_every_seed() -> None:
    seeded = SEEN[1:]
    for field in ("calc", "archived", "testing", "release", "broken", "script", "domain", "op"):
        values = [getattr(n, field) for n in seeded]
        assert len(set(values)) == len(values), field  # no two seeds alike
        assert _common_prefix(values) == "", field
        assert _common_suffix(values) in ("", ".mjs"), field
    assert _common_prefix([n.calc_file for n in seeded]) == ""
    assert len({n.calc_file.rsplit(".", 1)[1] for n in seeded}) >= 8  # extensions vary
    assert len({n.calc_file.count("/") for n in seeded}) == 3  # so does the depth
    hiders = [h for n in seeded for h in n.hiders]
    assert len(set(hiders)) == len(hiders)  # no word list to read off
    # no word is in every check sentence of a kind (the shipped "what about the ... one")
    for field in ("divide_sentence", "path_sentence", "trigger_sentence"):
        words = [set(getattr(n, field).split()) for n in seeded]
        assert not set.intersection(*words), field
    assert not set.intersection(*(set(n.hider_sentences[0].split()) for n in seeded))
    # and nothing it renames shares a word with the shipped lab
    for n in seeded:
        for name in (n.calc, n.archived, n.testing, n.release, n.broken, n.domain, n.trigger):
            assert not set(name.replace("-", " ").split()) & SHIPPED, name


def test_the_shipped_lab_is_seed_zero() -> None:
    assert names_for(0) == Names()
    assert names_for(7) == names_for(7)  # and a seed is the same variant every time


def _points(path: Path, capsys: pytest.CaptureFixture[str], seeds: list[int]) -> dict[str, int]:
    flags = [x for s in seeds for x in ("--seed", str(s))]
    run(parser().parse_args(["--lab", str(path), "--check-seconds", "10", "--json", *flags]), {})
    report = json.loads(capsys.readouterr().out)
    by_ex: dict[str, int] = {}
    for check in report["checks"]:
        ex = (check["exercise"] or "none")[0]
        by_ex[ex] = by_ex.get(ex, 0) + (check["points"] if check["passed"] else 0)
    return by_ex


@pytest.mark.slow
def test_a_table_of_seeds_0_to_99_scores_nothing_on_other_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "exercises.py"
    path.write_text(
        STARTER + honest("split") + honest("validate") + honest("script") + seed_table()
    )
    seen = _points(path, capsys, [0, 5, 99])
    assert (seen["4"], seen["5"]) == (2, 2)  # the table does answer the seeds it was made from
    unseen = _points(path, capsys, [0, 1000, 1001])
    assert (unseen["1"], unseen["2"], unseen["3"]) == (2, 2, 2)
    assert (unseen["4"], unseen["5"]) == (0, 0)  # its honest code: the starter's


def test_a_grade_runs_seeds_no_student_could_try_first(tmp_path: Path) -> None:
    plans = [Plan(REPO, tmp_path) for _ in range(3)]
    for plan in plans:
        assert plan.seed_list == [0, plan.first_seed] and plan.first_seed >= FIRST_SEED_FLOOR
    assert len({p.first_seed for p in plans}) == 3  # drawn afresh by every run
    assert Plan(REPO, tmp_path, seeds=2, first_seed=5).seed_list == [0, 5, 6]  # or repeated
