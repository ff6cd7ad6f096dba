"""The judgment per script family (issue 35, item 2): false activations on the dev split stay
within the 10% target in each family, not only overall where English dominates; CJK near-misses
do not sit on the line; and the causes found are fixed where they were (training and one
feature), each checked on its own. Dev data only, deterministic, about a second."""

from __future__ import annotations

import pytest

from bench import families, judge_data, train_judge
from bench.triggers import Case, mca_judge, run_single, scored
from mca.skills import judgment
from mca.skills.relevance import make_doc
from mca.skills.script import CJK, LATIN, family

pytestmark = pytest.mark.xdist_group("families")  # its session fixture is built on one worker

MAX_FA = 0.10  # the target, in every family
CUSHION = 0.5  # logits: dev's CJK near-misses were few (27 until session 41, 284 since), so
# the rate is checked with a margin


@pytest.fixture(scope="session")  # once a run: xdist may put other tests between its own
def dev() -> list[Case]:
    return judge_data.dev_cases()


@pytest.mark.parametrize("name", [LATIN, CJK])
def test_dev_false_activations_within_each_family_meet_the_target(
    dev: list[Case], name: str
) -> None:
    score = run_single(families.of_family(dev, name), mca_judge)
    assert score.fp + score.tn >= 20, "too few should-not queries for a rate"  # not vacuous
    assert score.fp / (score.fp + score.tn) <= MAX_FA, [m["query"] for m in score.misses]


def test_cjk_near_misses_of_dev_stay_below_the_line_with_a_cushion(
    dev: list[Case],
) -> None:
    # With the session-39 weights this was 4 of 27 (14.8%): its CJK near-misses sat within
    # 0.25 logit of firing, in-sample 0% yet one shift from the 32% seen on outside evals.
    rows = scored(families.of_family(dev, CJK))
    negatives = [z for row in rows for z, y in row if not y]
    near = [z for z in negatives if z > -CUSHION]
    assert len(negatives) >= 20
    assert len(near) / len(negatives) <= MAX_FA, near


def test_training_balances_the_labels_within_each_family() -> None:
    # dev's CJK queries are mostly should-trigger and its Latin ones mostly not: balanced only
    # overall, a model learns "written in CJK" as evidence for a hit
    x = (1.0,) * len(judgment.FEATURES)
    data = [(x, 1, CJK)] * 3 + [(x, 0, CJK)] + [(x, 1, LATIN)] * 2 + [(x, 0, LATIN)] * 6
    w = train_judge.balance(data)
    total = {(f, y): w[(f, y)] * sum(1 for _, yy, ff in data if (ff, yy) == (f, y)) for f, y in w}
    assert total[(CJK, 1)] == pytest.approx(total[(CJK, 0)])
    assert total[(LATIN, 1)] == pytest.approx(total[(LATIN, 0)])
    assert total[(CJK, 0)] + total[(CJK, 1)] == pytest.approx(4 / 12)  # a family's share
    assert sum(total.values()) == pytest.approx(1.0)


def test_a_family_with_one_label_keeps_its_share() -> None:
    x = (1.0,) * len(judgment.FEATURES)
    w = train_judge.balance([(x, 1, CJK), (x, 1, LATIN), (x, 0, LATIN)])
    assert w[(CJK, 1)] == pytest.approx(1 / 3)


def _unspaced(description: str, sentence: str) -> tuple[float, float]:
    """(the sentence's CJK share, the unspaced feature) for a one-skill index."""
    index = judgment.default_model().index([make_doc("notes", description)])
    q = judgment.query(index, sentence)
    (m,) = [m for m in index.match(q.terms) if m.skill == 0]
    return q.unspaced, judgment.features(m, index, q)[judgment.FEATURES.index("unspaced")]


def test_a_match_only_the_glossary_translated_gets_no_cjk_weight() -> None:
    # 会议 is "meeting", but this asks to design a booking system's database
    share, x = _unspaced("Write meeting notes from a transcript.", "会议室预订系统的数据库怎么设计")
    assert family("会议室预订系统的数据库怎么设计") == CJK
    assert share > 0.5 and x == 0.0


def test_a_word_the_cjk_sentence_wrote_keeps_its_cjk_weight() -> None:
    share, x = _unspaced("Write meeting notes in Notion.", "把会议内容整理到 Notion 里")
    assert 0.0 < x < share  # notion was written, meeting translated
    share, x = _unspaced("Write notes in Notion.", "把内容整理到 Notion 里")
    assert x == share > 0.0
